"""An invitation to join an organization: an e-mailed, single-use, expiring link. Registered
with the docplatform app (``docplatform.models``)."""

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from ..ids import new_id


class Invitation(models.Model):
    """Only the SHA-256 of the link's token is stored: the link is shown to the admin who
    invited and mailed to the invited address, never again."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    organization = models.ForeignKey(
        "docplatform.Organization", on_delete=models.CASCADE, related_name="invitations"
    )
    email = models.EmailField()
    role = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.email} to {self.organization_id} ({self.role})"

    @staticmethod
    def generate_token() -> str:
        return secrets.token_urlsafe(32)

    @staticmethod
    def hash_token(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @property
    def state(self) -> str:
        """``open``, ``accepted``, ``revoked`` or ``expired``."""
        if self.accepted_at is not None:
            return "accepted"
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "open"
