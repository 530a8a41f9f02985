"""Reads of the integrations app: who may see and install what, and where events go."""

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Exists, Max, OuterRef, Q, QuerySet
from django.urls import reverse
from django.utils.http import urlencode

from docplatform.access import member_organization_ids
from docplatform.events.models import Delivery
from docplatform.models import Site, Space, hash_token
from docplatform.queries import Prepared, stand_in

from . import configuration as config_rules
from .models import (
    ComponentState,
    Installation,
    Integration,
    IntegrationAsset,
    IntegrationLog,
    IntegrationVersion,
    ListingReview,
    OAuthState,
)
from .policies import (
    is_paused,
    visible_integrations_q,
)


def json_list_has(field: str, value: str) -> Q:
    """Rows whose JSON list ``field`` holds the string ``value``.

    JSON ``contains`` is not available on SQLite, so this matches the quoted element in the
    JSON text, which works on SQLite and PostgreSQL alike (the values are plain slugs).
    """
    return Q(**{f"{field}__icontains": f'"{value}"'})


def integrations_visible_to(user, *, install_token: str | None = None) -> QuerySet:
    """Public integrations, every integration of the user's organizations, and an unlisted one
    whose install link token is given."""
    visible = visible_integrations_q(member_organization_ids(user), install_token)
    return Integration.objects.filter(visible, released_version__isnull=False)


def install_link_url(integration: Integration) -> str | None:
    """The shared install link of an unlisted integration (its owners hand it out: the
    marketplace shows it on the integration's page to them, ``publish`` prints it); None for
    another visibility."""
    if integration.visibility != Integration.Visibility.UNLISTED:
        return None
    path = reverse("marketplace:install-link", args=[integration.name])
    return f"{settings.PLATFORM_URL}{path}?{urlencode({'token': integration.install_link_token})}"


def listing_review_of(version) -> ListingReview | None:
    """The review of a public version's listing (None: it needs none)."""
    return ListingReview.objects.filter(version=version).first()


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
    """Installations of the user's organizations (any role reads them): nobody sees another
    organization's."""
    return Installation.objects.filter(organization_id__in=member_organization_ids(user))


def integration_installations(integration: Integration) -> list[Installation]:
    """Every installation of ``integration``, in every organization, but those paused
    (``policies.is_paused``: an installation token of theirs is refused too): what its
    integration token acts on."""
    installations = Installation.objects.filter(integration=integration).select_related(
        "integration", "organization", "parent"
    )
    return [installation for installation in installations if not is_paused(installation)]


def integration_version_by_api_token(raw: str) -> IntegrationVersion | None:
    """The version an integration token belongs to, while that version runs: the
    integration's released version or its development version. A version released (or put on
    the development channel) after it takes its place, and its token stops working at that
    moment; None for that, and for an unknown token."""
    version = (
        IntegrationVersion.objects.select_related("integration")
        .defer("bundle", "listing")
        .filter(api_token_hash=hash_token(raw))
        .first()
    )
    if version is None:
        return None
    integration = version.integration
    if version.pk not in (integration.released_version_id, integration.development_version_id):
        return None
    return version


def published_integration(name: str) -> Integration | None:
    """The integration named ``name`` once it has a released version, whoever may see it."""
    return Integration.objects.filter(name=name, released_version__isnull=False).first()


def installation_by_api_token(raw: str) -> Installation | None:
    """The installation an installation token belongs to, or None when the token is unknown
    or the installation (or the organization installation above it) is paused."""
    installation = (
        Installation.objects.select_related("integration", "organization", "parent")
        .filter(api_token_hash=hash_token(raw))
        .first()
    )
    if installation is None or is_paused(installation):
        return None
    return installation


def spaces_reachable_by(installation: Installation) -> QuerySet:
    """The spaces an installation token reaches: a space installation its space, a site
    installation the spaces its site publishes, an organization installation the spaces its
    space selection covers."""
    if installation.level == Installation.Level.SPACE:
        return Space.objects.filter(pk=installation.space_id)
    if installation.level == Installation.Level.SITE:
        return Space.objects.filter(sites=installation.site_id)
    spaces = Space.objects.filter(organization_id=installation.organization_id)
    if installation.space_selection == Installation.SpaceSelection.SELECTED:
        spaces = spaces.filter(selected_by_installations=installation)
    return spaces


