"""One row of an organization's audit log. Registered with the docplatform app
(``docplatform.models``).

The organization is kept by id, not by a foreign key, so its rows outlive what they speak of
(a deleted space, a removed member, a deleted organization). A row without an organization
is a person's own (their personal tokens): the audit logs of the organizations they belong to
show it."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    class ActorKind(models.TextChoices):
        PERSON = "person", "Person"
        INSTALLATION = "installation", "Installation"
        OPERATOR = "operator", "Operator"

    organization_id = models.CharField(max_length=32, blank=True, db_index=True)
    at = models.DateTimeField(default=timezone.now)
    actor_kind = models.CharField(max_length=16, choices=ActorKind.choices)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_id = models.CharField(
        max_length=64, blank=True, help_text="A user's or an installation's id"
    )
    actor_label = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=32)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=300, blank=True)
    details = models.JSONField(default=dict, blank=True)
    address = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["organization_id", "-at"], name="audit_by_organization")]
        verbose_name_plural = "audit entries"

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_label} {self.action} {self.target_label}"
