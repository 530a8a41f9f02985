"""Writes of OpenAPI documents: ``openapi_publish`` adds a version (and the document, the
first time), audited."""

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max

from ..audit.services import audit_record
from ..models import Organization
from ..principals import is_machine
from .fetching import fetch_document
from .models import NAME_HELP, NAME_PATTERN, OpenApiDocument, OpenApiVersion
from .operations import operations_list
from .specs import parse_document


def _document_for(organization: Organization, name: str) -> OpenApiDocument:
    """The organization's document ``name``, made the first time, locked until commit (two
    uploads at once get consecutive numbers)."""
    documents = OpenApiDocument.objects.filter(organization=organization, name=name)
    if not documents.exists():
        try:
            with transaction.atomic():
                OpenApiDocument.objects.create(organization=organization, name=name)
        except IntegrityError:  # made at the same moment by another upload
            pass
    return documents.select_for_update(no_key=True).get()


def openapi_publish(
    *,
    organization: Organization,
    name: str,
    actor,
    content: str | None = None,
    url: str | None = None,
) -> OpenApiVersion:
    """A new version of the organization's document ``name`` from its text (``content``) or
    fetched from ``url``; checked in full before anything is written (a ValidationError on
    ``name``, ``content`` or ``url`` otherwise)."""
    if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):
        raise ValidationError({"name": NAME_HELP})
    if (content is None) == (url is None):
        message = "Give the document's text (content) or the URL to fetch it from (url), one."
        raise ValidationError({"content": message})
    text = fetch_document(url, field="url") if url is not None else content
    parsed = parse_document(
        text, field="url" if url is not None else "content", max_bytes=settings.OPENAPI_MAX_BYTES
    )
    with transaction.atomic():
        document = _document_for(organization, name)
        last = document.versions.aggregate(last=Max("number"))["last"] or 0
        version = OpenApiVersion.objects.create(
            document=document,
            number=last + 1,
            content=text,
            spec=parsed.spec,
            operations=[list(operation) for operation in operations_list(parsed.spec)],
            format_version=parsed.format_version,
            size=parsed.size,
            source_url=url or "",
            uploaded_by=None if is_machine(actor) else actor,
            uploaded_by_label=actor.actor_label if is_machine(actor) else actor.get_username(),
        )
        document.save(update_fields=["updated_at"])
        audit_record(
            action="openapi.published",
            actor=actor,
            target=document,
            organization=organization,
            details={
                "name": name,
                "version": version.number,
                "formatVersion": parsed.format_version,
                "size": parsed.size,
                **({"url": url} if url else {}),
            },
        )
    return version
