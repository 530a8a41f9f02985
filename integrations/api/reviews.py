"""The review of an integration's public listing, for operators (staff): approve or reject
the newest version waiting for review (README, "Review of public listings")."""

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform.api.permissions import IsStaffPerson
from docplatform.api.schema import service_errors

from ..models import ListingReview
from ..operators import Operator
from ..selectors import published_integration
from ..services.reviews import DECISIONS, listing_review_decide, pending_review_of


class ListingDecisionInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=DECISIONS)
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=4000,
        help_text="Required to reject: mailed to the owning organization's admins.",
    )


class ListingDecisionOutput(serializers.Serializer):
    integration = serializers.CharField(source="version.integration.name")
    version = serializers.IntegerField(source="version.number")
    status = serializers.ChoiceField(choices=ListingReview.Status.choices)
    reason = serializers.CharField()
    reviewer = serializers.CharField(source="reviewer.username", allow_null=True, default=None)
    decidedAt = serializers.DateTimeField(source="decided_at", allow_null=True)


@service_errors("decision", "reason", "version", methods=["post"])
class IntegrationReviewApi(APIView):
    permission_classes = [IsStaffPerson]

    @extend_schema(
        summary="Approve or reject an integration's public listing",
        description="For operators (staff; others get 403): decides the newest version of "
        "the integration waiting for review. Approved, every organization sees and installs "
        "it; rejected (a `reason` is required, 400 naming `reason` without one), its owners "
        "alone do. The decision is mailed to the owning organization's admins. 400 naming "
        "`version` when no version waits for review.",
        request=ListingDecisionInput,
        responses=ListingDecisionOutput,
        examples=[
            OpenApiExample("Approve", value={"decision": "approve"}, request_only=True),
            OpenApiExample(
                "Reject",
                value={"decision": "reject", "reason": "It asks for more than it uses."},
                request_only=True,
            ),
        ],
    )
    def post(self, request, name):
        data = ListingDecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        integration = published_integration(name)
        if integration is None:
            raise Http404("No such integration.")
        review = pending_review_of(integration)
        if review is None:
            raise serializers.ValidationError(
                {"version": [f"no version of {name} waits for review"]}
            )
        review = listing_review_decide(
            user=Operator(request.user),
            review=review,
            decision=data.validated_data["decision"],
            reason=data.validated_data.get("reason", ""),
        )
        return Response(ListingDecisionOutput(review).data)
