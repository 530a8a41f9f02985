"""Who has a page open in the editor (presence): a row per person and page, its time renewed
while their editor polls. Registered with the docplatform app (``docplatform.models``)."""

from django.conf import settings
from django.db import models


class PagePresence(models.Model):
    space = models.ForeignKey("docplatform.Space", on_delete=models.CASCADE, related_name="+")
    path = models.CharField(max_length=300)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    seen_at = models.DateTimeField()

    class Meta:
        app_label = "docplatform"
        constraints = [
            models.UniqueConstraint(fields=["space", "path", "user"], name="one_presence_per_page")
        ]

    def __str__(self):
        return f"{self.user_id} on {self.space_id}/{self.path}"
