"""Installing integrations and their setup flow: install, configure, pause, resume, uninstall.

Every entry point (REST API, admin, command line) goes through these functions, so the
visibility rules and the setup flow have one home. They act for the caller's own
organization only; an integration or installation the caller may not see raises Http404.
"""

import secrets

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404

from docplatform import events
from docplatform.models import Membership, Site, Space, hash_token

from .. import configuration as config_rules
from ..models import Installation, Integration, new_install_link_token
from ..policies import scopes_granted_at_install

TARGET_LEVELS = {
    "all": {"organization", "space", "site"},
    "organization": {"organization"},
    "space": {"organization", "space"},
    "site": {"organization", "site"},
}


def _require_member(user, organization) -> None:
    if not (
        user.is_authenticated
        and Membership.objects.filter(user=user, organization=organization).exists()
    ):
        raise Http404("No such organization.")


def _require_installable(integration: Integration, organization, install_token) -> None:
    """The specification's visibility rules, for the installing organization."""
    if integration.organization_id == organization.pk:
        return
    if integration.visibility == Integration.Visibility.PUBLIC:
        return
    if (
        integration.visibility == Integration.Visibility.UNLISTED
        and install_token
        and secrets.compare_digest(install_token, integration.install_link_token)
    ):
        return
    raise Http404("No such integration.")


def _new_installation(configuration: dict | None, **fields) -> Installation:
    """Save a new installation: defaults, then the given values, then the setup flow."""
    raw = Installation.TOKEN_PREFIX + secrets.token_urlsafe(32)
    installation = Installation(api_token=raw, api_token_hash=hash_token(raw), **fields)
    installation.granted_scopes = scopes_granted_at_install(installation)
    installation.configuration = config_rules.defaults(_definition(installation))
    if configuration:
        _apply_changes(installation, configuration)
    _evaluate(installation)
    try:
        with transaction.atomic():
            installation.save()
    except IntegrityError as exc:
        name, where = installation.integration.name, installation.level
        raise ValidationError(
            {"integration": [f"{name} is already installed in this {where}"]}
        ) from exc
    return installation


def _check_selection(space_selection: str, spaces: list, organization_id: str) -> None:
    if space_selection not in Installation.SpaceSelection.values:
        raise ValidationError({"space_selection": ["must be 'all' or 'selected'"]})
    if any(space.organization_id != organization_id for space in spaces):
        raise ValidationError({"selected_spaces": ["every space must belong to the organization"]})


def _definition(installation: Installation) -> dict:
    return config_rules.definition_for(
        installation.integration.configurations, installation.configuration_level
    )


def _evaluate(installation: Installation) -> None:
    """Validate the whole configuration: ``active`` when it passes, else ``pending``."""
    reasons = config_rules.validation_reasons(
        installation.integration.name,
        installation.configuration_level,
        _definition(installation),
        installation.effective_configuration,
    )
    installation.status_reasons = reasons
    if installation.status != Installation.Status.PAUSED:
        installation.status = Installation.Status.PENDING if reasons else Installation.Status.ACTIVE


def _apply_changes(
    installation: Installation, changes: dict, *, oauth_property: str | None = None
) -> list[str]:
    """Check and merge changed values; refuses (ValidationError) before writing anything.

    A ``button`` property (OAuth credentials) is written only by the OAuth flow, which names
    it as ``oauth_property``: any other change of one is refused.
    """
    if not isinstance(changes, dict):
        raise ValidationError({"configuration": ["must be an object of property values"]})
    definition = _definition(installation)
    buttons = config_rules.button_properties(definition)
    problems = {
        name: "is set only by connecting the account (the Connect button's OAuth flow), "
        "and removed by Disconnect"
        for name in changes
        if name in buttons and name != oauth_property
    }
    problems = problems or config_rules.change_problems(definition, changes)
    if problems:
        raise ValidationError(
            {f"configuration.{path}": [message] for path, message in problems.items()}
        )
    configuration = dict(installation.configuration)
    credentials = dict(installation.credentials or {})
    for name, value in changes.items():
        target = credentials if name in buttons else configuration
        if value is None:
            target.pop(name, None)
        else:
            target[name] = value
    installation.configuration = configuration
    installation.credentials = credentials
    return sorted(changes)


def _setup_payload(installation: Installation, **fields) -> dict:
    payload = {"status": installation.status, **fields}
    if installation.space_id:
        payload["spaceId"] = installation.space_id
    if installation.site_id:
        payload["siteId"] = installation.site_id
    return payload


def _fire_setup(event_type: str, installation: Installation, **fields) -> None:
    events.fire(
        event_type,
        organization=installation.organization,
        space=installation.space,
        site=installation.site,
        installation=installation,
        payload=_setup_payload(installation, **fields),
    )


