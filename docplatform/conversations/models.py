"""A support conversation an installation posted. Registered with the docplatform app
(``docplatform.models``).

The installation is named by a string foreign key, as an outbox delivery's recipient is
(``events.models``): a string is not an import, the host imports no plug-in app.
Uninstalling an integration deletes the conversations it brought.
"""

from django.db import models

from ..ids import new_id

EXTERNAL_ID_MAX_LENGTH = 200
SUBJECT_MAX_LENGTH = 500
URL_MAX_LENGTH = 2000


class Conversation(models.Model):
    """One support thread, as its integration last posted it.

    ``messages`` is the thread in order, each ``{"role": "user" | "agent", "text": ...,
    "time": ISO 8601 in UTC}`` (bounded by ``CONVERSATIONS_MAX_MESSAGES``,
    ``CONVERSATIONS_MAX_MESSAGE_LENGTH`` and ``CONVERSATIONS_MAX_TOTAL_LENGTH``).
    ``answered`` is whether some page of the organization's spaces matched it when it was
    last matched (posted, or the documentation changed): what the page's "unanswered" filter
    reads; the pages shown beside it are searched afresh."""

    class Role(models.TextChoices):
        USER = "user", "User"
        AGENT = "agent", "Agent"

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    organization = models.ForeignKey(
        "docplatform.Organization", on_delete=models.CASCADE, related_name="conversations"
    )
    installation = models.ForeignKey(
        "integrations.Installation", on_delete=models.CASCADE, related_name="conversations"
    )
    posted_by = models.CharField(
        max_length=200, help_text="The installation that posted it, in words (its integration)."
    )
    external_id = models.CharField(
        max_length=EXTERNAL_ID_MAX_LENGTH, help_text="The conversation's id in its source."
    )
    subject = models.CharField(max_length=SUBJECT_MAX_LENGTH)
    url = models.URLField(max_length=URL_MAX_LENGTH, blank=True, help_text="Where it lives.")
    messages = models.JSONField(default=list)
    answered = models.BooleanField(default=False)
    received_at = models.DateTimeField(auto_now_add=True, help_text="First posted.")
    updated_at = models.DateTimeField(auto_now=True, help_text="Last changed by a post.")

    class Meta:
        app_label = "docplatform"
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "installation", "external_id"],
                name="one_conversation_per_external_id",
            )
        ]
        indexes = [
            models.Index(fields=["organization", "-received_at"], name="conversation_newest_idx"),
        ]

    def __str__(self):
        return f"{self.subject} ({self.external_id})"

    def user_text(self) -> str:
        """What the person asked: the text of the user's messages."""
        return "\n".join(m["text"] for m in self.messages if m["role"] == self.Role.USER)
