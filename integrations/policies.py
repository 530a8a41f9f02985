"""Installation policies: one home for each rule, which services, APIs, pages, the router
and the admin call instead of re-deriving it.

- granted scopes: ``effective_scopes``, ``installation_scopes``;
- paused and receiving (parent-aware): ``is_paused``, ``is_receiving``, ``receives_event``,
  ``not_receiving_reason``, and ``statuses_paused``, ``statuses_receiving`` for rows read as
  tuples (the router);
- the effective status the marketplace, the API and the admin show: ``effective_status``;
- who may see, install and act, on top of the host's roles' table (``docplatform.access``):
  ``visible_integrations_q``, ``may_see_integration``, which scopes write
  (``scope_writes``, ``integration_writes``), ``may_install`` and ``install_check``,
  ``installable_levels``, and every other action on installations, endpoints and
  integrations (configure, pause, uninstall, approve scopes, read logs, redeliver, ping,
  replay, rotate secrets, send test events, publish) through ``may_act`` and ``act_check``,
  for people, installation tokens and operators (``operators.Operator``);
- the configuration definition: ``configuration_definition``, ``definition_for_level``;
- the version that runs: ``is_development``, ``running_version``, ``runnable_version``;
- the review of public listings: ``needs_review``, ``version_cleared``, ``shared_version_of``,
  ``offered_version``, ``asked_scopes``, ``new_reach`` (what a version asks beyond the
  approved one).

Scopes (DESIGN.md, "new version asks for more scopes"). An installation keeps the scopes its
organization granted (``Installation.granted_scopes``): every scope its integration asked
for when it was installed, and what an admin of the organization approved since. Its
integration's latest version asks for ``Integration.scopes``.
The installation acts with the scopes both grant: a version asking for more runs with the
granted ones until an admin approves the new ones; a version asking for fewer narrows the
installation at once. ``effective_scopes`` is that rule, and every check of a scope (an
installation token's API access, which installations an event goes to) goes through it.
"""

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404
from docplatform_sdk.manifest.network import ANY_PUBLIC_HOST

from docplatform import access
from docplatform.access import Action
from docplatform.principals import is_machine

from . import configuration as config_rules
from .models import Installation, Integration, IntegrationVersion, ListingReview
from .operators import is_operator


def effective_scopes(*, granted: Iterable[str], asked: Iterable[str]) -> list[str]:
    """The scopes an installation acts with: those its integration asks for (in the
    manifest's order) that its organization granted."""
    granted = set(granted or ())
    return [scope for scope in asked or () if scope in granted]


def installation_scopes(installation: Installation) -> list[str]:
    """The scopes ``installation`` acts with now."""
    return effective_scopes(granted=installation.granted_scopes, asked=asked_scopes(installation))


def installation_has_scope(installation: Installation, scope: str) -> bool:
    return scope in installation_scopes(installation)


def scopes_awaiting_approval(installation: Installation) -> list[str]:
    """The scopes the integration asks for that the organization has not granted yet."""
    granted = set(installation.granted_scopes or ())
    return [scope for scope in asked_scopes(installation) if scope not in granted]


def new_permissions_notice(installation: Installation) -> str | None:
    """What the marketplace, the API and the admin show while new scopes await approval."""
    waiting = scopes_awaiting_approval(installation)
    return f"asks for new permissions: {', '.join(waiting)}" if waiting else None


def scopes_granted_at_install(installation: Installation) -> list[str]:
    """Installing grants what the integration asks for; a space or site installation under
    an organization installation gets what the organization installation holds, so
    installing into a space never grants what still awaits an admin's approval."""
    if installation.parent is not None:
        return installation_scopes(installation.parent)
    return asked_scopes(installation)


# --- Paused and receiving -------------------------------------------------------------------
#
# DESIGN.md, "Pending and Paused" and "status shown": an installation is paused when it is, or
# when the organization installation above it is; it receives platform events only when it
# is active and the organization installation above it is active too. Setup events
# (installation_setup and its kin) also reach a pending installation, never a paused one.
# Each rule is written once, on statuses, so that the router (which reads rows as tuples)
# and everything holding a model ask the same question.

