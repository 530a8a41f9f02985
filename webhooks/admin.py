"""The delivery log for operators: every delivery (runtime and webhook) with its webhook
attempts, and the controls "Redeliver" and "Send a test ping".

Registered here rather than in the integrations app because the attempt log, redelivery and
pings are the webhook integration's (DESIGN.md, "Layout"); the integrations app stays unaware
of its consumers. Read-only: deliveries change only through the services.
"""

import json

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from docplatform.events import payload_for
from docplatform.events.models import Delivery
from docplatform.events.outbox import delivery_redeliver
from integrations.admin import ReadOnlyAdminMixin

from .models import DeliveryAttempt
from .services_admin import webhook_ping_send


class DeliveryAttemptInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = DeliveryAttempt
    fields = [
        "chain",
        "number",
        "started_at",
        "duration_ms",
        "url",
        "status_code",
        "error",
        "outcome",
        "next_delay",
        "response_headers",
        "response_body",
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
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
            "<pre>{}</pre>", json.dumps(payload_for(obj.event, obj), indent=2, sort_keys=True)
        )

    @admin.action(description="Redeliver (same eventId, a new attempt chain)")
    def redeliver(self, request, queryset):
        for delivery in queryset:
            try:
                delivery_redeliver(delivery)
            except ValidationError as error:
                self.message_user(request, f"{delivery.pk}: {error.messages[0]}", messages.ERROR)
            else:
                self.message_user(request, f"{delivery.pk}: queued again.", messages.SUCCESS)

    @admin.action(description="Send a test ping to the installations of the selected deliveries")
    def send_test_ping(self, request, queryset):
        installations = {delivery.installation_id: delivery.installation for delivery in queryset}
        for installation in installations.values():
            try:
                ping = webhook_ping_send(installation=installation)
            except ValidationError as error:
                self.message_user(request, f"{installation}: {error.messages[0]}", messages.ERROR)
            else:
                self.message_user(
                    request, f"{installation}: ping queued (delivery {ping.pk}).", messages.SUCCESS
                )
