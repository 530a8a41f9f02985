import json

from django.contrib import admin, messages
from django.utils.html import format_html
from docplatform_sdk.manifest import CATEGORIES

from docplatform.admin_paging import LimitedCount

from . import review_admin  # noqa: F401 - the review queue of public listings
from .models import (
    Installation,
    Integration,
    IntegrationAsset,
    IntegrationLog,
    IntegrationVersion,
)
from .operators import Operator
from .policies import effective_status, installation_scopes, new_permissions_notice
from .selectors import json_list_has, shown_configuration
from .services.installations import installation_pause, installation_resume


class CategoryFilter(admin.SimpleListFilter):
    title = "category"
    parameter_name = "category"

    def lookups(self, request, model_admin):
        return [(category, category) for category in CATEGORIES]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(json_list_has("categories", self.value()))
        return queryset


def _pretty_json(value):
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, sort_keys=True))


class ReadOnlyAdminMixin:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class IntegrationVersionInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = IntegrationVersion
    fields = ["number", "channel", "content_hash", "published_by", "created_at"]
    readonly_fields = fields
    extra = 0
    show_change_link = True
    can_delete = False


@admin.register(Integration)
class IntegrationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Integrations change only by publishing a manifest, so the admin shows them read-only."""

    list_display = [
        "name",
        "title",
        "organization",
        "visibility",
        "target",
        "released_version",
        "shared_version",
        "latest_version",
    ]
    list_filter = ["visibility", CategoryFilter, "organization", "target"]
    search_fields = ["name", "title", "description"]
    fields = [
        "name",
        "title",
        "organization",
        "visibility",
        "target",
        "description",
        "summary",
        "categories",
        "scopes",
        "released_version",
        "shared_version",
        "development_version",
        "latest_version",
        "configuration_schema",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields
    inlines = [IntegrationVersionInline]

    @admin.display(description="configurations")
    def configuration_schema(self, obj):
        return _pretty_json(obj.configurations)


class IntegrationAssetInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = IntegrationAsset
    fields = ["kind", "position", "path", "content_type", "width", "height"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(IntegrationVersion)
class IntegrationVersionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """A version is immutable; its secrets are never shown, only their names."""

    list_display = [
        "integration",
        "number",
        "channel",
        "content_hash",
        "published_by",
        "created_at",
    ]
    list_filter = ["integration__visibility", "integration__organization"]
    search_fields = ["integration__name", "content_hash"]
    fields = [
        "integration",
        "number",
        "channel",
        "content_hash",
        "published_by",
        "created_at",
        "script_path",
        "secret_names",
        "manifest_snapshot",
    ]
    readonly_fields = fields
    inlines = [IntegrationAssetInline]

    @admin.display(description="secrets (names only)")
    def secret_names(self, obj):
        return ", ".join(obj.secret_names) or "none"

    @admin.display(description="manifest")
    def manifest_snapshot(self, obj):
        return _pretty_json(obj.manifest)

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Installation)
class InstallationAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Installations change through their setup flow, so operators only pause and resume them
    here (the operators' door: Django's staff permissions guard it, not the organization's
    roles; the audit log records the operator). Credentials and the installation's API
    token are never shown."""

    list_display = [
        "id",
        "integration",
        "organization",
        "level",
        "where",
        "shown_status",
        "permissions_notice",
        "created_at",
    ]
    list_filter = ["status", "level", "integration", "organization"]
    search_fields = ["id", "integration__name", "organization__subdomain"]
    list_select_related = ["integration", "organization", "space", "site", "parent"]
    fields = [
        "id",
        "integration",
        "organization",
        "level",
        "parent",
        "where",
        "shown_status",
        "reasons",
        "scopes",
        "permissions_notice",
        "shown_configuration",
        "external_ids",
        "space_selection",
        "development",
        "created_by",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields
    actions = ["pause", "resume"]

    def has_delete_permission(self, request, obj=None):
        return False  # uninstalling runs the uninstall service, from the marketplace or API

    @admin.display(description="installed in")
    def where(self, obj):
        return obj.space or obj.site or obj.organization

    @admin.display(description="status")
    def shown_status(self, obj):
        """The effective status (``policies.effective_status``): under a paused or pending
        organization installation, that; its own status otherwise."""
        shown = effective_status(obj)
        if shown.status == obj.status:
            return shown.label
        return f"{shown.label} (its own status: {obj.status})"

    @admin.display(description="status reasons")
    def reasons(self, obj):
        return _pretty_json(effective_status(obj).reasons)

    @admin.display(description="scopes in force")
    def scopes(self, obj):
        return ", ".join(installation_scopes(obj)) or "none"

    @admin.display(description="new permissions")
    def permissions_notice(self, obj):
        """Shown until an admin of the organization approves (marketplace or API)."""
        return new_permissions_notice(obj) or "-"

    @admin.display(description="configuration (button credentials redacted)")
    def shown_configuration(self, obj):
        return _pretty_json(shown_configuration(obj))

    @admin.action(description="Pause the selected installations")
    def pause(self, request, queryset):
        for installation in queryset:
            installation_pause(user=Operator(request.user), installation=installation)
        self.message_user(request, f"{len(queryset)} paused.", messages.SUCCESS)

    @admin.action(description="Resume the selected installations")
    def resume(self, request, queryset):
        operator = Operator(request.user)
        statuses = [installation_resume(user=operator, installation=i).status for i in queryset]
        summary = ", ".join(f"{statuses.count(s)} {s}" for s in sorted(set(statuses)))
        self.message_user(request, f"Resumed: {summary}.", messages.SUCCESS)


@admin.register(IntegrationLog)
class IntegrationLogAdmin(LimitedCount, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Integration logs, as their owners see them through the API and the marketplace: read
    only (the purge removes them after INTEGRATION_LOG_RETENTION_DAYS)."""

    list_display = [
        "time",
        "integration",
        "installation",
        "version",
        "kind",
        "event_or_request",
        "outcome",
        "status",
        "duration_ms",
    ]
    list_filter = ["kind", "outcome", "integration"]
    search_fields = ["integration__name", "installation__id", "event", "request", "error"]
    list_select_related = ["integration"]
    date_hierarchy = "time"
    fields = [
        "time",
        "integration",
        "installation",
        "version",
        "kind",
        "event",
        "request",
        "outcome",
        "status",
        "duration_ms",
        "printed",
        "error_text",
    ]
    readonly_fields = fields

    @admin.display(description="event or request")
    def event_or_request(self, obj):
        return obj.event or obj.request or "-"

    @admin.display(description="output")
    def printed(self, obj):
        return format_html("<pre>{}</pre>", obj.output) if obj.output else "-"

    @admin.display(description="error")
    def error_text(self, obj):
        return format_html("<pre>{}</pre>", obj.error) if obj.error else "-"

    def has_delete_permission(self, request, obj=None):
        return False
