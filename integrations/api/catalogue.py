"""Integrations: the catalogue the caller may see, publishing by upload, versions and the
install link. An integration the caller may not see answers 404."""

import tempfile
from pathlib import Path

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from docplatform import access
from docplatform.api.inputs import QueryParameters
from docplatform.api.schema import service_errors

from ..gateway.failures import RuntimeFailure
from ..models import Integration, IntegrationVersion, ListingReview
from ..policies import may_act
from ..selectors import (
    install_link_url,
    integration_catalogue,
    integrations_visible_to,
    listing_review_of,
)
from ..services import Outcome, integration_publish_folder, integration_unpublish
from ..services.installations import install_link_rotate
from .bundles import MAX_BUNDLE_BYTES, MIB, extract_bundle, refused
from .failures import failure_response

#: The versions an integration's representation shows.
VERSIONS_SHOWN = ("latest_version", "released_version")
VERSIONS_NOT_READ = tuple(
    f"{version}__{field}"
    for version in VERSIONS_SHOWN
    for field in ("bundle", "manifest", "listing", "secrets")
)
# Room for the multipart envelope around the bundle itself.
MULTIPART_OVERHEAD_BYTES = 64 * 1024


class VersionOutput(serializers.Serializer):
    number = serializers.IntegerField()
    channel = serializers.ChoiceField(
        choices=IntegrationVersion.Channel.choices,
        help_text="release: published by publish; development: by dev, run only by "
        "development installations.",
    )
    contentHash = serializers.CharField(source="content_hash")
    createdAt = serializers.DateTimeField(source="created_at")


class VersionDetailOutput(VersionOutput):
    publishedBy = serializers.CharField(
        source="published_by.username", allow_null=True, default=None
    )


class ExternalLinkOutput(serializers.Serializer):
    label = serializers.CharField()
    url = serializers.CharField()


