"""REST API of conversations (``/api/v1/orgs/{org}/conversations/``): support threads that
integrations post, and the pages of the organization's spaces that best match each one.

**Only integrations post** (POST): an installation token of the organization whose
installation holds ``conversations:ingest``; without the scope 403, an installation of another
organization 404. A person (session or personal token) gets 403: conversations come from
support tools, never typed in by hand. **Only admins read** (GET, ``Action.READ_CONVERSATIONS``):
a member or a reader gets 403 naming who may, anyone outside the organization 404, an
installation token 403 (it posts; it does not read what others posted).
"""

from datetime import datetime

from django.core.exceptions import PermissionDenied
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from ..access import Action
from ..api.errors import renamed_error_fields
from ..api.inputs import TextField
from ..api.lookup import organization_for, organization_of_installation
from ..api.permissions import ActsByRole
from ..api.schema import service_errors
from ..principals import is_machine
from . import selectors, services
from .models import Conversation

SCOPE = "conversations:ingest"
PERSON_REFUSAL = (
    "Only an integration posts conversations: an installation token whose installation holds "
    f"the scope {SCOPE}."
)

# --- Representations ------------------------------------------------------------------------


class StoredTimeField(serializers.DateTimeField):
    """A time kept as ISO 8601 text (a message's), written as the API writes every time."""

    def to_representation(self, value):
        return super().to_representation(datetime.fromisoformat(value))


class MessageOutput(serializers.Serializer):
    role = serializers.CharField(help_text="user (the person asking) or agent (support).")
    text = serializers.CharField()
    time = StoredTimeField()


class ConversationOutput(serializers.Serializer):
    id = serializers.CharField()
    externalId = serializers.CharField(source="external_id")
    installation = serializers.CharField(
        source="installation_id", help_text="The installation that posted it."
    )
    postedBy = serializers.CharField(source="posted_by", help_text="That installation, in words.")
    subject = serializers.CharField()
    url = serializers.CharField(
        allow_null=True, help_text="Where the conversation lives in its source; null if not given."
    )
    messages = MessageOutput(many=True, help_text="The thread, ordered by time.")
    answered = serializers.BooleanField(
        help_text="Whether a page of the organization's spaces matched it when it was last "
        "matched (posted, or the documentation changed)."
    )
    receivedAt = serializers.DateTimeField(source="received_at", help_text="First posted.")
    updatedAt = serializers.DateTimeField(source="updated_at")

    def to_representation(self, conversation):
        data = super().to_representation(conversation)
        data["url"] = data["url"] or None
        return data


class MatchSpaceOutput(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()


class MatchOutput(serializers.Serializer):
    space = MatchSpaceOutput()
    path = serializers.CharField(source="page.path")
    title = serializers.CharField(source="page.title")
    url = serializers.SerializerMethodField(help_text="The page in the reader.")

    def get_url(self, hit) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("docs:page", args=[hit.space.pk, hit.page.path])
        )


class ConversationDetailOutput(ConversationOutput):
    matches = serializers.SerializerMethodField(
        help_text="The pages of the organization's spaces that best match it now, best first; "
        "empty: the documentation does not answer it yet."
    )

    @extend_schema_field(MatchOutput(many=True))
    def get_matches(self, conversation) -> list:
        hits = selectors.conversation_matches(conversation)
        return MatchOutput(hits, many=True, context=self.context).data


# --- Input ----------------------------------------------------------------------------------


class MessageInput(serializers.Serializer):
    role = TextField(help_text="user (the person asking) or agent (support answering).")
    text = TextField(trim_whitespace=False, help_text="What was said, as plain text.")
    time = serializers.DateTimeField(help_text="When it was said (ISO 8601).")


class ConversationInput(serializers.Serializer):
    externalId = TextField(
        source="external_id",
        trim_whitespace=False,
        help_text="Its id in the source; posting it again merges into the same conversation.",
    )
    subject = TextField(trim_whitespace=False)
    url = TextField(
        required=False, allow_blank=True, trim_whitespace=False, help_text="An http(s) URL."
    )
    messages = serializers.ListField(
        child=MessageInput(), allow_empty=True, help_text="The thread, or its new messages."
    )


# --- Endpoints ------------------------------------------------------------------------------


@service_errors("externalId", "subject", "url", "messages", methods=["POST"])
class ConversationListApi(generics.ListAPIView):
    """The organization's conversations, newest first (GET: its admins); a conversation an
    integration posts (POST: an installation token holding ``conversations:ingest``)."""

    queryset = Conversation.objects.none()
    serializer_class = ConversationOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ_CONVERSATIONS}
    installation_scopes = {"POST": SCOPE}

    @extend_schema(summary="List an organization's conversations")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
        return selectors.conversations_of(organization)

    @extend_schema(
        summary="Post a support conversation",
        description="Idempotent per `externalId`: the first post answers 201, a post of the "
        "same `externalId` 200 with the same conversation, its messages merged by content "
        "(those not held yet are added, none removed); subject and URL are the latest post's.",
        request=ConversationInput,
        responses={201: ConversationOutput, 200: ConversationOutput},
        examples=[
            OpenApiExample(
                "A thread",
                value={
                    "externalId": "ticket-4711",
                    "subject": "How do I rotate a webhook secret?",
                    "url": "https://support.example.com/tickets/4711",
                    "messages": [
                        {
                            "role": "user",
                            "text": "Where do I rotate the signing secret of our webhook?",
                            "time": "2026-03-01T09:30:00Z",
                        },
                        {
                            "role": "agent",
                            "text": "Installations, then the webhook, then Rotate.",
                            "time": "2026-03-01T09:42:00Z",
                        },
                    ],
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, org):
        if not is_machine(request.user):
            raise PermissionDenied(PERSON_REFUSAL)
        organization, installation_id = organization_of_installation(request, org)
        data = ConversationInput(data=request.data)
        data.is_valid(raise_exception=True)
        with renamed_error_fields(external_id="externalId"):
            conversation, created = services.conversation_ingest(
                organization=organization,
                installation_id=installation_id,
                posted_by=request.user.actor_label,
                **data.validated_data,
            )
        return Response(
            ConversationOutput(conversation).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class ConversationDetailApi(generics.RetrieveAPIView):
    """One of the organization's conversations with the pages of its spaces that best match
    it now (its admins)."""

    queryset = Conversation.objects.none()
    serializer_class = ConversationDetailOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ_CONVERSATIONS}

    @extend_schema(summary="Read a conversation and the pages that match it")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_object(self):
        organization = organization_for(self.request, self.kwargs["org"])
        self.check_object_permissions(self.request, organization)
        return selectors.conversation_in(organization, self.kwargs["conversation_id"])