PAUSED = Installation.Status.PAUSED
PENDING = Installation.Status.PENDING
ACTIVE = Installation.Status.ACTIVE


def statuses_paused(status: str, parent_status: str | None) -> bool:
    """Paused itself, or under a paused organization installation."""
    return PAUSED in (status, parent_status)


def statuses_receiving(status: str, parent_status: str | None) -> bool:
    """Active, and under an active organization installation when it has one."""
    return status == ACTIVE and parent_status in (None, ACTIVE)


def _parent_status(installation: Installation) -> str | None:
    return installation.parent.status if installation.parent_id else None


def is_paused(installation: Installation) -> bool:
    """Paused itself, or under a paused organization installation."""
    return statuses_paused(installation.status, _parent_status(installation))


def is_receiving(installation: Installation) -> bool:
    """Whether platform events reach the installation now (see statuses_receiving)."""
    return statuses_receiving(installation.status, _parent_status(installation))


def receives_event(installation: Installation, event_type: str) -> bool:
    """Whether an event of ``event_type`` (still) goes to ``installation``: a setup event to
    any installation that is not paused, another event to a receiving one."""
    from docplatform.events import SETUP_EVENTS

    if event_type in SETUP_EVENTS:
        return not is_paused(installation)
    return is_receiving(installation)


def not_receiving_reason(installation: Installation) -> str | None:
    """Why platform events do not reach the installation now, in words (None: they do)."""
    if is_receiving(installation):
        return None
    shown = effective_status(installation)
    if shown.reasons and shown.reasons[0]["path"] == "parent":
        return shown.reasons[0]["message"]
    if shown.status == PAUSED:
        return "the installation is paused"
    return "the installation is pending until its configuration is complete"


# --- Levels where an integration sends nothing ----------------------------------------------

#: integration name -> (the levels whose installations act, what to tell people otherwise)
_ACTING_LEVELS: dict[str, tuple[frozenset[str], str]] = {}


def register_acting_levels(integration_name: str, levels, explanation: str) -> None:
    """A built-in integration whose installations at some levels never act themselves (the
    webhook integration sends from space and site installations only) says so here; the
    effective status of an organization installation of it that has none under it says why
    it does nothing."""
    _ACTING_LEVELS[integration_name] = (frozenset(levels), explanation)


def acts_at_level(installation: Installation) -> tuple[bool, str]:
    """(whether the installation itself can ever act, the explanation when it cannot)."""
    entry = _ACTING_LEVELS.get(installation.integration.name)
    if entry is None or installation.level in entry[0]:
        return True, ""
    return False, entry[1]


# --- Effective status -----------------------------------------------------------------------


@dataclass(frozen=True)
class EffectiveStatus:
    """What the marketplace, the API and the admin show of an installation's status."""

    status: str
    reasons: list = field(default_factory=list)
    text: str = ""

    def __str__(self) -> str:
        return self.status

    @property
    def label(self) -> str:
        return self.status.capitalize()


def _paused_status(installation: Installation, parent) -> EffectiveStatus:
    if installation.status == PAUSED:
        return EffectiveStatus(
            PAUSED,
            list(installation.status_reasons or []),
            "Paused: no events reach this installation until it is resumed.",
        )
    return EffectiveStatus(
        PAUSED,
        [{"path": "parent", "message": "the organization installation is paused"}],
        "Paused with its organization installation: no events reach this installation "
        "until that is resumed.",
    )


def _pending_status(installation: Installation, parent) -> EffectiveStatus:
    if installation.status == PENDING or parent is None:
        return EffectiveStatus(
            PENDING,
            list(installation.status_reasons or []),
            "The configuration is not complete yet: the integration receives no events.",
        )
    details = "; ".join(
        f"{reason['path']} {reason['message']}" for reason in parent.status_reasons or []
    )
    message = "the organization installation is pending until its configuration is complete"
    return EffectiveStatus(
        PENDING,
        [{"path": "parent", "message": f"{message} ({details})" if details else message}],
        "The organization installation's configuration is not complete yet: the "
        "integration receives no events.",
    )


