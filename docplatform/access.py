"""Who may do what in an organization: the one access module (DESIGN.md, "Teams and roles").

Every door (the pages, the REST API, the command line, the admin) and every app (the host's
features, integrations, webhooks, the marketplace) asks ``may(actor, action, target)`` or
``require(...)``; the REST views ask through ``api.permissions.ActsByRole``. This is the only
module that reads memberships (``tests/docplatform/test_access_table.py`` checks that no
other module queries them); the teams' services write them.

The actor is a person (a Django user, signed in or through a personal token). Machine
principals (an installation's token) have no role: their granted scopes decide what they
reach (``principals``). Being staff or a superuser grants nothing here: operators act through
the Django admin, the operators' door, which Django's staff permissions guard. A person's role
in an organization is read once per request: it is kept on the user object, which lives for
one request.

The table, one row per action (README, "Teams and roles"):

- read (the organization, its spaces, sites, installations and events): admins, members,
  readers;
- comment on a space's pages: admins and members; readers too where the space allows it
  (``Space.readers_may_comment``, off by default: ``may`` widens the row for that space);
- edit content (change requests too), create spaces, review and merge change requests: admins
  and members; in a space whose edits go through change requests only, members do not save
  its pages directly (``may_save_directly``);
- everything else (spaces' and sites' settings, members and invitations, the audit log, the
  support conversations integrations posted, integrations and their endpoints, publishing
  integrations): admins; members also install
  integrations whose scopes write nothing when the organization allows it
  (``Organization.members_may_install``, off by default).
"""

from enum import StrEnum

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from .models import Membership, Organization, Site, Space
from .principals import is_machine
from .queries import Prepared, stand_in, stand_ins

ADMIN = Membership.Role.ADMIN
MEMBER = Membership.Role.MEMBER
READER = Membership.Role.READER
ROLES = tuple(Membership.Role.values)


class Action(StrEnum):
    READ = "read"
    EDIT_CONTENT = "content.edit"
    CREATE_SPACE = "space.create"
    MANAGE_SPACE = "space.manage"
    MANAGE_SITE = "site.manage"
    MANAGE_MEMBERS = "members.manage"
    MANAGE_ORGANIZATION = "organization.manage"
    READ_AUDIT_LOG = "audit.read"
    READ_CONVERSATIONS = "conversations.read"
    INSTALL = "integration.install"
    CONFIGURE = "installation.configure"
    PAUSE = "installation.pause"
    UNINSTALL = "installation.uninstall"
    APPROVE_SCOPES = "installation.approve_scopes"
    SEND_TEST_EVENTS = "installation.test_events"
    READ_LOGS = "logs.read"
    REDELIVER = "endpoint.redeliver"
    PING = "endpoint.ping"
    REPLAY = "endpoint.replay"
    ROTATE_SECRET = "endpoint.rotate_secret"  # noqa: S105 - an action's name
    PUBLISH = "integration.publish"
    COMMENT = "content.comment"
    REVIEW_CHANGE_REQUEST = "change_request.review"
    MERGE_CHANGE_REQUEST = "change_request.merge"
    PUBLISH_OPENAPI = "openapi.publish"


_EVERYONE = frozenset(ROLES)
_EDITORS = frozenset({ADMIN, MEMBER})
_ADMINS = frozenset({ADMIN})

#: action -> the roles that may do it. ``INSTALL`` widens for members through
#: ``may_install`` when the organization allows it, ``COMMENT`` for readers in a space that
#: allows it (``may``).
TABLE: dict[Action, frozenset[str]] = {
    **{action: _ADMINS for action in Action},
    Action.READ: _EVERYONE,
    Action.EDIT_CONTENT: _EDITORS,
    Action.CREATE_SPACE: _EDITORS,
    Action.COMMENT: _EDITORS,
    Action.REVIEW_CHANGE_REQUEST: _EDITORS,  # never their own (``changes.services``)
    Action.MERGE_CHANGE_REQUEST: _EDITORS,
    Action.PUBLISH_OPENAPI: _EDITORS,
}

