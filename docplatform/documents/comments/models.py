"""A comment on a page of a space. Registered with the docplatform app
(``docplatform.models``)."""

from django.conf import settings
from django.db import models

from ...ids import new_id

BODY_MAX_LENGTH = 10_000


class Comment(models.Model):
    """A comment on a page of a space, or on a change request (``change_request``: then
    ``page_path`` is "" for the change request as a whole or one of its pages, and ``anchor``
    is lines of that page or null).

    A thread is a comment without ``reply_to`` (its root) and the comments replying to it;
    a reply always points at the root, so threads are one level deep. Only a root is resolved.

    ``page_path`` names the page, not one revision's row of it: a comment stays with the page
    across revisions. ``anchor`` is ``{"heading": "<slug>"}``, ``{"lines": [from, to]}`` (1-based,
    inclusive) or null for the whole page, as it was when the thread was started."""

    id = models.CharField(primary_key=True, max_length=32, default=new_id, editable=False)
    space = models.ForeignKey("docplatform.Space", on_delete=models.CASCADE, related_name="+")
    page_path = models.CharField(max_length=300)
    anchor = models.JSONField(null=True, blank=True)
    change_request = models.ForeignKey(
        "docplatform.ChangeRequest",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="comments",
    )
    body = models.TextField(max_length=BODY_MAX_LENGTH, help_text="Markdown.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    reply_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["created_at"]
        indexes = [models.Index(fields=["space", "page_path"], name="comments_of_a_page")]

    def __str__(self):
        return f"comment {self.pk} on {self.space_id}/{self.page_path}"

    @property
    def resolved(self) -> bool:
        return self.resolved_at is not None

    @property
    def thread_id(self) -> str:
        return self.reply_to_id or self.pk