def effective_status(installation: Installation) -> EffectiveStatus:
    """The effective status (DESIGN.md, "status shown"): paused when it or its organization
    installation is paused; pending when its configuration or its organization
    installation's is incomplete, or when it can never act (an organization installation of
    the webhook integration with nothing under it); else active. Paused and pending are
    decided by ``statuses_paused`` and ``statuses_receiving``, as everywhere."""
    parent = installation.parent if installation.parent_id else None
    if statuses_paused(installation.status, _parent_status(installation)):
        return _paused_status(installation, parent)
    if not statuses_receiving(installation.status, _parent_status(installation)):
        return _pending_status(installation, parent)
    acts, explanation = acts_at_level(installation)
    if not acts and not installation.children.exists():
        return EffectiveStatus(
            PENDING, [{"path": "level", "message": explanation}], f"Sends nothing: {explanation}"
        )
    if not acts:
        return EffectiveStatus(
            ACTIVE, [], "Active: the installations under it send the events they select."
        )
    return EffectiveStatus(
        ACTIVE, [], "The configuration is complete; the integration receives its events."
    )


# --- Who may see, install and manage --------------------------------------------------------

#: Where an integration may be installed, by its manifest ``target``.
TARGET_LEVELS = {
    "all": {"organization", "space", "site"},
    "organization": {"organization"},
    "space": {"organization", "space"},
    "site": {"organization", "site"},
}


def visible_integrations_q(organization_ids, install_token: str | None = None) -> Q:
    """The integrations an organization (or a user, with all their organizations) may see and
    install: its own, those whose version offered to others (``Integration.shared_version``:
    a public one only once an operator approved it) is public, and one whose offered version
    is unlisted when its install link token is given. ``organization_ids`` is a list or a
    subquery of organization ids."""
    visible = Q(organization_id__in=organization_ids) | Q(
        shared_version__listing__visibility=Integration.Visibility.PUBLIC
    )
    if install_token:
        visible |= Q(
            shared_version__listing__visibility=Integration.Visibility.UNLISTED,
            install_link_token=install_token,
        )
    return visible


def shared_visibility(integration: Integration) -> str | None:
    """The visibility other organizations see: their offered version's (None: none)."""
    shared = integration.shared_version if integration.shared_version_id else None
    return (shared.listing or {}).get("visibility") if shared is not None else None


def may_see_integration(
    integration: Integration, organization_id: str, install_token: str | None = None
) -> bool:
    """``visible_integrations_q`` for one integration and one organization."""
    if integration.organization_id == organization_id:
        return True
    visibility = shared_visibility(integration)
    if visibility == Integration.Visibility.PUBLIC:
        return True
    return bool(
        visibility == Integration.Visibility.UNLISTED
        and install_token
        and secrets.compare_digest(install_token, integration.install_link_token)
    )


def scope_writes(scope: str) -> bool:
    """Every scope that is not a ``:read`` scope writes (``page:feedback:read`` reads;
    ``space:git:sync``, ``site:visitor:auth`` and ``conversations:ingest`` write)."""
    return not scope.endswith(":read")


def integration_writes(integration: Integration) -> bool:
    """Whether a scope the integration asks for writes: members may install only one that
    writes nothing (and only when their organization lets them)."""
    return any(scope_writes(scope) for scope in integration.scopes)


def may_install(
    user, integration: Integration, organization, install_token: str | None = None
) -> bool:
    """DESIGN.md, "who installs": an integration the organization may see (its own, public,
    unlisted through its link), by the organization's admins; by its members too when it lets
    them (``members_may_install``) and the integration writes nothing; never by its readers."""
    if not may_see_integration(integration, organization.pk, install_token):
        return False
    writes = integration_writes(integration)
    return is_operator(user) or access.may_install(user, organization, writes=writes)


def install_check(
    user, integration: Integration, organization, install_token: str | None = None
) -> None:
    """``may_install`` or raise: Http404 for someone outside the organization (it does not
    exist for them) and for an integration it may not see; PermissionDenied naming who may
    for its people whose role does not let them."""
    if may_install(user, integration, organization, install_token):
        return
    if not is_operator(user) and access.role_of(user, organization) is None:
        raise Http404("No such organization.")
    if not may_see_integration(integration, organization.pk, install_token):
        raise Http404("No such integration.")
    writes = integration_writes(integration)
    raise PermissionDenied(access.install_refusal(organization, writes=writes))