@transaction.atomic
def installation_create(
    *,
    user,
    integration: Integration,
    organization,
    space: Space | None = None,
    site: Site | None = None,
    configuration: dict | None = None,
    space_selection: str | None = None,
    selected_spaces=(),
    install_token: str | None = None,
) -> Installation:
    """Install ``integration`` for ``organization`` (and into ``space`` or ``site``)."""
    _require_member(user, organization)
    _require_installable(integration, organization, install_token)
    if space is not None and site is not None:
        raise ValidationError({"site": ["install into a space or a site, not both"]})
    if space is not None and space.organization_id != organization.pk:
        raise Http404("No such space.")
    if site is not None and site.organization_id != organization.pk:
        raise Http404("No such site.")
    level = "space" if space else "site" if site else "organization"
    if level not in TARGET_LEVELS.get(integration.target, TARGET_LEVELS["all"]):
        field = "organization" if level == "organization" else level
        raise ValidationError(
            {field: [f"{integration.name} installs into: {integration.target} (not a {level})"]}
        )

    org_installation = Installation.objects.filter(
        integration=integration, organization=organization, level="organization"
    ).first()
    if level == "organization":
        if org_installation is not None:
            raise ValidationError(
                {"integration": [f"{integration.name} is already installed in this organization"]}
            )
        return _create_organization_installation(
            user, integration, organization, configuration, space_selection, selected_spaces
        )

    if org_installation is None:
        # Installing into a space or site installs the integration in the organization too,
        # covering just that space.
        org_installation = _create_organization_installation(
            user,
            integration,
            organization,
            None,
            Installation.SpaceSelection.SELECTED,
            [space] if space else [],
        )
    elif space is not None and org_installation.space_selection == "selected":
        org_installation.selected_spaces.add(space)
    installation = _new_installation(
        configuration,
        integration=integration,
        organization=organization,
        level=level,
        parent=org_installation,
        space=space,
        site=site,
        created_by=user,
    )
    _fire_setup(f"{level}_installation_setup", installation)
    return installation


def _create_organization_installation(
    user, integration, organization, configuration, space_selection, selected_spaces
) -> Installation:
    selection = space_selection or Installation.SpaceSelection.ALL
    spaces = list(selected_spaces)
    _check_selection(selection, spaces, organization.pk)
    installation = _new_installation(
        configuration,
        integration=integration,
        organization=organization,
        level=Installation.Level.ORGANIZATION,
        space_selection=selection,
        created_by=user,
    )
    if spaces:
        installation.selected_spaces.set(spaces)
    _fire_setup("installation_setup", installation, changed=[])
    return installation


def _locked(installation: Installation) -> Installation:
    """The installation as stored now, locked until the transaction ends."""
    return (
        Installation.objects.select_for_update(of=("self",))
        .select_related("integration", "organization", "space", "site")
        .get(pk=installation.pk)
    )


@transaction.atomic
def installation_configure(
    *, installation: Installation, changes: dict, oauth_property: str | None = None
) -> Installation:
    """Edit one or more configuration properties; re-run the setup flow.

    ``oauth_property`` is passed by the OAuth connect flow and Disconnect only
    (``services.oauth``): the one ``button`` property the edit may write.
    """
    installation = _locked(installation)
    changed = _apply_changes(installation, changes, oauth_property=oauth_property)
    _evaluate(installation)
    installation.save()
    _fire_setup("installation_setup", installation, changed=changed)
    return installation


@transaction.atomic
def installation_select_spaces(
    *, installation: Installation, space_selection: str, spaces=()
) -> Installation:
    if installation.level != Installation.Level.ORGANIZATION:
        raise ValidationError({"space_selection": ["only an organization installation has one"]})
    spaces = list(spaces)
    _check_selection(space_selection, spaces, installation.organization_id)
    installation.space_selection = space_selection
    installation.save(update_fields=["space_selection", "updated_at"])
    installation.selected_spaces.set(spaces)
    return installation


@transaction.atomic
def installation_pause(*, installation: Installation) -> Installation:
    """Stop every event and delivery to the installation (and to those under it)."""
    installation = _locked(installation)
    installation.status = Installation.Status.PAUSED
    installation.save(update_fields=["status", "updated_at"])
    return installation


@transaction.atomic
def installation_resume(*, installation: Installation) -> Installation:
    """Re-validate: back to ``active`` or ``pending``."""
    installation = _locked(installation)
    installation.status = Installation.Status.PENDING
    _evaluate(installation)
    installation.save(update_fields=["status", "status_reasons", "updated_at"])
    return installation


@transaction.atomic
def installation_set_external_ids(*, installation: Installation, external_ids) -> Installation:
    if not isinstance(external_ids, list) or not all(isinstance(i, str) for i in external_ids):
        raise ValidationError({"externalIds": ["must be a list of strings"]})
    installation = _locked(installation)
    installation.external_ids = external_ids
    installation.save(update_fields=["external_ids", "updated_at"])
    return installation


@transaction.atomic
def installation_uninstall(*, installation: Installation) -> None:
    """Remove the installation; an organization installation takes those under it along."""
    installation.delete()


def install_link_rotate(*, integration: Integration) -> str:
    integration.install_link_token = new_install_link_token()
    integration.save(update_fields=["install_link_token", "updated_at"])
    return integration.install_link_token
