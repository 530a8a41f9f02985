"""The reads of every runtime call, compiled once (``docplatform.queries.Prepared``): a
public endpoint's installation or integration, the spaces an installation selected, and for
a component's call the stored instance it renders.
Building and compiling these ORM queries cost more than running them, on the path every
public endpoint request and every component render takes.

The versions a call may run are not read with it: a version is immutable
(``IntegrationVersion.save``) and its id never reused, so each process keeps the ones it read
(``_versions``, the most recently used ``VERSIONS_KEPT``) and reads only those it lacks. The
installation and its integration (which versions are released, in development, shared) are
read at every call, except a public endpoint's, which is given a copy of the installation it
built before while PostgreSQL says it has not changed (``kept_installations``)."""

import threading
from collections import OrderedDict

from django.contrib.auth import get_user_model
from django.db.models import (
    Aggregate,
    F,
    FilteredRelation,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.functions import Coalesce

from docplatform.access import is_person, remember_role, role_subquery
from docplatform.queries import Prepared, stand_in, stand_ins

from .kept_installations import installation_tags, kept_installations
from .models import ComponentState, Installation, Integration, IntegrationVersion
from .selectors import installations_visible_to

_INSTALLATION, _NAME = stand_in("installation"), stand_in("name")
_COMPONENT, _INSTANCE = stand_in("component"), stand_in("instance")
(_USER,) = stand_ins("user", 1, numbers=True)
_compiled: dict[tuple[str, str], Prepared] = {}
#: Not read with the installation (``stored_instance_of``, ``selected_spaces_of``).
UNREAD = object()


def _prepared(name: str, build) -> Prepared:
    key = (name, Installation.objects.db)
    if key not in _compiled:
        _compiled[key] = Prepared(build())
    return _compiled[key]


#: The versions a call may run (``policies.running_version``).
_VERSIONS = ("released_version", "development_version", "shared_version")
#: What no call reads: the catalogue's texts, and a version's code (sent only when the
#: runtime host asks for it: a deferred read then) and its listing.
_NOT_READ = ("description", "summary", "external_links")
_VERSION_NOT_READ = ("bundle", "listing")
#: How many versions a process keeps read (each without its code: its manifest, a few kB;
#: its secrets and token decrypted, as every read leaves them: the process holds the keys).
VERSIONS_KEPT = 512
#: A version's id: the names and values of its columns as read (``Model.from_db``).
_versions: OrderedDict[str, tuple[tuple[str, ...], tuple]] = OrderedDict()
_versions_lock = threading.Lock()


#: The annotation of an installation read for a call: the spaces its organization
#: installation selected (``selected_spaces_of``).
SELECTED_SPACES = "selected_space_ids_read"


class _JoinedIds(Aggregate):
    """The ids of a group joined by commas (ids hold none: ``docplatform.ids``)."""

    function = "STRING_AGG"
    template = "%(function)s(%(expressions)s, ',')"
    output_field = TextField()

    def as_sqlite(self, compiler, connection, **extra):
        return super().as_sql(compiler, connection, function="GROUP_CONCAT", **extra)


def _selected_of_organization_installation() -> Subquery:
    through = Installation.selected_spaces.through
    return Subquery(
        through.objects.filter(installation_id=Coalesce(OuterRef("parent_id"), OuterRef("pk")))
        .order_by()
        .values("installation_id")
        .annotate(ids=_JoinedIds("space_id"))
        .values("ids")
    )


def _for_call(installations: QuerySet) -> QuerySet:
    # Without the models' ordering: one row, and sorting it doubled PostgreSQL's planning.
    # The selected spaces in the same statement: a round trip fewer per call.
    return (
        installations.select_related("integration", "parent")
        .defer(*(f"integration__{field}" for field in _NOT_READ))
        .annotate(**{SELECTED_SPACES: _selected_of_organization_installation()})
        .filter(pk=_INSTALLATION)
        .order_by()
    )


def _installation_query() -> QuerySet:
    return _for_call(Installation.objects.all())


#: The annotation of an installation read for a person's call: the person's role in its
#: organization (kept for ``docplatform.access.role_of``: an action's check reads no more).
CALLER_ROLE = "caller_role_read"


def _visible_installation_query() -> QuerySet:
    # The rule of who sees an installation (selectors.installations_visible_to), for a
    # stand-in user.
    visible = installations_visible_to(get_user_model()(pk=_USER))
    return _for_call(visible.annotate(**{CALLER_ROLE: role_subquery(_USER)}))


def installation_for_call(installation_id: str, *, kept: bool = False) -> Installation | None:
    """The installation with its integration, the versions it may run (without their code)
    and its organization installation. ``kept``: the rows this process kept, when no change
    to them was committed since (``kept_installations``: a public endpoint's calls)."""
    prepared = _prepared("installation", _installation_query)
    values = {_INSTALLATION: installation_id}

    def build(rows: list[list]) -> Installation | None:
        found = prepared.instances(values, read=rows)
        if not found:
            return None
        _link_versions(found[0].integration)
        return found[0]

    if kept:
        read = lambda: build(prepared.execute(values))  # noqa: E731
        return kept_installations.read(
            installation_id, read, installation_tags, alias=prepared.alias
        )
    return build(prepared.execute(values))


#: The stored instance's columns, read with the installation for a component's call.
_STORED_COLUMNS = ("id", "props", "state", "revision")
#: What an installation read for a component's call says of the instance asked for
#: (``stored_instance_of``).
STORED_INSTANCE = "stored_instance_read"


def _visible_with_instance_query() -> QuerySet:
    # The instance's row joined (at most one: one row per installation, component and
    # instance), its columns NULL when none is stored: a round trip fewer per render.
    stored = FilteredRelation(
        "component_states",
        condition=Q(
            component_states__component_id=_COMPONENT, component_states__instance=_INSTANCE
        ),
    )
    return (
        _visible_installation_query()
        .annotate(asked_instance=stored)
        .annotate(
            **{
                f"stored_{column}_read": F(f"asked_instance__{column}")
                for column in _STORED_COLUMNS
            }
        )
    )


def installation_visible_for_call(
    user, installation_id: str, *, instance_of: tuple[str, str] | None = None
) -> Installation | None:
    """As ``installation_for_call``, when ``user`` (a person) may see the installation; the
    person's role in its organization is read with it (``CALLER_ROLE``), and with
    ``instance_of`` (a component's id and an instance's name) the stored instance
    (``stored_instance_of``)."""
    if not is_person(user):  # a machine principal sees none (``installations_visible_to``)
        return None
    values = {_USER: user.pk, _INSTALLATION: installation_id}
    # A name no stored row can hold (PostgreSQL's text holds no NUL) is none stored, unread.
    storable = instance_of is not None and not any("\x00" in part for part in instance_of)
    if not storable:
        found = _prepared("visible", _visible_installation_query).instances(values)
    else:
        values |= {_COMPONENT: instance_of[0], _INSTANCE: instance_of[1]}
        found = _prepared("visible-instance", _visible_with_instance_query).instances(values)
    if not found:
        return None
    installation = found[0]
    remember_role(user, installation.organization_id, getattr(installation, CALLER_ROLE))
    if instance_of is not None:
        stored = _stored_instance(installation, *instance_of) if storable else None
        setattr(installation, STORED_INSTANCE, (instance_of, stored))
    _link_versions(installation.integration)
    return installation


def _stored_instance(installation: Installation, component_id: str, instance: str):
    read = {column: getattr(installation, f"stored_{column}_read") for column in _STORED_COLUMNS}
    if read["id"] is None:
        return None
    return ComponentState(
        installation_id=installation.pk, component_id=component_id, instance=instance, **read
    )


def stored_instance_of(installation: Installation, component_id: str, instance: str):
    """The stored row of the instance, as read with ``installation`` for its call (None: none
    is stored); ``UNREAD`` when it was not read with it."""
    read = getattr(installation, STORED_INSTANCE, None)
    if read is None or read[0] != (component_id, instance):
        return UNREAD
    return read[1]


def _integration_query() -> QuerySet:
    return Integration.objects.defer(*_NOT_READ).filter(name=_NAME).order_by()


def integration_for_call(name: str) -> Integration | None:
    """The integration named ``name`` with the versions it may run (without their code)."""
    found = _prepared("integration", _integration_query).instances({_NAME: name})
    if not found:
        return None
    _link_versions(found[0])
    return found[0]


def _link_versions(integration: Integration) -> None:
    """The versions ``integration`` may run, set on it, each a new instance whose own
    ``integration`` is this one (not read again): from the versions this process kept, the
    ones it lacks read now, in one statement."""
    ids = {name: getattr(integration, f"{name}_id") for name in _VERSIONS}
    kept = _kept_versions({pk for pk in ids.values() if pk is not None}, integration._state.db)
    for name, pk in ids.items():
        version = None
        if pk in kept:  # not when deleted since the integration was read
            field_names, values = kept[pk]
            version = IntegrationVersion.from_db(integration._state.db, field_names, values)
            version.integration = integration
        setattr(integration, name, version)


def _kept_versions(ids: set[str], using: str) -> dict[str, tuple[tuple[str, ...], tuple]]:
    with _versions_lock:
        kept = {pk: _versions[pk] for pk in ids if pk in _versions}
        for pk in kept:
            _versions.move_to_end(pk)
    missing = ids - kept.keys()
    if not missing:
        return kept
    read = IntegrationVersion.objects.using(using).defer(*_VERSION_NOT_READ).filter(pk__in=missing)
    for version in read:
        names = tuple(
            f.attname for f in version._meta.concrete_fields if f.attname in version.__dict__
        )
        kept[version.pk] = (names, tuple(getattr(version, name) for name in names))
    with _versions_lock:
        for pk in missing & kept.keys():
            _versions[pk] = kept[pk]
        while len(_versions) > VERSIONS_KEPT:
            _versions.popitem(last=False)
    return kept


def _selected_query() -> QuerySet:
    return Installation.selected_spaces.through.objects.filter(
        installation_id=_INSTALLATION
    ).values_list("space_id", flat=True)


def selected_space_ids(installation_id: str) -> list[str]:
    """The ids of the spaces ``installation_id`` selected, sorted."""
    rows = _prepared("selected", _selected_query).rows({_INSTALLATION: installation_id})
    return sorted(row[0] for row in rows)


def selected_spaces_of(installation: Installation) -> list[str]:
    """The ids of the spaces the organization installation of ``installation`` (itself, or
    its parent) selected, sorted: as read with it for a call (``_for_call``), else read now."""
    joined = getattr(installation, SELECTED_SPACES, UNREAD)
    if joined is UNREAD:
        return selected_space_ids(installation.parent_id or installation.pk)
    return sorted(joined.split(",")) if joined else []
