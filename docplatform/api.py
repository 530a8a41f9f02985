"""REST API of the host platform (``/api/v1/``)."""

from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import Membership


class MembershipOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="organization.id")
    subdomain = serializers.CharField(source="organization.subdomain")
    title = serializers.CharField(source="organization.title")

    class Meta:
        model = Membership
        fields = ["id", "subdomain", "title", "role"]


class MeOutput(serializers.Serializer):
    username = serializers.CharField()
    organizations = MembershipOutput(many=True)


class MeApi(APIView):
    """The caller and the organizations they belong to."""

    serializer_class = MeOutput

    def get(self, request):
        memberships = Membership.objects.filter(user=request.user).select_related("organization")
        data = {"username": request.user.get_username(), "organizations": memberships}
        return Response(MeOutput(data).data)
