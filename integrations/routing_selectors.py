"""Where an event goes (DESIGN.md, "where an event goes"): the installations a platform event
reaches, read in one compiled query whatever their number, and those it does not reach only
for lack of its scope. ``routing`` registers this with the outbox."""

from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q

from docplatform.events import EVENT_SCOPES, SPACE_EVENTS
from docplatform.events.registry import Recipient
from docplatform.queries import Prepared, stand_in

from .models import Installation
from .policies import effective_scopes, script_runs, statuses_receiving


@dataclass(frozen=True)
class Undelivered:
    """An installation that an event did not reach because it lacks the event's scope."""

    installation_id: str
    integration_id: str
    version: int | None
    scope: str
    awaiting_approval: bool

    @property
    def message(self) -> str:
        if self.awaiting_approval:
            return (
                f"not delivered: needs {self.scope} (asked for by the integration, not yet "
                "approved by an admin of the organization)"
            )
        return f"not delivered: needs {self.scope}"


@dataclass(frozen=True)
class EventRouting:
    """Where an event goes, and which installations it would have reached but for a scope."""

    recipients: list[Recipient]
    undelivered: list[Undelivered]


def event_recipients(event) -> list[Recipient]:
    """The installations an event goes to (DESIGN.md, "where an event goes")."""
    return event_routing(event).recipients


def event_routing(event) -> EventRouting:
    """The installations an event goes to (DESIGN.md, "where an event goes"), and those it
    does not reach only for lack of its scope (their integration has code to run).

    The space's (or site's) installations and the organization installations whose space
    selection covers it, when active (and their organization installation too), not paused,
    and acting with the event's scope (``policies.effective_scopes``: granted, and asked
    for). An integration installed both in the space and in the organization receives the
    event once, at the space installation, whose status decides.
    One query, whatever the number of installations; rows are read as tuples, not models.
    """
    scope = EVENT_SCOPES[event.type]
    rows = _routing_rows(event)
    installed_locally = set()
    local_rows, org_rows, unscoped = [], [], []
    for row in rows:
        pk, level, status, parent_status, configuration, integration_id, name = row[:7]
        asked, granted, version, script = row[7:]
        # The scope is checked here, not in SQL: a LIKE on JSON text misleads the planner.
        if scope is not None and scope not in effective_scopes(granted=granted, asked=asked):
            if statuses_receiving(status, parent_status) and script_runs(script):
                missing = Undelivered(pk, integration_id, version, scope, scope in (asked or ()))
                unscoped.append((level == Installation.Level.ORGANIZATION, missing))
            continue
        if level == Installation.Level.ORGANIZATION:
            if statuses_receiving(status, None):
                org_rows.append((integration_id, Recipient(pk, name, configuration)))
        else:
            installed_locally.add(integration_id)
            if statuses_receiving(status, parent_status):
                local_rows.append((integration_id, Recipient(pk, name, configuration)))
    chosen = local_rows + [row for row in org_rows if row[0] not in installed_locally]
    reached = {integration_id for integration_id, _ in chosen}
    return EventRouting(
        recipients=[recipient for _, recipient in chosen],
        undelivered=_undelivered(unscoped, reached, installed_locally),
    )


#: Stand-ins for an event's ids in the routing query compiled once (``_routing_query``).
_ORGANIZATION_ID = stand_in("organization")
_PLACE_ID = stand_in("place")
_ROUTING_COLUMNS = (
    "id",
    "level",
    "status",
    "parent__status",
    "configuration",
    "integration_id",
    "integration__name",
    "integration__scopes",
    "granted_scopes",
    "integration__released_version__number",
    "integration__released_version__script_path",
)
_routing_queries: dict[tuple[str, bool], Prepared] = {}


def _routing_query(space_event: bool):
    """The space's (or site's) installations and the organization installations whose space
    selection covers it, as (id, level, status, ...) tuples; for stand-in ids."""
    org_level = Q(level=Installation.Level.ORGANIZATION, organization_id=_ORGANIZATION_ID)
    selected = Installation.selected_spaces.through.objects.filter(installation_id=OuterRef("pk"))
    if space_event:
        local = Q(level=Installation.Level.SPACE, space_id=_PLACE_ID)
        selected = selected.filter(space_id=_PLACE_ID)
    else:
        local = Q(level=Installation.Level.SITE, site_id=_PLACE_ID)
        selected = selected.filter(space__sites=_PLACE_ID)
    covered = Q(space_selection=Installation.SpaceSelection.ALL) | Q(Exists(selected))
    return Installation.objects.filter(local | (org_level & covered)).values_list(*_ROUTING_COLUMNS)


def _routing_rows(event) -> list[list]:
    """The rows of ``_routing_query`` for the event. The query is built and compiled once per
    database and kind of event, then run with the event's ids: building and compiling it at
    every event was more than half of firing's CPU (benchmarks/RESULTS.md, "Issue 12")."""
    space_event = event.type in SPACE_EVENTS
    key = (Installation.objects.db, space_event)
    if key not in _routing_queries:
        _routing_queries[key] = Prepared(_routing_query(space_event))
    return _routing_queries[key].rows(
        {
            _ORGANIZATION_ID: event.organization_id,
            _PLACE_ID: event.space_id if space_event else event.site_id,
        }
    )


def _undelivered(unscoped, reached: set[str], installed_locally: set[str]) -> list[Undelivered]:
    """One line per installation an event did not reach for lack of its scope, where the
    integration received it nowhere: its space or site installations, else its organization
    installation (as receiving goes: the local installation decides)."""
    local = installed_locally | {item.integration_id for at_org, item in unscoped if not at_org}
    return [
        missing
        for at_org, missing in unscoped
        if missing.integration_id not in reached
        and not (at_org and missing.integration_id in local)
    ]


def recipient_of(installation: Installation) -> Recipient:
    return Recipient(installation.pk, installation.integration.name, installation.configuration)
