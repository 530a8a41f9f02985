"""REST API of the host platform: one page restored alone as it was in a revision
(``documents.services.page_restore``)."""

from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...access import Action
from ...api.lookup import space_for
from ...api.permissions import ActsByRole
from ...api.schema import service_errors
from ...models import Space
from ...selectors import revisions_of
from .. import services as page_services
from .revisions import RevisionOutput, require_direct_save


class PageRestoreInput(serializers.Serializer):
    path = serializers.CharField(max_length=300, help_text="The page's path in that revision.")
    revision = serializers.CharField(
        max_length=32, help_text="A revision of the space holding the page as it should be."
    )


@service_errors("path", "revision", methods=["post"])
class SpacePageRestoreApi(APIView):
    """One page restored alone as it was in a revision (a deleted one comes back), as a new
    revision; the other pages stay as they are (``documents.services.page_restore``)."""

    permission_classes = [ActsByRole]
    access_actions = {"POST": Action.EDIT_CONTENT}
    installation_scopes = {"POST": "space:content:write"}

    @extend_schema(
        summary="Restore one page as it was in a revision",
        request=PageRestoreInput,
        responses={201: RevisionOutput},
        examples=[
            OpenApiExample(
                "A deleted page back",
                value={"path": "guide/install", "revision": "Rv2mXw9RtYb4LcN1sQ7k"},
                request_only=True,
            )
        ],
    )
    def post(self, request, space_id):
        space = space_for(request, space_id)
        self.check_object_permissions(request, space)
        require_direct_save(request.user, space)
        data = PageRestoreInput(data=request.data)
        data.is_valid(raise_exception=True)
        revision = (
            revisions_of(Space.objects.filter(pk=space.pk))
            .filter(pk=data.validated_data["revision"])
            .first()
        )
        if revision is None:
            raise ValidationError({"revision": ["no revision of this space has this id"]})
        restored = page_services.page_restore(
            space=space, path=data.validated_data["path"], revision=revision, author=request.user
        )
        return Response(RevisionOutput(restored).data, status=status.HTTP_201_CREATED)
