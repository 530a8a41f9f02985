"""Integration logs: a line per call of an integration's code (and per event an installation
did not receive for lack of a scope), with filters and a follow mode (``?after=<cursor>``).

- ``GET integrations/<name>/logs/``: the integration's owners (admins of its organization,
  who publish it) see the lines of all its installations, or of one (``installation=``).
- ``GET installations/<id>/logs/``: an installing organization's admins see their
  installation's lines (and those of the space and site installations under it).

An integration or installation the caller may not see answers 404, and so does the log of
another organization's integration; its organization's people who are not its admins get 403
naming who may.
"""

import re
from datetime import UTC, datetime, time, timedelta

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.access import Action
from docplatform.api.inputs import MAX_LIMIT, QueryParameters, WholeNumberField

from ..models import IntegrationLog
from ..policies import act_check
from ..selectors import installation_logs, integration_installation, integration_logs, log_page
from .catalogue import integration_for
from .installation_output import InstallationLookup

DURATION = re.compile(r"([0-9]{1,6})([smhd])")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
LARGEST_CURSOR = 2**63 - 1


@extend_schema_field(OpenApiTypes.STR)
class SinceField(serializers.Field):
    """A time (ISO 8601; without a zone it is UTC) or a duration back from now (``30s``,
    ``15m``, ``2h``, ``7d``)."""

    default_error_messages = {
        "invalid": "give an ISO 8601 time (2026-01-31T12:00:00Z) or a duration back from now "
        "(30s, 15m, 2h, 7d)"
    }

    def to_internal_value(self, data) -> datetime:
        text = str(data).strip()
        duration = DURATION.fullmatch(text)
        try:
            if duration:
                amount = timedelta(**{UNITS[duration[2]]: int(duration[1])})
                return timezone.now() - amount
            moment = parse_datetime(text)
            if moment is None and (day := parse_date(text)) is not None:
                moment = datetime.combine(day, time.min)
        except (ValueError, OverflowError):
            self.fail("invalid")
        if moment is None:
            self.fail("invalid")
        return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)

    def to_representation(self, value):
        return value.isoformat()


class LogFilter(QueryParameters):
    after = WholeNumberField(
        required=False,
        max_value=LARGEST_CURSOR,
        help_text="A cursor from a previous answer's next: only newer lines (follow mode).",
    )
    since = SinceField(
        required=False, help_text="An ISO 8601 time, or a duration back from now: 30s, 15m, 2h, 7d."
    )
    kind = serializers.ChoiceField(choices=IntegrationLog.Kind.values, required=False)
    outcome = serializers.ChoiceField(choices=IntegrationLog.Outcome.values, required=False)
    limit = WholeNumberField(
        required=False, min_value=1, max_value=MAX_LIMIT, default=100, help_text="At most 500."
    )


class IntegrationLogFilter(LogFilter):
    installation = serializers.CharField(
        required=False, max_length=32, help_text="An installation's id: its lines only."
    )


class LogLineOutput(serializers.Serializer):
    id = serializers.IntegerField()
    cursor = serializers.SerializerMethodField(help_text="Give it as after= to follow.")
    time = serializers.DateTimeField(help_text="When the call started.")
    installationId = serializers.CharField(source="installation_id", allow_null=True)
    integration = serializers.CharField(source="integration.name")
    version = serializers.IntegerField(allow_null=True)
    kind = serializers.ChoiceField(choices=IntegrationLog.Kind.values)
    event = serializers.SerializerMethodField(help_text="The event type, or null.")
    test = serializers.BooleanField(
        help_text="The call took a sample event (`trigger`, Send test event): made-up data."
    )
    request = serializers.SerializerMethodField(
        help_text='"GET /path" below the public endpoint (no query), "render <component>" or '
        '"action <name> on <component>", or null.'
    )
    outcome = serializers.ChoiceField(choices=IntegrationLog.Outcome.values)
    status = serializers.IntegerField(allow_null=True, help_text="HTTP-like status, or null.")
    durationMs = serializers.IntegerField(source="duration_ms", allow_null=True)
    output = serializers.CharField(help_text="What the code printed: stdout and stderr, 4 KB.")
    error = serializers.SerializerMethodField(help_text="The error with its traceback, or null.")

    def get_cursor(self, line) -> str:
        return str(line.pk)

    def get_event(self, line) -> str | None:
        return line.event or None

    def get_request(self, line) -> str | None:
        return line.request or None

    def get_error(self, line) -> str | None:
        return line.error or None


class LogPageOutput(serializers.Serializer):
    items = LogLineOutput(many=True)
    next = serializers.CharField(help_text="Give it as after= to get only newer lines.")


def _answer(lines, query: dict) -> Response:
    page = log_page(
        lines,
        after=query.get("after"),
        since=query.get("since"),
        kind=query.get("kind"),
        outcome=query.get("outcome"),
        limit=query["limit"],
    )
    return Response({"items": LogLineOutput(page.lines, many=True).data, "next": str(page.next)})


class IntegrationLogsApi(APIView):
    """The log of an integration, all its installations: for its owners."""

    @extend_schema(
        summary="Read an integration's log",
        description="A line per call of the integration's code, every installation's (or "
        "one's: `installation`), oldest first within a page of `limit` lines; `since` keeps "
        "the newer lines, `after` (a previous answer's `next`) follows the log. The owning "
        "organization's admins only (403).",
        parameters=[IntegrationLogFilter],
        responses=LogPageOutput,
    )
    def get(self, request, name):
        integration = integration_for(request, name)
        act_check(request.user, Action.READ_LOGS, integration)
        query = IntegrationLogFilter(data=request.query_params)
        query.is_valid(raise_exception=True)
        installation = None
        if "installation" in query.validated_data:
            installation = integration_installation(
                integration, query.validated_data["installation"]
            )
            if installation is None:
                raise serializers.ValidationError(
                    {"installation": ["not an installation of this integration"]}
                )
        return _answer(integration_logs(integration, installation), query.validated_data)


class InstallationLogsApi(InstallationLookup, APIView):
    """The log of an installation: for the admins of its organization."""

    access_actions = {"GET": Action.READ_LOGS}

    @extend_schema(
        summary="Read an installation's log",
        description="A line per call of the integration's code for this installation (and "
        "those under it), with the same filters and follow mode as an integration's log. "
        "The installing organization's admins only (403).",
        parameters=[LogFilter],
        responses=LogPageOutput,
    )
    def get(self, request, installation_id):
        installation = self.installation(installation_id)
        query = LogFilter(data=request.query_params)
        query.is_valid(raise_exception=True)
        return _answer(installation_logs(installation), query.validated_data)
