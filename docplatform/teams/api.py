"""REST API of an organization's people (``/api/v1/orgs/{org}/members/``), the invitations
that bring them in (``/api/v1/orgs/{org}/invitations/``) and accepting one
(``/api/v1/invitations/accept/``).

Any member reads the members; admins invite, revoke, change roles and remove. Someone else
of the organization gets 403 naming who may, anyone outside it 404, an installation token 403,
and nothing is written when refused (``ActsByRole`` decides before the body is read).
"""

from django.core.exceptions import ValidationError
from django.http import Http404
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from drf_standardized_errors.openapi_serializers import (
    ClientErrorEnum,
    ErrorResponse403Serializer,
    ErrorResponse404Serializer,
)
from rest_framework import exceptions, generics, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import access
from ..access import Action
from ..api.lookup import organization_for
from ..api.permissions import ActsByRole
from ..api.schema import service_errors
from ..api.throttles import AnonRateThrottle, UserRateThrottle
from ..models import Membership, Organization
from ..principals import is_machine
from . import services
from .models import Invitation
from .selectors import invitation_of, invitations_open

ROLE_CHOICES = Membership.Role.choices

# --- Representations ------------------------------------------------------------------------


class MemberOutput(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    email = serializers.CharField(source="user.email", help_text="Empty when not known.")
    role = serializers.ChoiceField(choices=ROLE_CHOICES)
    joinedAt = serializers.DateTimeField(source="created_at")


class InvitationOutput(serializers.Serializer):
    id = serializers.CharField()
    email = serializers.EmailField()
    role = serializers.ChoiceField(choices=ROLE_CHOICES)
    invitedBy = serializers.CharField(
        source="invited_by.username",
        allow_null=True,
        default=None,
        help_text="null: an operator, or an account deleted since.",
    )
    createdAt = serializers.DateTimeField(source="created_at")
    expiresAt = serializers.DateTimeField(source="expires_at")


class InvitationCreatedOutput(serializers.Serializer):
    id = serializers.CharField(source="invitation.id")
    email = serializers.EmailField(source="invitation.email")
    role = serializers.ChoiceField(source="invitation.role", choices=ROLE_CHOICES)
    expiresAt = serializers.DateTimeField(source="invitation.expires_at")
    url = serializers.URLField(
        help_text="The link that accepts the invitation, once: in this answer and the mail "
        "only, never again."
    )
    emailSent = serializers.BooleanField(
        source="email_sent",
        help_text="false: the mail server failed; the invitation stands, give the link yourself.",
    )


class InvitationInput(serializers.Serializer):
    email = serializers.EmailField(max_length=254)
    role = serializers.ChoiceField(choices=ROLE_CHOICES)


class MemberRoleInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=ROLE_CHOICES)


class InvitationAcceptInput(serializers.Serializer):
    token = serializers.CharField(
        max_length=128, help_text="The last part of the invitation's link."
    )
    username = serializers.CharField(
        required=False,
        max_length=150,
        help_text="Without authentication: the new account's username.",
    )
    password = serializers.CharField(
        required=False,
        max_length=4096,
        trim_whitespace=False,
        write_only=True,
        help_text="Without authentication: the new account's password.",
    )


class JoinedOrganizationOutput(serializers.Serializer):
    id = serializers.CharField()
    subdomain = serializers.CharField()
    title = serializers.CharField()


class InvitationAcceptedOutput(serializers.Serializer):
    username = serializers.CharField()
    organization = JoinedOrganizationOutput()
    role = serializers.ChoiceField(choices=ROLE_CHOICES, help_text="Your role in it now.")
    joined = serializers.BooleanField(
        help_text="false: you were a member already and keep your role; the link is used up."
    )


