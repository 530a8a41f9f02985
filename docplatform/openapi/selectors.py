"""Reads of OpenAPI documents, always within one organization."""

from django.db.models import Count, Max, QuerySet
from django.http import Http404

from ..models import Organization
from .models import OpenApiDocument, OpenApiVersion


def documents_of(organization: Organization) -> QuerySet:
    """The organization's documents by name, each with ``latest_number`` and
    ``version_count``."""
    return OpenApiDocument.objects.filter(organization=organization).annotate(
        latest_number=Max("versions__number"), version_count=Count("versions")
    )


def document_of(organization: Organization, name: str) -> OpenApiDocument:
    """One of the organization's documents, by name; 404 for any other."""
    document = documents_of(organization).filter(name=name).first()
    if document is None:
        raise Http404(f"The organization has no OpenAPI document named {name!r}.")
    return document


def versions_of(document: OpenApiDocument) -> QuerySet:
    """Its versions, the latest first, without their text (``defer``)."""
    return (
        OpenApiVersion.objects.filter(document=document)
        .select_related("uploaded_by")
        .defer("content", "spec", "operations")
    )


def version_of(document: OpenApiDocument, ref: str) -> OpenApiVersion:
    """Version ``ref`` (its number, or ``latest``) of the document; 404 for none."""
    versions = OpenApiVersion.objects.filter(document=document).select_related("uploaded_by")
    if ref == "latest":
        version = versions.order_by("-number").first()
    elif ref.isdigit() and len(ref) <= 9:
        version = versions.filter(number=int(ref)).first()
    else:
        version = None
    if version is None:
        raise Http404(f"The OpenAPI document {document.name!r} has no version {ref}.")
    return version


def latest_spec(organization_id: str, name: str) -> dict | None:
    """The parsed latest version of the organization's document ``name`` (what the OpenAPI
    operation block renders), or None when there is no such document."""
    return (
        OpenApiVersion.objects.filter(
            document__organization_id=organization_id, document__name=name
        )
        .order_by("-number")
        .values_list("spec", flat=True)
        .first()
    )


def latest_operations(organization_id: str):
    """(name, operations of its latest version) of each of the organization's documents,
    the most recently published first."""
    documents = OpenApiDocument.objects.filter(organization_id=organization_id).order_by(
        "-updated_at"
    )
    for document in documents.only("id", "name"):
        operations = (
            OpenApiVersion.objects.filter(document=document)
            .order_by("-number")
            .values_list("operations", flat=True)
            .first()
        )
        if operations is not None:
            yield document.name, operations
