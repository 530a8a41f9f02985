"""What published sites hold and record: the spaces a site publishes in their order, a
visitor's last counted view of a page, and the visitors' feedback on pages. Registered with
the docplatform app (``docplatform.models``)."""

from django.db import models


class SiteSpace(models.Model):
    """A space a site publishes, at its place in the site's list: the order its admins gave,
    which the site's home page, navigation and search follow."""

    site = models.ForeignKey(
        "docplatform.Site", on_delete=models.CASCADE, related_name="placements"
    )
    space = models.ForeignKey(
        "docplatform.Space", on_delete=models.CASCADE, related_name="site_placements"
    )
    position = models.PositiveIntegerField(default=0)

    class Meta:
        app_label = "docplatform"
        ordering = ["position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["site", "space"], name="one_place_per_site_and_space")
        ]

    def __str__(self):
        return f"{self.space_id} at {self.position} on {self.site_id}"


class SiteVisit(models.Model):
    """When a visitor last viewed a page of a site and ``site_view`` fired for it: at most once
    per visitor, site, page and ``SITE_VIEW_INTERVAL`` (``docplatform.visits``, the one rule)."""

    site = models.ForeignKey("docplatform.Site", on_delete=models.CASCADE, related_name="+")
    visitor = models.CharField(max_length=80, help_text="anon:<anonymous id> or addr:<digest>")
    page = models.CharField(max_length=400, help_text="<space id>/<page path>, or the URL's digest")
    last_fired_at = models.DateTimeField()

    class Meta:
        app_label = "docplatform"
        constraints = [
            models.UniqueConstraint(
                fields=["site", "visitor", "page"], name="one_site_visit_per_visitor_page"
            )
        ]

    def __str__(self):
        return f"{self.visitor} on {self.site_id}/{self.page}"


class PageFeedback(models.Model):
    """A visitor's rating of a page (with an optional comment): one per visitor and page (a
    space's page is its path, whatever the revision), a second rating replaces the first."""

    class Rating(models.TextChoices):
        GOOD = "good", "Good"
        OK = "ok", "OK"
        BAD = "bad", "Bad"

    site = models.ForeignKey("docplatform.Site", on_delete=models.CASCADE, related_name="+")
    space = models.ForeignKey(
        "docplatform.Space", on_delete=models.CASCADE, related_name="feedback"
    )
    page_path = models.CharField(max_length=300)
    page = models.ForeignKey(
        "docplatform.Page",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The page as it was rated (its revision's row).",
    )
    visitor = models.CharField(max_length=80, help_text="The site's anonymous visitor id.")
    rating = models.CharField(max_length=8, choices=Rating.choices)
    comment = models.TextField(blank=True, max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "docplatform"
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["space", "page_path", "visitor"], name="one_feedback_per_visitor_page"
            )
        ]
        indexes = [
            models.Index(fields=["space", "page_path", "-updated_at"], name="feedback_page_idx")
        ]

    def __str__(self):
        return f"{self.rating} on {self.space_id}/{self.page_path}"


class VisitorTokenUse(models.Model):
    """A visitor token (its ``jti``) a site has taken, kept until the token expires: a token
    starts one session only, a replayed one is refused (``sites.visitor_sessions``)."""

    jti = models.CharField(max_length=200)
    site = models.ForeignKey("docplatform.Site", on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        app_label = "docplatform"
        constraints = [
            models.UniqueConstraint(fields=["site", "jti"], name="one_use_per_visitor_token")
        ]

    def __str__(self):
        return f"{self.jti} on {self.site_id}"
