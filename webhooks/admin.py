"""The delivery log for operators: every delivery (runtime and webhook) with its webhook
attempts (each in full on its own page: headers one per line, the response body), the
controls "Redeliver" and "Send a test ping", webhook endpoints disabled after failing every
attempt (with "Re-enable") and the bulk redeliveries asked for.

Registered here rather than in the integrations app because the attempt log, redelivery and
pings are the webhook integration's (DESIGN.md, "Layout"); the integrations app stays unaware
of its consumers. Read-only: deliveries change only through the services, which the actions
call as the operator (``operators.Operator``: the operators' door, which Django's staff
permissions guard rather than the organization's roles).
"""

import json

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from docplatform.admin_paging import LimitedCount
from docplatform.events import payload_for
from docplatform.events.models import Delivery
from integrations.admin import ReadOnlyAdminMixin
from integrations.operators import Operator
from integrations.services.deliveries import installation_delivery_redeliver

from .models import BulkRedelivery, DeliveryAttempt, EndpointState
from .services.endpoints import endpoint_reenable
from .services.ping import webhook_ping_send


class DeliveryAttemptInline(ReadOnlyAdminMixin, admin.TabularInline):
    """The attempts within the page's width: long values (URL, headers, body, error) are
    cut short here, in full on the attempt's own page (the link)."""

    model = DeliveryAttempt
    fields = [
        "attempt",
        "started_at",
        "duration",
        "response",
        "outcome",
        "delay",
        "short_url",
        "short_error",
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    classes = ["delivery-attempts"]

    @admin.display(description="attempt")
    def attempt(self, obj):
        return f"{obj.chain}.{obj.number}"

    @admin.display(description="duration")
    def duration(self, obj):
        return f"{obj.duration_ms} ms"

    @admin.display(description="response")
    def response(self, obj):
        return f"HTTP {obj.status_code}" if obj.status_code else "none"

    @admin.display(description="next attempt after")
    def delay(self, obj):
        return seconds(obj.next_delay)

    @admin.display(description="URL")
    def short_url(self, obj):
        return shortened(obj.url, 60)

    @admin.display(description="error")
    def short_error(self, obj):
        return shortened(obj.error, 80)


def seconds(value: float | None) -> str:
    """A delay to 0.1 s ("-" when there is none)."""
    return "-" if value is None else f"{value:.1f} s"


def shortened(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def headers_lines(headers: dict):
    """Headers one per line (``Name: value``), as they travel."""
    if not headers:
        return "-"
    return format_html(
        '<pre class="headers">{}</pre>',
        "\n".join(f"{name}: {value}" for name, value in sorted(headers.items())),
    )


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(LimitedCount, ReadOnlyAdminMixin, admin.ModelAdmin):
    """One attempt in full: the request's headers (signature included) and the response."""

    list_display = ["id", "delivery", "attempt", "started_at", "status_code", "outcome", "delay"]
    list_select_related = ["delivery__event"]
    fields = [
        "delivery",
        "attempt",
        "started_at",
        "duration",
        "url",
        "request_headers_shown",
        "status_code",
        "response_headers_shown",
        "response_body_shown",
        "error",
        "outcome",
        "delay",
    ]
    readonly_fields = fields

    class Media:
        css = {"all": ["webhooks/admin.css"]}

    def has_module_permission(self, request):
        return False  # reached from a delivery's page, not the menu

    def has_delete_permission(self, request, obj=None):
        return False

    attempt = DeliveryAttemptInline.attempt
    duration = DeliveryAttemptInline.duration
    delay = DeliveryAttemptInline.delay

    @admin.display(description="request headers")
    def request_headers_shown(self, obj):
        return headers_lines(obj.request_headers)

    @admin.display(description="response headers")
    def response_headers_shown(self, obj):
        return headers_lines(obj.response_headers)

    @admin.display(description="response body (the first 1 KB)")
    def response_body_shown(self, obj):
        return format_html('<pre class="response-body">{}</pre>', obj.response_body or "")


@admin.register(Delivery)
class DeliveryAdmin(LimitedCount, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "id",
        "event_type",
        "installation",
        "organization",
        "consumer",
        "status",
        "chain",
        "attempts",
        "created_at",
        "completed_at",
    ]
    list_filter = ["status", "event__type", "consumer", "installation__organization"]
    search_fields = ["event_uuid", "=installation__id"]
    search_help_text = "An eventId, or an installation's id."
    list_select_related = ["event", "installation__integration", "installation__organization"]
    fields = [
        "id",
        "event_uuid",
        "event_type",
        "installation",
        "organization",
        "consumer",
        "status",
        "chain",
        "attempts",
        "outcome",
        "last_error",
        "created_at",
        "queued_at",
        "next_attempt_at",
        "completed_at",
        "payload",
    ]
    readonly_fields = fields
    inlines = [DeliveryAttemptInline]
    actions = ["redeliver", "send_test_ping"]

    class Media:
        css = {"all": ["webhooks/admin.css"]}

    def has_delete_permission(self, request, obj=None):
        return False  # old deliveries are purged by the retention task

    @admin.display(description="event", ordering="event__type")
    def event_type(self, obj):
        return obj.event.type

    @admin.display(description="organization", ordering="installation__organization")
    def organization(self, obj):
        return obj.installation.organization

    @admin.display(description="payload (the body as sent)")
    def payload(self, obj):
        return format_html(
            '<pre class="payload">{}</pre>',
            json.dumps(payload_for(obj.event, obj), indent=2, sort_keys=True),
        )

    @admin.action(description="Redeliver (same eventId, a new attempt chain)")
    def redeliver(self, request, queryset):
        operator = Operator(request.user)
        for delivery in queryset.select_related("installation"):
            try:
                installation_delivery_redeliver(user=operator, delivery=delivery)
            except ValidationError as error:
                self.message_user(request, f"{delivery.pk}: {error.messages[0]}", messages.ERROR)
            else:
                self.message_user(request, f"{delivery.pk}: queued again.", messages.SUCCESS)

    @admin.action(description="Send a test ping to the installations of the selected deliveries")
    def send_test_ping(self, request, queryset):
        installations = {delivery.installation_id: delivery.installation for delivery in queryset}
        for installation in installations.values():
            try:
                ping = webhook_ping_send(user=Operator(request.user), installation=installation)
            except ValidationError as error:
                self.message_user(request, f"{installation}: {error.messages[0]}", messages.ERROR)
            else:
                self.message_user(
                    request, f"{installation}: ping queued (delivery {ping.pk}).", messages.SUCCESS
                )


@admin.register(EndpointState)
class EndpointStateAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Webhook endpoints that were disabled (every attempt failed for days): why, and who
    re-enabled them. "Re-enable" delivers to them again."""

    list_display = ["installation", "disabled", "disabled_at", "disabled_reason", "reenabled_at"]
    list_filter = [("disabled_at", admin.EmptyFieldListFilter)]
    list_select_related = ["installation__integration", "reenabled_by"]
    fields = [
        "installation",
        "disabled_at",
        "disabled_reason",
        "reenabled_at",
        "reenabled_by",
    ]
    readonly_fields = fields
    actions = ["reenable"]

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="disabled", boolean=True)
    def disabled(self, obj):
        return obj.is_disabled

    @admin.action(description="Re-enable (deliver to them again)")
    def reenable(self, request, queryset):
        for state in queryset.select_related("installation"):
            try:
                endpoint_reenable(installation=state.installation, by=request.user)
            except ValidationError as error:
                self.message_user(request, f"{state}: {error.messages[0]}", messages.ERROR)
            else:
                self.message_user(request, f"{state.installation}: re-enabled.", messages.SUCCESS)


@admin.register(BulkRedelivery)
class BulkRedeliveryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "installation", "since", "progress", "created_at", "finished_at"]
    fields = [
        "installation",
        "since",
        "progress",
        "skipped",
        "requested_by",
        "created_at",
        "finished_at",
    ]
    readonly_fields = fields

    @admin.display(description="done")
    def progress(self, obj):
        return f"{obj.done} of {obj.total}"