GONE_CODES = [f"invitation_{state}" for state in services.InvitationGone.REASONS]
InvitationGoneResponse = inline_serializer(
    "InvitationGoneResponse",
    {
        "type": serializers.ChoiceField(choices=ClientErrorEnum.choices),
        "errors": inline_serializer(
            "InvitationGoneError",
            {
                "code": serializers.CharField(help_text=", ".join(GONE_CODES) + "."),
                "detail": serializers.CharField(),
                "attr": serializers.CharField(allow_null=True),
            },
            many=True,
        ),
    },
)


class InvitationGoneError(exceptions.APIException):
    status_code = status.HTTP_410_GONE
    default_code = "invitation_gone"


def organization_acted_on(view) -> Organization:
    """The organization of the URL, once the caller's role allows the method's action."""
    organization = organization_for(view.request, view.kwargs["org"])
    view.check_object_permissions(view.request, organization)
    return organization


# --- Members --------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List an organization's members",
        description="Its people with their roles, admins first; any member reads them.",
    )
)
class MembersApi(generics.ListAPIView):
    """The organization's people and their roles."""

    queryset = access.members_of(None)  # its model, for the schema; never evaluated
    serializer_class = MemberOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.READ}

    def get_queryset(self):
        return access.members_of(organization_acted_on(self))


