"""REST API of the audit log (``/api/v1/orgs/{org}/audit-log/``): who did what, to which
object, when and from where, in one organization.

Its admins only (``Action.READ_AUDIT_LOG``): a member or a reader gets 403 naming who may,
anyone outside the organization 404, an installation token 403 (what an integration did is
in the log; the log is not for integrations to read).
"""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers

from ..access import Action
from ..api.inputs import QueryParameters
from ..api.lookup import organization_for
from ..api.permissions import ActsByRole
from .models import AuditEntry
from .selectors import audit_entries

ACTION_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"

# --- Representations ------------------------------------------------------------------------


class AuditActorOutput(serializers.Serializer):
    kind = serializers.ChoiceField(
        source="actor_kind",
        choices=AuditEntry.ActorKind.choices,
        help_text="A person, an installation acting with its token, or an operator (the "
        "Django admin or a command).",
    )
    id = serializers.SerializerMethodField(
        help_text="A person's user id or an installation's id; null for an operator's command."
    )
    name = serializers.CharField(
        source="actor_label", help_text="A person's username; an installation's integration."
    )

    def get_id(self, entry) -> str | None:
        return entry.actor_id or None


class AuditTargetOutput(serializers.Serializer):
    type = serializers.CharField(
        source="target_type", help_text="What it acted on: space, site, invitation, ..."
    )
    id = serializers.CharField(source="target_id")
    name = serializers.CharField(
        source="target_label", help_text="Its name then: the row may be gone since."
    )


class AuditEntryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = AuditActorOutput(source="*")
    action = serializers.CharField(help_text="What was done: space.created, role.changed, ...")
    target = AuditTargetOutput(source="*")
    details = serializers.DictField(help_text="What changed, never a secret value.")
    address = serializers.IPAddressField(
        allow_null=True, help_text="The address of the request that did it; null: no request."
    )


# --- The log --------------------------------------------------------------------------------


class AuditLogFilter(QueryParameters):
    actor = serializers.CharField(
        required=False,
        max_length=200,
        help_text="Only what this person (a username) or installation (its id) did.",
    )
    action = serializers.RegexField(
        ACTION_PATTERN,
        required=False,
        max_length=64,
        error_messages={
            "invalid": "an action is lower-case words joined by dots, e.g. invitation.created, "
            "or its first word, e.g. invitation"
        },
        help_text="Only this action (invitation.created) or every action it begins "
        "(invitation: created, accepted, revoked).",
    )
    since = serializers.DateTimeField(
        required=False, help_text="Only rows at or after this time (ISO 8601)."
    )
    until = serializers.DateTimeField(
        required=False, help_text="Only rows before this time (ISO 8601)."
    )

    def validate(self, data):
        if "since" in data and "until" in data and data["since"] >= data["until"]:
            raise serializers.ValidationError({"until": "must be after since"})
        return data


class AuditLogApi(generics.ListAPIView):
    """The audit log of one of the caller's organizations, newest first: every change of
    who may do what and every change an integration made, each with its actor, target, time
    and address. A person's own rows (their personal tokens) appear in the log of each
    organization they belong to. Its admins only."""

    queryset = AuditEntry.objects.none()
    serializer_class = AuditEntryOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ_AUDIT_LOG}

    @extend_schema(summary="List an organization's audit log", parameters=[AuditLogFilter])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
        query = AuditLogFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return audit_entries(organization, **query.validated_data)