def sites_reachable_by(installation: Installation) -> QuerySet:
    """The sites an installation token reaches: a site installation its site, an organization
    installation the sites publishing a space it covers (all of them for all spaces)."""
    if installation.level == Installation.Level.SITE:
        return Site.objects.filter(pk=installation.site_id)
    if installation.level == Installation.Level.SPACE:
        return Site.objects.none()
    sites = Site.objects.filter(organization_id=installation.organization_id)
    if installation.space_selection == Installation.SpaceSelection.SELECTED:
        sites = sites.filter(spaces__selected_by_installations=installation).distinct()
    return sites


def oauth_connections(installation: Installation) -> dict[str, OAuthState]:
    """For each connected button property, the state that connected it: who pressed Connect
    (``issued_to``) and when the flow completed (``consumed_at``)."""
    connected = set(installation.credentials or {})
    if not connected:
        return {}
    states = (
        OAuthState.objects.filter(
            installation=installation, property_name__in=connected, consumed_at__isnull=False
        )
        .select_related("issued_to")
        .order_by("-consumed_at")
    )
    latest = {}
    for state in states:
        latest.setdefault(state.property_name, state)
    return latest


def shown_configuration(installation: Installation) -> dict:
    """The configuration as shown to people and tokens: a button property's credentials are
    never shown, only that it is connected, by whom and when."""
    connections = oauth_connections(installation)
    connected = {}
    for name in installation.credentials or {}:
        connected[name] = {"connected": True}
        state = connections.get(name)
        if state is not None:
            connected[name]["connectedBy"] = state.issued_to.username if state.issued_to else None
            connected[name]["connectedAt"] = state.consumed_at.isoformat()
    return {**installation.configuration, **connected}


def deliveries_visible_to(user) -> QuerySet:
    """Deliveries to the installations of the user's organizations (who may read them is the
    rule of ``Action.READ_LOGS``: its admins)."""
    return Delivery.objects.filter(installation__organization_id__in=member_organization_ids(user))


def block_ids(integration: Integration) -> list[str]:
    """The components of the integration's quick insert menu entries (manifest ``blocks``)."""
    return [block["id"] for block in integration.blocks]


def configuration_screen_ids(integration: Integration) -> set[str]:
    """The components that render configuration screens (configurations' ``componentId``)."""
    return {
        definition["componentId"]
        for definition in integration.configurations.values()
        if "componentId" in definition
    }


def manifest_component_ids(integration: Integration) -> set[str]:
    """The components the manifest names: its blocks and its configuration screens."""
    return set(block_ids(integration)) | configuration_screen_ids(integration)


def inserted_blocks(installation: Installation) -> QuerySet:
    """The block instances inserted for an installation, newest first."""
    return (
        ComponentState.objects.filter(
            installation=installation, component_id__in=block_ids(installation.integration)
        )
        .exclude(instance=ComponentState.CONFIGURATION_INSTANCE)
        .order_by("-created_at", "-id")
    )


def oauth_paths(integration: Integration) -> set[str]:
    """The paths below a public endpoint where the integration's OAuth flows run: each button
    property's ``callback_url``, and ``/oauth``, the SDK's default redirect."""
    paths = {"/oauth"}
    for definition in (integration.configurations or {}).values():
        for prop in config_rules.properties_of(definition).values():
            if prop.get("type") == "button" and prop.get("callback_url"):
                paths.add(urlsplit(prop["callback_url"]).path.rstrip("/") or "/")
    return paths


# --- Integration logs -----------------------------------------------------------------------


def integration_logs(integration: Integration, installation: Installation | None = None):
    """The log lines of every installation of an integration (its owners' view), or of one
    installation and those under it."""
    lines = IntegrationLog.objects.filter(integration=integration)
    return lines if installation is None else lines.filter(_of_installation(installation))


def installation_logs(installation: Installation) -> QuerySet:
    """An installation's log lines and those of the space and site installations under it
    (its organization's admins' view)."""
    return IntegrationLog.objects.filter(_of_installation(installation))


def _of_installation(installation: Installation) -> Q:
    """The installation and the space and site installations under it (a few ids: the lines
    are then read through their installation index)."""
    family = Installation.objects.filter(Q(pk=installation.pk) | Q(parent=installation))
    return Q(installation__in=family.values("pk"))