def installable_levels(integration: Integration) -> set[str]:
    return TARGET_LEVELS.get(integration.target, TARGET_LEVELS["all"])


def may_act(user, action: Action, target) -> bool:
    """Whether ``user`` may do ``action`` (the roles' table, ``docplatform.access``:
    ``Action.CONFIGURE``, ``PAUSE``, ``READ_LOGS``, ``PUBLISH``, ...) to ``target``: an
    installation, an integration (its owners' actions) or an organization. Operators at
    their doors may; an installation's token reads and configures its own installation and
    nothing else (its scopes decide the rest of the API); people as their role in the
    target's organization lets them."""
    if is_operator(user):
        return True
    if is_machine(user):
        own = getattr(user, "installation", None)
        return (
            action in (Action.READ, Action.CONFIGURE)
            and isinstance(target, Installation)
            and own is not None
            and own.pk == target.pk
        )
    return access.may(user, action, target)


def component_action(integration: Integration, component_id: str) -> Action:
    """What acting on a component (its buttons and inputs, its props) is: configuring the
    installation for a configuration screen; reading for a block, whose buttons any reader
    of a page presses."""
    screens = {level.get("componentId") for level in (integration.configurations or {}).values()}
    return Action.CONFIGURE if component_id in screens else Action.READ


def act_check(user, action: Action, target) -> None:
    """``may_act`` or raise: Http404 for someone outside the target's organization (its
    installations, deliveries and logs do not exist for them), PermissionDenied naming who
    may for anyone else."""
    if may_act(user, action, target):
        return
    if is_machine(user):
        raise PermissionDenied("An installation token changes only its own installation.")
    access.require(user, action, target)


# --- The configuration definition -----------------------------------------------------------


def definition_for_level(integration: Integration, level: str) -> dict:
    """The manifest configuration governing an installation of ``integration`` at ``level``
    (organization, space or site): account, space (else site), site."""
    return config_rules.definition_for(
        integration.configurations, Installation.CONFIGURATION_LEVELS[level]
    )


def configuration_definition(installation: Installation) -> dict:
    """The manifest configuration that governs ``installation``."""
    return definition_for_level(installation.integration, installation.level)


# --- Runnable version -----------------------------------------------------------------------


def has_code(version: IntegrationVersion | None) -> bool:
    """Whether ``version`` has code to run (its entry module; the bundle goes with it)."""
    return version is not None and script_runs(version.script_path)


def script_runs(script_path: str | None) -> bool:
    """``has_code`` for a version's ``script_path`` read as a column (the router's rows)."""
    return bool(script_path)


def is_development(installation: Installation) -> bool:
    """Whether ``installation`` runs development versions: marked itself, or a space or site
    installation under a marked organization installation (it follows its parent's mark; it
    cannot opt out of it)."""
    if installation.development:
        return True
    return installation.parent_id is not None and installation.parent.development


def running_version(
    integration: Integration, installation: Installation | None = None
) -> IntegrationVersion | None:
    """The version that runs (DESIGN.md, "Development versions"): for a development
    installation, the version ``dev`` published last, until a release replaces it; for every
    other installation, the version offered to its organization (``offered_version``: the
    released one for the owners, else the newest one cleared for others); for calls without
    an installation, the released version."""
    if installation is None:
        return integration.released_version
    if integration.development_version_id is not None and is_development(installation):
        return integration.development_version
    return offered_version(integration, installation.organization_id)


def runnable_version(
    integration: Integration, installation: Installation | None = None
) -> IntegrationVersion | None:
    """``running_version`` when it has code to run."""
    version = running_version(integration, installation)
    return version if has_code(version) else None


# --- Review of public listings --------------------------------------------------------------
#
# DESIGN.md, "who installs": a released version whose manifest says ``visibility: public`` is
# reviewed (``ListingReview``) before other organizations are offered it; its owners install
# and run it at once. A version needing no review (private, unlisted, development) or approved
# is *cleared*; other organizations are offered the released version once cleared, else the
# newest cleared version released before it (``Integration.shared_version``, stored by the
# services from ``shared_version_of``), so an approved listing stays listed and installable
# while a later version waits.