class BlockOutput(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()


class IntegrationOutput(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    description = serializers.CharField()
    summary = serializers.CharField()
    organization = serializers.CharField(source="organization_id")
    visibility = serializers.ChoiceField(choices=Integration.Visibility.choices)
    target = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    categories = serializers.ListField(child=serializers.CharField())
    blocks = BlockOutput(many=True)
    externalLinks = ExternalLinkOutput(many=True, source="external_links")
    configurations = serializers.JSONField(
        help_text="The manifest's configuration schema (account, site, space)."
    )
    latestVersion = VersionOutput(
        source="latest_version", help_text="The newest version, of either channel."
    )
    releasedVersion = VersionOutput(
        source="released_version",
        allow_null=True,
        help_text="What installations run (development installations: until dev publishes "
        "a development version); the listing above is its manifest's.",
    )
    updatedAt = serializers.DateTimeField(source="updated_at")


class ProblemOutput(serializers.Serializer):
    path = serializers.CharField()
    message = serializers.CharField()


class ListingReviewOutput(serializers.Serializer):
    status = serializers.ChoiceField(choices=ListingReview.Status.choices)
    reason = serializers.CharField()


class PublishOutput(serializers.Serializer):
    integration = serializers.CharField(source="version.integration.name")
    version = VersionOutput(help_text="The version published, or the one with this code.")
    releasedVersion = VersionOutput(source="version.integration.released_version")
    created = serializers.BooleanField(help_text="False when the content was unchanged.")
    outcome = serializers.ChoiceField(
        choices=Outcome.CHOICES,
        help_text="created: a new version; unchanged: this code runs already; reused: "
        "development installations run an older version with this code again.",
    )
    warnings = ProblemOutput(many=True)
    installLink = serializers.SerializerMethodField(
        method_name="get_install_link",
        help_text="An unlisted integration's shared install link (null for another visibility).",
    )
    listing = serializers.SerializerMethodField(
        method_name="get_listing",
        help_text="A public version's review: pending (other organizations are offered the "
        "approved one, if any, until an operator approves it), approved or rejected; null for "
        "a version that needs none.",
    )

    def get_install_link(self, result) -> str | None:
        return install_link_url(result.version.integration)

    @extend_schema_field(ListingReviewOutput(allow_null=True))
    def get_listing(self, result) -> dict | None:
        review = listing_review_of(result.version)
        return ListingReviewOutput(review).data if review is not None else None


class CatalogueFilter(QueryParameters):
    category = serializers.CharField(required=False, max_length=64)
    search = serializers.CharField(required=False, max_length=200)


#: How the upload itself can be refused (the FileField's codes; the bundle's own, "invalid").
BUNDLE_ERRORS = ("invalid", "required", "empty", "no_name", "max_length", "null")


class BundleInput(serializers.Serializer):
    bundle = serializers.FileField(
        help_text=f"A .zip or .tar.gz of the integration folder, at most "
        f"{MAX_BUNDLE_BYTES // MIB} MiB; service-manifest.yaml at its root or inside its one "
        "top-level folder. Secrets are given as values: ${{ env.NAME }} is not resolved here."
    )
    channel = serializers.ChoiceField(
        choices=IntegrationVersion.Channel.choices,
        default=IntegrationVersion.Channel.RELEASE,
        help_text="release (publish): every installation runs it; development (dev): only "
        "development installations do. An integration's first version is released.",
    )


@service_errors("bundle", codes=BUNDLE_ERRORS, methods=["post"])
@service_errors("channel", codes=("invalid_choice",), methods=["post"])
@service_errors("version", methods=["post"])  # the code of an older released version
@service_errors("KEY", methods=["post"])  # the manifest's problems, by their path
class IntegrationListApi(generics.ListAPIView):
    """The integrations the caller may see (GET); publish one by upload (POST)."""

    queryset = Integration.objects.none()
    serializer_class = IntegrationOutput
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="List the integrations the caller may see",
        description="The released public integrations and every released integration of the "
        "caller's organizations (another organization's unlisted or private ones are not "
        "listed), optionally of a `category` or matching `search` (in the name, title or "
        "description).",
        parameters=[CatalogueFilter],
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = CatalogueFilter(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return (
            integration_catalogue(self.request.user, **query.validated_data)
            .select_related(*VERSIONS_SHOWN)
            .defer(*VERSIONS_NOT_READ)
        )

    @extend_schema(
        summary="Publish an integration by uploading its bundle",
        description="A multipart upload of the integration folder (`integration publish` and "
        "`dev` send it). The manifest is checked and the code loaded by the runtime host; "
        "201 with a new version, 200 when this code was published already (`outcome`). Its "
        "manifest's problems are 400s whose `attr` is their path in the manifest; 502, 503 "
        "or 504 when the runtime host could not check the code. Admins of the manifest's "
        "organization only.",
        request={"multipart/form-data": BundleInput},
        responses={201: PublishOutput, 200: PublishOutput},
    )
    def post(self, request):
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > MAX_BUNDLE_BYTES + MULTIPART_OVERHEAD_BYTES:
            raise refused(f"the bundle is larger than {MAX_BUNDLE_BYTES // MIB} MiB")
        data = BundleInput(data=request.data)
        data.is_valid(raise_exception=True)
        with tempfile.TemporaryDirectory(prefix="docplatform-bundle-") as folder:
            root = extract_bundle(data.validated_data["bundle"], Path(folder))
            try:
                result = integration_publish_folder(
                    path=root,
                    publisher=request.user,
                    env=None,
                    channel=data.validated_data["channel"],
                )
            except RuntimeFailure as failure:  # the runtime host could not check the code
                return failure_response(failure)
        return Response(
            PublishOutput(result).data,
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class IntegrationDetailFilter(QueryParameters):
    install_token = serializers.CharField(
        required=False, max_length=64, help_text="An unlisted integration's install link token."
    )


def integration_for(request, name: str, *, install_token: str | None = None) -> Integration:
    visible = integrations_visible_to(request.user, install_token=install_token)
    return get_object_or_404(
        visible.select_related(*VERSIONS_SHOWN).defer(*VERSIONS_NOT_READ), name=name
    )


@service_errors("integration", methods=["delete"])
class IntegrationDetailApi(APIView):
    """An integration the caller may see (an unlisted one with its install link token);
    unpublish it (DELETE: every version; its owners only, refused while it is installed)."""

    @extend_schema(
        summary="Get an integration",
        description="An integration the caller may see: a public one, one of the caller's "
        "organizations, or an unlisted one with its `install_token`; else 404.",
        parameters=[IntegrationDetailFilter],
        responses=IntegrationOutput,
    )
    def get(self, request, name):
        query = IntegrationDetailFilter(data=request.query_params)
        query.is_valid(raise_exception=True)
        integration = integration_for(request, name, **query.validated_data)
        return Response(IntegrationOutput(integration).data)

    @extend_schema(
        summary="Unpublish an integration",
        description="Removes the integration with every version: admins of its organization "
        "only (403), refused while it is installed anywhere (400 naming `integration`).",
        responses={204: None},
    )
    def delete(self, request, name):
        integration_unpublish(integration=owned_integration_for(request, name))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(get=extend_schema(summary="List an integration's versions"))
class IntegrationVersionListApi(generics.ListAPIView):
    """The published versions, newest first: for members of the owning organization."""

    queryset = IntegrationVersion.objects.none()
    serializer_class = VersionDetailOutput

    def get_queryset(self):
        integration = integration_for(self.request, self.kwargs["name"])
        if not access.may(self.request.user, access.Action.READ, integration.organization):
            raise PermissionDenied("only members of the owning organization see its versions")
        return integration.versions.select_related("published_by")


class InstallLinkOutput(serializers.Serializer):
    installToken = serializers.CharField(
        help_text="Give it as installToken when installing, or as ?install_token= to see the "
        "integration while it is unlisted."
    )


def owned_integration_for(request, name: str) -> Integration:
    """An integration of an organization the caller administers (its install link, its
    versions); 403 for other callers who may see it."""
    integration = integration_for(request, name)
    if not may_act(request.user, access.Action.PUBLISH, integration):
        raise PermissionDenied(access.refusal(access.Action.PUBLISH))
    return integration


class InstallLinkApi(APIView):
    """The install link token of an integration (owning organization's admins)."""

    @extend_schema(summary="Get an integration's install link token", responses=InstallLinkOutput)
    def get(self, request, name):
        integration = owned_integration_for(request, name)
        return Response(InstallLinkOutput({"installToken": integration.install_link_token}).data)


class InstallLinkRotateApi(APIView):
    """Replace the install link token: the old link stops working."""

    @extend_schema(
        summary="Replace an integration's install link token",
        request=None,
        responses=InstallLinkOutput,
    )
    def post(self, request, name):
        token = install_link_rotate(integration=owned_integration_for(request, name))
        return Response(InstallLinkOutput({"installToken": token}).data)
