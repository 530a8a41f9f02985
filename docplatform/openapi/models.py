"""An organization's OpenAPI documents and their versions. Registered with the docplatform
app (``docplatform.models``)."""

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from ..ids import new_id

NAME_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
NAME_HELP = (
    "A slug unique in the organization: 1 to 64 lowercase letters, digits and hyphens, "
    "not starting or ending with a hyphen."
)


class OpenApiDocument(models.Model):
    """A named OpenAPI document of an organization; what it says is in its versions, the
    latest of which the OpenAPI operation block follows."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    organization = models.ForeignKey(
        "docplatform.Organization", on_delete=models.CASCADE, related_name="+"
    )
    name = models.CharField(
        max_length=64, validators=[RegexValidator(NAME_PATTERN)], help_text=NAME_HELP
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"], name="openapi_document_name_unique"
            )
        ]

    def __str__(self):
        return self.name


class OpenApiVersion(models.Model):
    """One upload of a document, never changed: its text as uploaded (JSON or YAML), the
    document parsed (``spec``, what the block renders), its format version (``2.0``,
    ``3.0.3``, ``3.1.0``), its size and who uploaded it (a person, or an integration whose
    token did: ``uploaded_by_label``)."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    document = models.ForeignKey(OpenApiDocument, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.TextField(help_text="The document's text as uploaded.")
    spec = models.JSONField(help_text="The document parsed.")
    operations = models.JSONField(
        default=list,
        help_text="Its operations, [method, path, operationId, summary] each: the quick insert "
        "menu's entries, read without the document.",
    )
    format_version = models.CharField(max_length=20)
    size = models.PositiveIntegerField(help_text="Bytes of the text (UTF-8).")
    source_url = models.URLField(max_length=2000, blank=True)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    uploaded_by_label = models.CharField(max_length=300)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "number"], name="openapi_version_number_unique"
            )
        ]

    def __str__(self):
        return f"{self.document_id} v{self.number}"
