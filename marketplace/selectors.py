"""Reads of the marketplace pages, always for one organization the user belongs to."""

from django.db.models import Count, Q, QuerySet

from docplatform import access
from docplatform.access import Action
from docplatform.events.models import Delivery
from docplatform.events.registry import has_own_consumer
from docplatform.models import Organization, Site, Space
from integrations.configuration import properties_of
from integrations.models import Installation, Integration, IntegrationAsset
from integrations.policies import (
    definition_for_level,
    effective_status,
    has_code,
    installable_levels,
    may_act,
    scopes_awaiting_approval,
    visible_integrations_q,
)
from integrations.selectors import (
    install_link_url,
    installations_visible_to,
    integration_catalogue,
    integrations_visible_to,
    listing_review_of,
)

RECENT_DELIVERIES = 20


def organizations_of(user) -> QuerySet:
    """The user's organizations, each with the user's ``role`` in it."""
    return access.organizations_of(user)


def catalogue_for(
    user,
    organization: Organization,
    *,
    category: str = "",
    search: str = "",
    with_blocks: bool = False,
) -> QuerySet:
    """What ``organization`` may install, as ``user`` sees it; ``with_blocks``: only those
    whose released version offers quick insert blocks."""
    integrations = integration_catalogue(user, category=category, search=search).filter(
        visible_integrations_q([organization.pk])
    )
    return integrations.exclude(blocks=[]) if with_blocks else integrations


def integration_for(
    user, organization: Organization, name: str, *, install_token: str = ""
) -> Integration | None:
    """An integration ``organization`` may install; an unlisted one of another organization
    only with its install link token."""
    installable = visible_integrations_q([organization.pk], install_token or None)
    return (
        integrations_visible_to(user, install_token=install_token or None)
        .filter(installable, name=name)
        .select_related("organization", "released_version", "shared_version")
        .first()
    )


def versions_for_owner(user, integration: Integration) -> list | None:
    """The integration's versions, newest first, for an admin of its organization (who may
    make an older released one current again); None for anyone else."""
    if not may_act(user, Action.PUBLISH, integration):
        return None
    return list(
        integration.versions.only("integration_id", "number", "channel", "created_at").order_by(
            "-number"
        )
    )


def owners_listing(user, integration: Integration) -> dict:
    """What the integration's page shows its owners (the admins of its organization) of how
    it is offered: an unlisted one's install link, a public one's review of its released
    version (``listing_review``: pending, approved or rejected with the reason). Empty for
    anyone else."""
    if not may_act(user, Action.PUBLISH, integration):
        return {}
    return {
        "install_link": install_link_url(integration),
        "listing_review": listing_review_of(integration.released_version),
    }


def install_levels(integration: Integration) -> set[str]:
    """Where the integration may be installed: organization, space, site."""
    return installable_levels(integration)


def integration_assets(integration: Integration) -> dict:
    """The released version's icon (or None) and preview images, without their content."""
    assets = list(
        IntegrationAsset.objects.filter(version_id=integration.released_version_id).defer("content")
    )
    return {
        "icon": next((a for a in assets if a.kind == IntegrationAsset.Kind.ICON), None),
        "previews": [a for a in assets if a.kind == IntegrationAsset.Kind.PREVIEW],
    }


def asset_visible_to(user, asset_id: int, *, install_token: str = "") -> IntegrationAsset | None:
    """An image of an integration the user may see, or one installed in their organizations."""
    visible = integrations_visible_to(user, install_token=install_token or None).values("pk")
    installed = installations_visible_to(user).values("integration_id")
    return (
        IntegrationAsset.objects.filter(pk=asset_id)
        .filter(Q(version__integration__in=visible) | Q(version__integration__in=installed))
        .first()
    )


def installations_of(user, organization: Organization) -> QuerySet:
    return (
        installations_visible_to(user)
        .filter(organization=organization)
        .select_related("integration__organization", "space", "site", "parent", "created_by")
        .order_by("integration__title", "level", "space__title", "site__title")
    )


def installations_listed(user, organization: Organization) -> list[Installation]:
    """The Installations page's rows: every installation the user sees, less an organization
    installation that only holds the space or site ones made by installing into a space or a
    site (its selection is theirs, it has nothing of its own to configure or approve, nor a
    status to tell): its children stand for it."""
    installations = list(installations_of(user, organization))
    children: dict[str, list[Installation]] = {}
    for installation in installations:
        if installation.parent_id:
            children.setdefault(installation.parent_id, []).append(installation)
    return [
        installation
        for installation in installations
        if not _only_holds(installation, children.get(installation.pk, []))
    ]


def _only_holds(installation: Installation, children: list[Installation]) -> bool:
    if not children or installation.space_selection != Installation.SpaceSelection.SELECTED:
        return False
    if properties_of(definition_for_level(installation.integration, "organization")):
        return False
    if scopes_awaiting_approval(installation) or effective_status(installation).status != "active":
        return False
    their_spaces = {child.space_id for child in children if child.space_id}
    return set(installation.selected_spaces.values_list("pk", flat=True)) <= their_spaces


def installation_for(user, organization: Organization, installation_id: str):
    return installations_of(user, organization).filter(pk=installation_id).first()


def organization_installation_statuses(organization: Organization, integration_ids) -> dict:
    """Integration id -> effective status of its organization-level installation, when
    installed (``policies.effective_status``)."""
    installations = Installation.objects.filter(
        organization=organization,
        level=Installation.Level.ORGANIZATION,
        integration_id__in=list(integration_ids),
    ).select_related("integration")
    return {
        installation.integration_id: effective_status(installation)
        for installation in installations
    }


def integration_installations(integration: Integration, organization: Organization) -> QuerySet:
    return Installation.objects.filter(
        integration=integration, organization=organization
    ).select_related("space", "site")


def spaces_without(integration: Integration, organization: Organization) -> QuerySet:
    """The organization's spaces the integration is not installed in yet."""
    return Space.objects.filter(organization=organization).exclude(
        installations__integration=integration
    )


def sites_without(integration: Integration, organization: Organization) -> QuerySet:
    return Site.objects.filter(organization=organization).exclude(
        installations__integration=integration
    )


def organization_spaces(organization: Organization) -> QuerySet:
    return Space.objects.filter(organization=organization)


def recent_deliveries(installation: Installation) -> QuerySet:
    """The installation's latest deliveries, newest first, with their (webhook) attempts."""
    deliveries = Delivery.objects.filter(installation=installation).select_related("event")
    return deliveries.prefetch_related("attempts_log")[:RECENT_DELIVERIES]


def installation_delivery(installation: Installation, delivery_id: int) -> Delivery | None:
    return Delivery.objects.filter(installation=installation, pk=delivery_id).first()


def organizations_overview():
    """Every organization with how many members, spaces, sites and installations it has: what
    an operator (staff) sees in the marketplace, read only."""
    return (
        access.organization_member_count(Organization.objects.all())
        .annotate(
            space_count=Count("spaces", distinct=True),
            site_count=Count("sites", distinct=True),
            installation_count=Count("installations", distinct=True),
        )
        .order_by("title")
    )


def runs_no_code(integration: Integration) -> bool:
    """Whether installing ``integration`` makes nothing happen: it has no code to run on events
    and no app sends its deliveries (the webhook integration has one), so an installation only
    keeps its configuration."""
    return not has_code(integration.latest_version) and not has_own_consumer(integration.name)