_WHAT = {
    Action.READ: "see this",
    Action.EDIT_CONTENT: "edit its content",
    Action.CREATE_SPACE: "create spaces",
    Action.MANAGE_SPACE: "change or delete its spaces",
    Action.MANAGE_SITE: "create, change, publish or delete its sites",
    Action.MANAGE_MEMBERS: "invite people and manage its members",
    Action.MANAGE_ORGANIZATION: "change its settings",
    Action.READ_AUDIT_LOG: "read its audit log",
    Action.READ_CONVERSATIONS: "read the support conversations its integrations posted",
    Action.INSTALL: "install integrations",
    Action.CONFIGURE: "configure its installations",
    Action.PAUSE: "pause or resume its installations",
    Action.UNINSTALL: "uninstall integrations",
    Action.APPROVE_SCOPES: "approve the new permissions an integration asks for",
    Action.SEND_TEST_EVENTS: "send test events",
    Action.READ_LOGS: "read delivery and integration logs",
    Action.REDELIVER: "redeliver webhook deliveries",
    Action.PING: "send a webhook a test ping",
    Action.REPLAY: "replay events to a webhook",
    Action.ROTATE_SECRET: "rotate a webhook's signing secret",
    Action.PUBLISH: "publish its integrations",
    Action.COMMENT: "comment on this space's pages",
    Action.REVIEW_CHANGE_REQUEST: "review change requests",
    Action.MERGE_CHANGE_REQUEST: "merge change requests",
    Action.PUBLISH_OPENAPI: "publish its OpenAPI specifications",
}


# --- Who the actor is in an organization ---------------------------------------------------


def is_person(actor) -> bool:
    """A signed-in person (not an anonymous visitor, not a machine principal)."""
    return actor is not None and getattr(actor, "is_authenticated", False) and not is_machine(actor)


def _organization_id(target) -> str:
    if isinstance(target, Organization):
        return target.pk
    if isinstance(target, str):
        return target
    return target.organization_id


_ORGANIZATION_ID = stand_in("org")
[_USER_ID] = stand_ins("user", 1, numbers=True)  # user ids are integers
_role_queries: dict[str, Prepared] = {}


def role_of(actor, target) -> str | None:
    """The actor's role in the organization of ``target`` (an Organization, its id, or
    anything with ``organization_id``); None for anyone who is not a member. Read once per
    actor object (one request) and organization."""
    if not is_person(actor):
        return None
    organization_id = _organization_id(target)
    roles = actor.__dict__.setdefault("_docplatform_roles", {})
    if organization_id not in roles:
        key = Membership.objects.db
        if key not in _role_queries:  # compiled once: the reader asks at every read
            _role_queries[key] = Prepared(
                Membership.objects.filter(
                    user_id=_USER_ID, organization_id=_ORGANIZATION_ID
                ).values_list("role")
            )
        rows = _role_queries[key].rows({_USER_ID: actor.pk, _ORGANIZATION_ID: organization_id})
        roles[organization_id] = rows[0][0] if rows else None
    return roles[organization_id]


def role_subquery(user_id) -> Subquery:
    """The role of the person ``user_id`` in the organization of the outer query's row (its
    ``organization_id``), or NULL: for a read that needs the caller's role with its row,
    kept for ``role_of`` by ``remember_role``."""
    return Subquery(
        Membership.objects.filter(user_id=user_id, organization_id=OuterRef("organization_id"))
        .order_by()
        .values("role")[:1]
    )


def remember_role(actor, organization_id: str, role: str | None) -> None:
    """Keep the actor's role in an organization, read in this request with another row
    (``role_subquery``), as ``role_of`` keeps what it reads: it is not read again."""
    if is_person(actor):
        actor.__dict__.setdefault("_docplatform_roles", {})[organization_id] = role


def forget_roles(actor) -> None:
    """Drop what ``role_of`` kept on the actor (after its memberships changed)."""
    if actor is not None:
        actor.__dict__.pop("_docplatform_roles", None)


def role_may(role: str | None, action: Action | str) -> bool:
    """The table itself: whether a person with ``role`` may do ``action``."""
    return role is not None and role in TABLE[Action(action)]


OPEN_VISIBILITIES = (Space.Visibility.PUBLIC, Space.Visibility.UNLISTED)


def may_read_space(role: str | None, space: Space) -> bool:
    """Read a space: its organization's people (any role); anyone at all when it is public
    or unlisted (unlisted spaces are not listed, but their address opens them)."""
    return role_may(role, Action.READ) or space.visibility in OPEN_VISIBILITIES


def may(actor, action: Action | str, target) -> bool:
    """Whether the actor may do ``action`` in the organization of ``target``; readers
    comment on a space's pages when ``target`` is a space that lets them."""
    role = role_of(actor, target)
    if role_may(role, action):
        return True
    return (
        Action(action) == Action.COMMENT
        and role == READER
        and bool(getattr(target, "readers_may_comment", False))
    )


def refusal(action: Action | str) -> str:
    """Why a member whose role does not allow ``action`` is refused, in a sentence."""
    action = Action(action)
    roles = [f"{role}s" for role in ROLES if role in TABLE[action]]
    if not roles:
        return f"Nobody may {_WHAT[action]}."
    who = "members" if len(roles) == len(ROLES) else " and ".join(roles)
    if action == Action.COMMENT:
        return (
            f"Only the organization's {who} may {_WHAT[action]}, and its readers where the "
            "space's admins allow it."
        )
    return f"Only the organization's {who} may {_WHAT[action]}."