@dataclass(frozen=True)
class LogPage:
    lines: list[IntegrationLog]
    next: int


def log_page(
    lines: QuerySet,
    *,
    after: int | None = None,
    since=None,
    kind: str | None = None,
    outcome: str | None = None,
    limit: int = 100,
) -> LogPage:
    """Lines oldest first: those after the cursor ``after`` (the follow mode), else from
    ``since`` on, else the latest ``limit``. ``next`` is the cursor to follow with: the last
    line's, or ``after`` when nothing is new, or the newest line's when nothing matched."""
    matching = lines
    if since is not None:
        matching = matching.filter(time__gte=since)
    if kind:
        matching = matching.filter(kind=kind)
    if outcome:
        matching = matching.filter(outcome=outcome)
    matching = matching.select_related("integration").defer(
        "integration__description", "integration__configurations", "integration__summary"
    )
    if after is not None:
        page = list(matching.filter(pk__gt=after).order_by("pk")[:limit])
    elif since is not None:
        page = list(matching.order_by("pk")[:limit])
    else:
        page = list(matching.order_by("-pk")[:limit])[::-1]
    if page:
        return LogPage(page, page[-1].pk)
    if after is not None:
        return LogPage([], after)
    return LogPage([], lines.aggregate(newest=Max("pk"))["newest"] or 0)


_COVERED_SPACE, _COVERING_ORGANIZATION = stand_in("space"), stand_in("organization")
_covering_queries: dict[str, Prepared] = {}


def installations_covering_space(space: Space) -> list[Installation]:
    """The installations whose integration reaches ``space``: its space installations, and its
    organization's installations whose space selection covers it (space installations
    first), with their integration, the versions it may run and their organization installation.
    Compiled once per database: a page with blocks asks at every read."""
    key = Installation.objects.db
    if key not in _covering_queries:
        _covering_queries[key] = Prepared(_covering_query())
    return _covering_queries[key].instances(
        {_COVERED_SPACE: space.pk, _COVERING_ORGANIZATION: space.organization_id}
    )


def _covering_query() -> QuerySet:
    selected = Installation.selected_spaces.through.objects.filter(
        installation_id=OuterRef("pk"), space_id=_COVERED_SPACE
    )
    organization_wide = Q(
        level=Installation.Level.ORGANIZATION, organization_id=_COVERING_ORGANIZATION
    ) & (Q(space_selection=Installation.SpaceSelection.ALL) | Exists(selected))
    return (
        Installation.objects.filter(
            Q(level=Installation.Level.SPACE, space_id=_COVERED_SPACE) | organization_wide
        )
        .select_related(
            "integration__released_version",
            "integration__development_version",
            "integration__shared_version",
            "parent",
        )
        .defer(
            "integration__summary",
            *(
                f"integration__{version}__{field}"
                for version in ("released_version", "development_version", "shared_version")
                for field in ("bundle", "manifest", "secrets", "listing")
            ),
            "credentials",
            "api_token",
            "parent__credentials",
            "parent__api_token",
        )
        .order_by("integration__title", "-level")
    )


# --- Lookups by id within what the caller already holds ----------------------------------


def organization_spaces_with_ids(organization, space_ids) -> list[Space]:
    """The organization's spaces among ``space_ids`` (others are not returned)."""
    return list(Space.objects.filter(organization=organization, pk__in=set(space_ids)))


def organization_integration(organization, name: str) -> Integration | None:
    """The organization's own integration named ``name``."""
    return Integration.objects.filter(name=name, organization=organization).first()


def integration_installation(integration: Integration, installation_id) -> Installation | None:
    """The integration's installation with this id (None: not one of its installations)."""
    return Installation.objects.filter(pk=installation_id, integration=integration).first()


def latest_installations(integration: Integration, limit: int) -> list[Installation]:
    """The integration's newest installations, with where they are."""
    return list(
        integration.installations.select_related("organization", "space", "site").order_by(
            "-created_at"
        )[:limit]
    )


def icon_ids(integrations) -> dict[str, int]:
    """Integration id -> the id of its released version's icon, for those that have one."""
    rows = IntegrationAsset.objects.filter(
        kind=IntegrationAsset.Kind.ICON,
        version_id__in=[integration.released_version_id for integration in integrations],
    ).values_list("version__integration_id", "pk")
    return dict(rows)
