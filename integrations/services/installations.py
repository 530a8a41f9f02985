"""Installing integrations and their setup flow: install, configure, pause, resume, uninstall.

Every entry point (REST API, marketplace, admin, command line) goes through these functions,
so the visibility rules, who may (``policies.install_check``, ``policies.act_check``: the
roles' table) and the setup flow have one home, and each change leaves its one audit row.
They act for the caller's own organization only: an integration or installation the caller
may not see raises Http404, an action their role does not allow PermissionDenied, before
anything is written.
"""

import json
import logging
import secrets

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import Http404

from docplatform import events
from docplatform.access import Action
from docplatform.models import Site, Space, hash_token

from .. import configuration as config_rules
from ..models import Installation, Integration, new_install_link_token
from ..operators import acting
from ..policies import (
    act_check,
    configuration_definition,
    install_check,
    installable_levels,
    scopes_granted_at_install,
)
from .audit import installation_audit, installation_configured_audit

logger = logging.getLogger(__name__)


def _new_installation(configuration: dict | None, **fields) -> Installation:
    """Save a new installation: defaults, then the given values, then the setup flow."""
    raw = Installation.TOKEN_PREFIX + secrets.token_urlsafe(32)
    installation = Installation(api_token=raw, api_token_hash=hash_token(raw), **fields)
    installation.granted_scopes = scopes_granted_at_install(installation)
    installation.configuration = config_rules.defaults(configuration_definition(installation))
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


def _evaluate(installation: Installation) -> None:
    """Validate the whole configuration: ``active`` when it passes, else ``pending``."""
    reasons = config_rules.validation_reasons(
        installation.integration.name,
        installation.configuration_level,
        configuration_definition(installation),
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
    definition = configuration_definition(installation)
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


def _fire_setup(event_type: str, installation: Installation, **fields) -> None:
    """Fire a setup event to the installation: its status, where it is installed, and the
    event's own ``fields`` (the catalogue's ``changed``, ``approvedScopes``)."""
    if installation.space_id:
        fields["spaceId"] = installation.space_id
    if installation.site_id:
        fields["siteId"] = installation.site_id
    events.fire(
        event_type,
        organization=installation.organization,
        space=installation.space,
        site=installation.site,
        installation=installation,
        status=installation.status,
        **fields,
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
    """Install ``integration`` for ``organization`` (and into ``space`` or ``site``), with
    ``user``'s consent to the scopes it asks for (``policies.install_check``)."""
    install_check(user, integration, organization, install_token)
    if space is not None and site is not None:
        raise ValidationError({"site": ["install into a space or a site, not both"]})
    if space is not None and space.organization_id != organization.pk:
        raise Http404("No such space.")
    if site is not None and site.organization_id != organization.pk:
        raise Http404("No such site.")
    level = "space" if space else "site" if site else "organization"
    if level not in installable_levels(integration):
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
        installation = _create_organization_installation(
            user, integration, organization, configuration, space_selection, selected_spaces
        )
        _created_audit(user, installation)
        return installation

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
        created_by=acting(user),
    )
    _fire_setup(f"{level}_installation_setup", installation)
    _created_audit(user, installation)
    return installation


def _created_audit(user, installation: Installation) -> None:
    """``installation.created``: where, and the scopes granted with the installer's consent."""
    details = {"level": installation.level, "scopes": list(installation.granted_scopes)}
    if installation.space_id:
        details["space"] = installation.space_id
    if installation.site_id:
        details["site"] = installation.site_id
    installation_audit(
        action="installation.created", user=user, installation=installation, details=details
    )


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
        created_by=acting(user),
    )
    if spaces:
        installation.selected_spaces.set(spaces)
    _fire_setup("installation_setup", installation, changed=[])
    return installation


def _locked(installation: Installation) -> Installation:
    """The installation as stored now, locked until the transaction ends.

    Locked ``FOR NO KEY UPDATE``, as every row the services lock to change and not to
    delete: writers of the row wait for each other, while a call's log line or a delivery,
    whose foreign key takes a ``KEY SHARE`` lock on it, goes on. A ``FOR UPDATE`` here and
    on the integration deadlocked a publish with a log line naming both."""
    return (
        Installation.objects.select_for_update(of=("self",), no_key=True)
        .select_related("integration", "organization", "space", "site")
        .get(pk=installation.pk)
    )


@transaction.atomic
def installation_configure(
    *,
    user,
    installation: Installation,
    changes: dict | None = None,
    external_ids: list[str] | None = None,
    oauth_property: str | None = None,
) -> Installation:
    """Edit configuration properties (``changes``; the setup flow runs again) and the
    external ids (what the integration calls the installation elsewhere), together: one
    change, one audit row naming what changed. ``user``: an admin of the organization, the
    installation's own token, or an operator.

    ``oauth_property`` is passed by the OAuth connect flow and Disconnect only
    (``services.oauth``): the one ``button`` property the edit may write.
    """
    act_check(user, Action.CONFIGURE, installation)
    if external_ids is not None and (
        not isinstance(external_ids, list) or not all(isinstance(i, str) for i in external_ids)
    ):
        raise ValidationError({"externalIds": ["must be a list of strings"]})
    installation = _locked(installation)
    before = dict(installation.configuration)
    changed, details = [], {}
    if changes is not None:
        changed = _apply_changes(installation, changes, oauth_property=oauth_property)
        _evaluate(installation)
    if external_ids is not None:
        installation.external_ids = details["externalIds"] = external_ids
    installation.save()
    if changes is not None:
        _fire_setup("installation_setup", installation, changed=changed)
    installation_configured_audit(
        user=user, installation=installation, before=before, changed=changed, **details
    )
    return installation