def require(actor, action: Action | str, target) -> None:
    """``may`` or raise: Http404 for someone who is not a member (another organization's
    things do not exist for them), PermissionDenied naming who may for a member whose role
    does not allow it."""
    if may(actor, action, target):
        return
    if role_of(actor, target) is None:
        raise Http404
    raise PermissionDenied(refusal(action))


def may_save_directly(actor, space: Space) -> bool:
    """Write a space's pages without a change request: whoever may edit content, but only
    admins when the space takes edits through change requests only. A machine principal
    (an installation's token, Git sync) is limited by its scopes, not by this setting."""
    if is_machine(actor):
        return True
    role = role_of(actor, space)
    if space.change_requests_only and role != ADMIN:
        return False
    return role_may(role, Action.EDIT_CONTENT)


DIRECT_SAVE_REFUSAL = (
    "This space takes edits through change requests only: open a change request (only the "
    "organization's admins save its pages directly)."
)


def may_install(actor, organization, *, writes: bool) -> bool:
    """Install an integration into the organization: its admins; its members too when the
    organization lets them and the integration's scopes write nothing (``writes`` is the
    integrations app's answer)."""
    if may(actor, Action.INSTALL, organization):
        return True
    return (
        not writes
        and bool(organization.members_may_install)
        and role_of(actor, organization) == MEMBER
    )


def may_create_organization(actor) -> bool:
    """Start an organization (and be its admin): any signed-in person, or only staff users
    when the operator set ``ORGANIZATION_CREATION=staff``. No role is involved: the
    organization does not exist yet."""
    if not is_person(actor):
        return False
    return settings.ORGANIZATION_CREATION == "anyone" or actor.is_staff


ORGANIZATION_CREATION_REFUSAL = (
    "Only the platform's staff may create organizations here (ORGANIZATION_CREATION=staff): "
    "ask an operator, or an admin of an organization to invite you."
)


def install_refusal(organization, *, writes: bool) -> str:
    if organization.members_may_install and writes:
        return (
            "Members may install only integrations whose scopes write nothing; this one "
            "writes, so only the organization's admins may install it."
        )
    return refusal(Action.INSTALL)


# --- What the actor reaches -----------------------------------------------------------------


def member_organization_ids(actor) -> QuerySet:
    """The ids of the actor's organizations, as a subquery."""
    if not is_person(actor):
        return Membership.objects.none().values("organization_id")
    return Membership.objects.filter(user=actor).values("organization_id")


def organizations_of(actor) -> QuerySet:
    """The actor's organizations, each annotated with the actor's ``role`` in it."""
    if not is_person(actor):
        return Organization.objects.none()
    return Organization.objects.filter(memberships__user=actor).annotate(
        role=F("memberships__role")
    )


def organization_of_member(actor, ref: str) -> Organization | None:
    """One of the actor's organizations, by id or subdomain."""
    return organizations_of(actor).filter(Q(id=ref) | Q(subdomain=ref)).first()


def spaces_visible_to(actor) -> QuerySet:
    """Every space of the actor's organizations (members of any role read them all)."""
    return Space.objects.filter(organization_id__in=member_organization_ids(actor))


def sites_visible_to(actor) -> QuerySet:
    return Site.objects.filter(organization_id__in=member_organization_ids(actor))


def memberships_of(actor) -> QuerySet:
    """The actor's memberships, with their organizations."""
    if not is_person(actor):
        return Membership.objects.none()
    return Membership.objects.filter(user=actor).select_related("organization")


def members_of(organization) -> QuerySet:
    """The organization's memberships, with their people, admins first."""
    return (
        Membership.objects.filter(organization=organization)
        .select_related("user")
        .order_by("role", "user__username")
    )


def membership_of(organization, username: str) -> Membership | None:
    return members_of(organization).filter(user__username=username).first()


def admin_emails(organization) -> list[str]:
    """The e-mail addresses of the organization's admins who have one (what the platform
    mails them: the review of their integrations' public listings)."""
    rows = Membership.objects.filter(organization=organization, role=ADMIN).exclude(user__email="")
    return sorted(set(rows.values_list("user__email", flat=True)))


def admin_count(organization) -> int:
    return Membership.objects.filter(organization=organization, role=ADMIN).count()


def is_member_of(user, organization) -> bool:
    """Whether ``user`` (any user, not the caller) belongs to the organization."""
    return Membership.objects.filter(user=user, organization=organization).exists()


def organization_member_count(organizations: QuerySet) -> QuerySet:
    """``organizations`` annotated with ``member_count``."""
    return organizations.annotate(member_count=Count("memberships", distinct=True))


def member_user_ids(organization) -> QuerySet:
    """The ids of the organization's people, as a subquery."""
    return Membership.objects.filter(organization=organization).values("user_id")
