"""Reads of the integrations app: who may see and install what, and where events go."""

from django.db.models import Exists, OuterRef, Q, QuerySet

from docplatform.events import EVENT_SCOPES, SPACE_EVENTS
from docplatform.models import Membership

from .models import Installation, Integration


def json_list_has(field: str, value: str) -> Q:
    """Rows whose JSON list ``field`` holds the string ``value``.

    JSON ``contains`` is not available on SQLite, so this matches the quoted element in the
    JSON text, which works on SQLite and PostgreSQL alike (the values are plain slugs).
    """
    return Q(**{f"{field}__icontains": f'"{value}"'})


def user_organization_ids(user) -> QuerySet:
    if not user.is_authenticated:
        return Membership.objects.none().values("organization_id")
    return Membership.objects.filter(user=user).values("organization_id")


def integrations_visible_to(user, *, install_token: str | None = None) -> QuerySet:
    """Public integrations, every integration of the user's organizations, and an unlisted one
    whose install link token is given."""
    visible = Q(visibility=Integration.Visibility.PUBLIC) | Q(
        organization_id__in=user_organization_ids(user)
    )
    if install_token:
        visible |= Q(visibility=Integration.Visibility.UNLISTED, install_link_token=install_token)
    return Integration.objects.filter(visible, latest_version__isnull=False)


def integration_catalogue(
    user, *, category: str | None = None, search: str | None = None
) -> QuerySet:
    integrations = integrations_visible_to(user).select_related("organization")
    if category:
        integrations = integrations.filter(json_list_has("categories", category))
    if search:
        integrations = integrations.filter(
            Q(name__icontains=search)
            | Q(title__icontains=search)
            | Q(description__icontains=search)
        )
    return integrations


def installations_visible_to(user) -> QuerySet:
    """Installations of the user's organizations: nobody sees another organization's."""
    return Installation.objects.filter(organization_id__in=user_organization_ids(user))


def event_recipients(event) -> list[Installation]:
    """The installations an event goes to (DESIGN.md, "where an event goes").

    The space's (or site's) installations and the organization installations whose space
    selection covers it, when active (and their organization installation too), not paused,
    and granted the event's scope. An integration installed both in the space and in the
    organization receives the event once, at the space installation, whose status decides.
    One query, whatever the number of installations.
    """
    scope = EVENT_SCOPES[event.type]
    org_level = Q(level=Installation.Level.ORGANIZATION, organization_id=event.organization_id)
    selected = Installation.selected_spaces.through.objects.filter(installation_id=OuterRef("pk"))
    if event.type in SPACE_EVENTS:
        local = Q(level=Installation.Level.SPACE, space_id=event.space_id)
        selected = selected.filter(space_id=event.space_id)
    else:
        local = Q(level=Installation.Level.SITE, site_id=event.site_id)
        selected = selected.filter(space__sites=event.site_id)
    covered = Q(space_selection=Installation.SpaceSelection.ALL) | Q(Exists(selected))
    candidates = Installation.objects.filter(local | (org_level & covered)).select_related(
        "integration", "parent"
    )
    if scope is not None:
        candidates = candidates.filter(json_list_has("integration__scopes", scope))

    installed_locally = set()
    local_rows, org_rows = [], []
    for installation in candidates:
        if installation.level == Installation.Level.ORGANIZATION:
            org_rows.append(installation)
        else:
            installed_locally.add(installation.integration_id)
            local_rows.append(installation)
    recipients = [row for row in local_rows if is_receiving(row)]
    recipients += [
        row for row in org_rows if row.integration_id not in installed_locally and is_receiving(row)
    ]
    return recipients


def is_receiving(installation: Installation) -> bool:
    """Active, and under an active organization installation when it is a space or site one."""
    active = Installation.Status.ACTIVE
    return installation.status == active and (
        installation.parent is None or installation.parent.status == active
    )