@service_errors("role", methods=["patch"])
@service_errors("username", methods=["delete"])
class MemberApi(APIView):
    """Change a member's role or remove them: admins only. The last admin can be neither
    demoted nor removed (400)."""

    permission_classes = [ActsByRole]
    access_actions = {"PATCH": Action.MANAGE_MEMBERS, "DELETE": Action.MANAGE_MEMBERS}

    @extend_schema(
        summary="Change a member's role",
        description="Admins only. Demoting the last admin is refused (400 naming `role`).",
        request=MemberRoleInput,
        responses=MemberOutput,
        examples=[OpenApiExample("Make a reader", value={"role": "reader"}, request_only=True)],
    )
    def patch(self, request, org, username):
        organization = organization_acted_on(self)
        data = MemberRoleInput(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_role_change(
            organization=organization,
            username=username,
            role=data.validated_data["role"],
            actor=request.user,
        )
        return Response(MemberOutput(membership).data)

    @extend_schema(
        summary="Remove a member",
        description="Admins only. Their sessions and personal tokens reach nothing of the "
        "organization from then on. Removing the last admin is refused (400 naming "
        "`username`).",
        responses={204: None},
    )
    def delete(self, request, org, username):
        services.membership_remove(
            organization=organization_acted_on(self), username=username, actor=request.user
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Invitations ----------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List an organization's open invitations",
        description="The invitations whose link still works (not used, revoked or expired), "
        "newest first; admins only. Links are not shown again.",
    )
)
class InvitationsApi(generics.ListAPIView):
    """Open invitations (GET); invite someone by e-mail (POST)."""

    queryset = Invitation.objects.none()
    serializer_class = InvitationOutput
    permission_classes = [ActsByRole]
    access_actions = {"GET": Action.MANAGE_MEMBERS, "POST": Action.MANAGE_MEMBERS}

    def get_queryset(self):
        return invitations_open(organization_acted_on(self))

    @extend_schema(
        summary="Invite someone by e-mail",
        description="Admins only. The answer carries the accept link (`url`), which is also "
        "mailed to `email`; it works once, for `INVITATION_DAYS` days (7 by default). When "
        "the mail server fails the invitation stands: `emailSent` is false.",
        request=InvitationInput,
        responses={201: InvitationCreatedOutput},
        examples=[
            OpenApiExample(
                "A new member",
                value={"email": "erin@example.com", "role": "member"},
                request_only=True,
            ),
            OpenApiExample(
                "The invitation made",
                value={
                    "id": "k3Qm9XbT2vLp8RfZ1aYc",
                    "email": "erin@example.com",
                    "role": "member",
                    "expiresAt": "2030-01-08T09:30:00Z",
                    "url": "https://docs.example.com/invitations/Zr4oE3YyS0m6u9fTqk2xWj8N1cVbA5dG"
                    "7hLpQeRiUoI/",
                    "emailSent": True,
                },
                response_only=True,
                status_codes=["201"],
            ),
        ],
    )
    def post(self, request, org):
        organization = organization_acted_on(self)
        data = InvitationInput(data=request.data)
        data.is_valid(raise_exception=True)
        made = services.invitation_create(
            organization=organization, invited_by=request.user, **data.validated_data
        )
        response = Response(InvitationCreatedOutput(made).data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


@service_errors("invitation", methods=["delete"])
class InvitationApi(APIView):
    """Revoke an invitation: admins only."""

    permission_classes = [ActsByRole]
    access_actions = {"DELETE": Action.MANAGE_MEMBERS}

    @extend_schema(
        summary="Revoke an invitation",
        description="Its link stops working at once. One revoked or expired already stays as "
        "it is (204); one accepted cannot be revoked (400 naming `invitation`: remove the "
        "member instead).",
        responses={204: None},
    )
    def delete(self, request, org, invitation_id):
        invitation = invitation_of(organization_acted_on(self), invitation_id)
        if invitation is None:
            raise Http404
        services.invitation_revoke(invitation=invitation, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationAcceptApi(APIView):
    """Accept an invitation with its link's token. Signed in (a session or a personal token):
    you join as yourself. Without authentication: give a username and a password, and an
    account is made (its e-mail address the invited one) and joins. Throttled as every call
    is (``API_THROTTLE_ANON`` for calls without authentication)."""

    permission_classes = [AllowAny]
    throttle_classes = [AnonRateThrottle, UserRateThrottle]

    @extend_schema(
        summary="Accept an invitation",
        description="201: you joined; 200: you were a member already and keep your role (the "
        "link is used up). A link works once: used, revoked or expired it answers 410 and "
        "grants nothing; a token no invitation has answers 404.",
        request=InvitationAcceptInput,
        responses={
            201: InvitationAcceptedOutput,
            200: InvitationAcceptedOutput,
            403: ErrorResponse403Serializer,
            404: ErrorResponse404Serializer,
            410: OpenApiResponse(
                InvitationGoneResponse, description="The link was used, revoked or expired."
            ),
        },
        examples=[
            OpenApiExample(
                "Signed in: join as yourself",
                value={"token": "Zr4oE3YyS0m6u9fTqk2xWj8N1cVbA5dG7hLpQeRiUoI"},
                request_only=True,
            ),
            OpenApiExample(
                "Without an account: make one",
                value={
                    "token": "Zr4oE3YyS0m6u9fTqk2xWj8N1cVbA5dG7hLpQeRiUoI",
                    "username": "erin",
                    "password": "a long passphrase of yours",
                },
                request_only=True,
            ),
        ],
    )
    def post(self, request):
        if is_machine(request.user):
            raise exceptions.PermissionDenied("An installation token cannot accept invitations.")
        data = InvitationAcceptInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        try:
            if access.is_person(request.user):
                user, membership, joined = self.join_as_caller(request.user, fields)
            else:
                user, membership = services.invitation_accept_new_account(
                    token=fields["token"],
                    username=fields.get("username", ""),
                    password=fields.get("password", ""),
                    password2=fields.get("password", ""),
                )
                joined = True
        except services.InvitationGone as gone:
            raise InvitationGoneError(str(gone), code=f"invitation_{gone.state}") from None
        output = InvitationAcceptedOutput(
            {
                "username": user.get_username(),
                "organization": membership.organization,
                "role": membership.role,
                "joined": joined,
            }
        )
        return Response(output.data, status=status.HTTP_201_CREATED if joined else 200)

    @staticmethod
    def join_as_caller(user, fields: dict):
        if "username" in fields or "password" in fields:
            raise ValidationError(
                {
                    "username": [
                        f"You are signed in as {user.get_username()}: leave out username "
                        "and password to join as yourself."
                    ]
                }
            )
        membership, joined = services.invitation_accept(token=fields["token"], user=user)
        return user, membership, joined