def installation_recheck(*, user, installation: Installation) -> Installation:
    """Validate the unchanged configuration again: what it depends on outside itself (the
    operator's networks a URL may reach, say) may have changed since. A status that changes
    fires ``installation_setup`` (nothing ``changed``) and is an audit row, as a save is."""
    act_check(user, Action.CONFIGURE, installation)
    installation = _locked(installation)
    before = (installation.status, installation.status_reasons)
    _evaluate(installation)
    if (installation.status, installation.status_reasons) == before:
        return installation
    installation.save(update_fields=["status", "status_reasons"])
    _fire_setup("installation_setup", installation, changed=[])
    installation_configured_audit(
        user=user, installation=installation, before=dict(installation.configuration),
        changed=[], rechecked=installation.status,
    )  # fmt: skip
    return installation


def installations_revalidate(*, integration: Integration) -> list[Installation]:
    """Validate every installation of ``integration`` against its (new) configuration
    definition: DESIGN.md, "new version, configuration schema changed". Publishing calls it,
    in its transaction.

    Values of properties the definition no longer has are dropped from the configuration (and
    credentials of properties that are no longer buttons); there is no history model, so the
    dropped values are written to this module's log, one warning line per installation
    (credentials by name only). The status follows (``active``, or ``pending`` with the
    reasons; a paused installation stays paused with its reasons updated), and
    ``installation_setup`` fires, listing the dropped properties as ``changed``, wherever the
    status changed or values were dropped. Returns the installations that changed.
    """
    changed_installations = []
    installations = (
        Installation.objects.select_for_update(of=("self",), no_key=True)
        .filter(integration=integration)
        .select_related("integration", "organization", "space", "site")
        .order_by("level", "pk")
    )
    for installation in installations:
        definition = configuration_definition(installation)
        dropped = config_rules.dropped_properties(definition, installation.configuration)
        buttons = config_rules.button_properties(definition)
        dropped_credentials = (
            []
            if "componentId" in definition
            else sorted(set(installation.credentials or {}) - buttons)
        )
        if dropped or dropped_credentials:
            logger.warning(
                "installation %s of %s: the new version has no properties %s; dropped "
                "values %s and credentials of %s",
                installation.pk,
                integration.name,
                ", ".join(dropped + dropped_credentials),
                json.dumps({name: installation.configuration[name] for name in dropped}),
                ", ".join(dropped_credentials) or "none",
            )
            installation.configuration = {
                name: value
                for name, value in installation.configuration.items()
                if name not in dropped
            }
            installation.credentials = {
                name: value
                for name, value in (installation.credentials or {}).items()
                if name not in dropped_credentials
            }
        before = (installation.status, installation.status_reasons)
        _evaluate(installation)
        changed = sorted(set(dropped) | set(dropped_credentials))
        if not changed and before == (installation.status, installation.status_reasons):
            continue
        installation.save(
            update_fields=[
                "configuration",
                "credentials",
                "status",
                "status_reasons",
                "updated_at",
            ]
        )
        changed_installations.append(installation)
        if changed or installation.status != before[0]:
            _fire_setup("installation_setup", installation, changed=changed)
    return changed_installations


@transaction.atomic
def installation_select_spaces(
    *, user, installation: Installation, space_selection: str, spaces=()
) -> Installation:
    """Which spaces an organization installation covers: all, or the selected ones."""
    act_check(user, Action.CONFIGURE, installation)
    if installation.level != Installation.Level.ORGANIZATION:
        raise ValidationError({"space_selection": ["only an organization installation has one"]})
    spaces = list(spaces)
    _check_selection(space_selection, spaces, installation.organization_id)
    installation.space_selection = space_selection
    installation.save(update_fields=["space_selection", "updated_at"])
    installation.selected_spaces.set(spaces)
    installation_audit(
        action="installation.configured",
        user=user,
        installation=installation,
        details={"spaceSelection": space_selection, "selectedSpaces": [s.pk for s in spaces]},
    )
    return installation


@transaction.atomic
def installation_pause(*, user, installation: Installation) -> Installation:
    """Stop every event and delivery to the installation (and to those under it)."""
    act_check(user, Action.PAUSE, installation)
    installation = _locked(installation)
    installation.status = Installation.Status.PAUSED
    installation.save(update_fields=["status", "updated_at"])
    installation_audit(action="installation.paused", user=user, installation=installation)
    return installation


@transaction.atomic
def installation_resume(*, user, installation: Installation) -> Installation:
    """Re-validate: back to ``active`` or ``pending``."""
    act_check(user, Action.PAUSE, installation)
    installation = _locked(installation)
    installation.status = Installation.Status.PENDING
    _evaluate(installation)
    installation.save(update_fields=["status", "status_reasons", "updated_at"])
    installation_audit(action="installation.resumed", user=user, installation=installation)
    return installation


@transaction.atomic
def installation_uninstall(*, user, installation: Installation) -> None:
    """Remove the installation; an organization installation takes those under it along."""
    act_check(user, Action.UNINSTALL, installation)
    # Locked first, it and those under it: a call's log line written meanwhile waits for
    # the delete and is then refused (the writer loses that line alone), instead of landing
    # after the delete gathered the logs and failing the delete at its commit.
    list(
        Installation.objects.select_for_update()
        .filter(Q(pk=installation.pk) | Q(parent_id=installation.pk))
        .values_list("pk", flat=True)
    )
    installation_audit(action="installation.uninstalled", user=user, installation=installation)
    installation.delete()


def install_link_rotate(*, integration: Integration) -> str:
    integration.install_link_token = new_install_link_token()
    integration.save(update_fields=["install_link_token", "updated_at"])
    return integration.install_link_token