REVIEW_PENDING = ListingReview.Status.PENDING
REVIEW_APPROVED = ListingReview.Status.APPROVED
REVIEW_REJECTED = ListingReview.Status.REJECTED


def needs_review(listing: dict) -> bool:
    """Whether a released version with this listing waits for an operator's review."""
    return (listing or {}).get("visibility") == Integration.Visibility.PUBLIC


def cleared_q(prefix: str = "") -> Q:
    """Versions cleared for other organizations: without a review, or approved."""
    return Q(**{f"{prefix}review__isnull": True}) | Q(
        **{f"{prefix}review__status": REVIEW_APPROVED}
    )


def version_cleared(version: IntegrationVersion) -> bool:
    review = getattr(version, "review", None) if version is not None else None
    return version is not None and (review is None or review.status == REVIEW_APPROVED)


def shared_version_of(integration: Integration) -> IntegrationVersion | None:
    """What other organizations are offered: the released version once cleared, else the
    newest cleared release-channel version before it (None: nothing yet)."""
    released = integration.released_version
    if released is None:
        return None
    if version_cleared(released):
        return released
    return (
        integration.versions.filter(
            cleared_q(), channel=IntegrationVersion.Channel.RELEASE, number__lt=released.number
        )
        .order_by("-number")
        .first()
    )


def offered_version(integration: Integration, organization_id: str) -> IntegrationVersion | None:
    """The version an organization is offered and its installations run (development ones
    aside): the released version for the owning organization, the shared one for others."""
    if organization_id == integration.organization_id:
        return integration.released_version
    return integration.shared_version


def offered_scopes(integration: Integration, organization_id: str) -> list[str]:
    """The scopes ``integration`` asks of an organization, as the version offered to it has
    them: the listing's (the released version's), or the shared version's for another
    organization while a newer version waits for review."""
    if organization_id == integration.organization_id or integration.shared_version_id in (
        None,
        integration.released_version_id,
    ):
        return list(integration.scopes)
    return list((integration.shared_version.listing or {}).get("scopes") or ())


def asked_scopes(installation: Installation) -> list[str]:
    """The scopes ``installation``'s integration asks for (``offered_scopes``)."""
    return offered_scopes(installation.integration, installation.organization_id)


def hosts_of(version: IntegrationVersion | None) -> set[str]:
    """The hosts besides this platform's API that ``version``'s code may call."""
    return set(version.network_fetch or ()) if version is not None else set()


def new_reach(
    version: IntegrationVersion, approved: IntegrationVersion | None
) -> tuple[list[str], list[str]]:
    """(the scopes, the hosts) ``version`` asks for beyond ``approved`` (everything when
    nothing was approved; ``*``, any public host, covers every host)."""
    scopes = list((version.listing or {}).get("scopes") or ())
    hosts = sorted(hosts_of(version))
    if approved is None:
        return scopes, hosts
    approved_scopes = set((approved.listing or {}).get("scopes") or ())
    approved_hosts = hosts_of(approved)
    new_scopes = [scope for scope in scopes if scope not in approved_scopes]
    if ANY_PUBLIC_HOST in approved_hosts:
        return new_scopes, []
    return new_scopes, [host for host in hosts if host not in approved_hosts]


def latest_approved(
    integration: Integration, before: IntegrationVersion | None = None
) -> IntegrationVersion | None:
    """The newest approved version (before ``before``, when given)."""
    versions = integration.versions.filter(review__status=REVIEW_APPROVED)
    if before is not None:
        versions = versions.filter(number__lt=before.number)
    return versions.order_by("-number").first()


def automatic_approval(version: IntegrationVersion) -> str | None:
    """Why a public ``version`` is approved at publish, without an operator (None: it waits
    for one): an internal organization's (the platform's own, such as the webhook
    integration), or one asking for no scope and no host beyond the newest approved version
    before it (nothing new for anyone to consent to)."""
    integration = version.integration
    if integration.organization.internal:
        return "published by an internal organization"
    approved = latest_approved(integration, before=version)
    if approved is None:
        return None
    new_scopes, new_hosts = new_reach(version, approved)
    if new_scopes or new_hosts:
        return None
    return f"no scope or host beyond version {approved.number}"
