"""The review queue of public listings in the Django admin (the operators' door): each
version waiting for review with its manifest, its scopes in words, the hosts its code may
call, its code's size and the checks' findings; operators approve it, or reject it with a
reason, through the review service (``services.reviews``), as ``Operator``s."""

import json

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db.models.functions import Length
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join

from .models import ListingReview
from .operators import Operator
from .scope_words import network_access, scope_label
from .services.reviews import APPROVE, REJECT, listing_review_decide


class QueueFilter(admin.SimpleListFilter):
    """The queue (pending versions) unless another status is chosen."""

    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [*ListingReview.Status.choices, ("all", "All")]

    def choices(self, changelist):
        value = self.value() or ListingReview.Status.PENDING
        for lookup, title in self.lookup_choices:
            yield {
                "selected": value == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request, queryset):
        value = self.value() or ListingReview.Status.PENDING
        return queryset if value == "all" else queryset.filter(status=value)


class RejectForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="Mailed to the owning organization's admins.",
    )


@admin.register(ListingReview)
class ListingReviewAdmin(admin.ModelAdmin):
    list_display = [
        "integration",
        "number",
        "organization",
        "status",
        "asks_for_new",
        "code_size",
        "created_at",
        "reviewer",
        "decided_at",
    ]
    list_filter = [QueueFilter, "automatic"]
    search_fields = ["version__integration__name", "version__integration__organization__subdomain"]
    list_select_related = ["version__integration__organization", "reviewer"]
    fields = [
        "integration",
        "number",
        "organization",
        "status",
        "automatic",
        "reviewer",
        "reason",
        "decided_at",
        "scopes_in_words",
        "hosts",
        "new_scopes",
        "new_hosts",
        "code_size",
        "checker_findings",
        "manifest",
    ]
    readonly_fields = fields
    actions = ["approve", "reject"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        """Without the code and the secrets: the code's size is counted by the database."""
        return (
            super()
            .get_queryset(request)
            .defer("version__bundle", "version__secrets")
            .annotate(code_bytes=Length("version__bundle"))
        )

    @admin.display(description="integration", ordering="version__integration__name")
    def integration(self, obj):
        return obj.version.integration.name

    @admin.display(description="version", ordering="version__number")
    def number(self, obj):
        return obj.version.number

    @admin.display(description="organization")
    def organization(self, obj):
        return obj.version.integration.organization.subdomain

    @admin.display(description="asks for, beyond the approved version")
    def asks_for_new(self, obj):
        return ", ".join([*obj.new_scopes, *obj.new_hosts]) or "-"

    @admin.display(description="code size")
    def code_size(self, obj):
        return f"{obj.code_bytes} bytes" if obj.code_bytes else "no code"

    @admin.display(description="scopes")
    def scopes_in_words(self, obj):
        scopes = (obj.version.listing or {}).get("scopes") or []
        if not scopes:
            return "none"
        rows = ((scope_label(scope), scope) for scope in scopes)
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{} <code>{}</code></li>", rows))

    @admin.display(description="hosts its code may call")
    def hosts(self, obj):
        access = network_access(obj.version.network_fetch)
        hosts = format_html_join("", "<li><code>{}</code></li>", ((h,) for h in access["hosts"]))
        return format_html("{}<ul>{}</ul>", access["summary"], hosts)

    @admin.display(description="the checks' findings")
    def checker_findings(self, obj):
        if not obj.findings:
            return "none"
        rows = ((finding["path"], finding["message"]) for finding in obj.findings)
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{}: {}</li>", rows))

    @admin.display(description="manifest")
    def manifest(self, obj):
        return format_html(
            "<pre>{}</pre>", json.dumps(obj.version.manifest, indent=2, sort_keys=True)
        )

    def _decide(self, request, queryset, decision: str, reason: str = "") -> None:
        operator = Operator(request.user)
        done, refused = 0, []
        for review in queryset:
            try:
                listing_review_decide(
                    user=operator, review=review, decision=decision, reason=reason
                )
            except ValidationError as error:
                refused.extend(error.messages)
            else:
                done += 1
        verb = "Approved" if decision == APPROVE else "Rejected"
        if done:
            self.message_user(request, f"{verb}: {done}.", messages.SUCCESS)
        for message in refused:
            self.message_user(request, message, messages.ERROR)

    @admin.action(description="Approve the selected versions: other organizations see them")
    def approve(self, request, queryset):
        self._decide(request, queryset, APPROVE)

    @admin.action(description="Reject the selected versions, with a reason")
    def reject(self, request, queryset):
        """First a page asking for the reason (mailed to the owners), then the rejection."""
        form = RejectForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            self._decide(request, queryset, REJECT, form.cleaned_data["reason"])
            return None
        return TemplateResponse(
            request,
            "admin/integrations/listingreview/reject.html",
            {
                **self.admin_site.each_context(request),
                "title": "Reject public listings",
                "opts": self.model._meta,
                "reviews": queryset.select_related("version__integration"),
                "form": form,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )
