"""The operators' admin. A change that the platform announces goes through its service
(``services``), as from the API or the pages, so that admin edits fire their events too."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpResponseRedirect
from django.utils.html import format_html

from .admin_paging import LimitedCount
from .audit.models import AuditEntry
from .documents.services import PageConflict, check_page_edit, page_save
from .gitsync.models import GitSync
from .models import ApiToken, Membership, Organization, Page, Revision, Site, Space
from .page_versions import page_dicts
from .services import api_token_revoke, space_visibility_set
from .sites.addresses import site_url
from .sites.models import PageFeedback, SiteSpace


def space_label(space: Space) -> str:
    """A space as the admin's choices name it: two spaces of the same title in two
    organizations are told apart ("API reference (acme)")."""
    return f"{space.title} ({space.organization.subdomain})"


class SpaceChoices:
    """Spaces offered in a form's choices are named with their organization."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.related_model is Space and field is not None:
            field.queryset = field.queryset.select_related("organization")
            field.label_from_instance = space_label
        return field


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["subdomain", "title", "id", "internal", "created_at"]
    list_filter = ["internal"]
    search_fields = ["subdomain", "title", "id"]
    readonly_fields = ["id", "created_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["role", "organization"]
    search_fields = ["user__username", "organization__subdomain"]
    autocomplete_fields = ["user", "organization"]


@admin.register(Space)
class SpaceAdmin(admin.ModelAdmin):
    list_display = ["title", "id", "organization", "visibility", "current_revision", "created_at"]
    list_filter = ["visibility", "organization"]
    search_fields = ["title", "id"]
    readonly_fields = ["id", "created_at", "current_revision"]

    def save_model(self, request, obj, form, change):
        """A changed visibility is set by ``space_visibility_set``, which fires
        ``space_visibility_updated``; the other fields are saved as usual."""
        if not change or "visibility" not in form.changed_data:
            super().save_model(request, obj, form, change)
            return
        visibility = obj.visibility
        with transaction.atomic():
            obj.visibility = form.initial["visibility"]
            super().save_model(request, obj, form, change)
            space_visibility_set(space=obj, visibility=visibility)


@admin.register(Revision)
class RevisionAdmin(LimitedCount, admin.ModelAdmin):
    list_display = ["id", "space", "number", "message", "author", "page_count", "created_at"]
    list_filter = ["space__organization"]
    search_fields = ["id", "message", "space__title"]
    readonly_fields = [
        "id",
        "space",
        "number",
        "parent",
        "author",
        "message",
        "page_count",
        "created_at",
    ]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class PageAdminForm(forms.ModelForm):
    """The editor's checks (one home: ``documents.services.check_page_edit``), named beside
    the admin's fields."""

    class Meta:
        model = Page
        fields = ["path", "title", "condition", "body"]

    def clean(self):
        cleaned = super().clean()
        original = Page.objects.get(pk=self.instance.pk)
        edited = {key: cleaned.get(key) or "" for key in ("path", "title", "condition", "body")}
        try:
            current = original.space.current_revision_id
            check_page_edit(page_dicts(current), original.path, edited)
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                for problem in problems:
                    self.add_error(field if field in self.fields else None, problem)
        return cleaned


@admin.register(Page)
class PageAdmin(LimitedCount, admin.ModelAdmin):
    """A page of a space's current revision can be edited: saving makes a new revision
    through the editor's service (``documents.services.page_save``), which fires
    ``space_content_updated``; the row itself never changes (revisions are snapshots). Pages
    of older revisions are read-only: restore one from the space's history."""

    form = PageAdminForm
    list_display = ["title", "path", "space", "valid_from", "valid_to"]
    list_filter = ["space__organization"]
    search_fields = ["title", "path", "body"]
    fields = ["id", "space", "valid_from", "valid_to", "path", "title", "condition", "body"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        if obj is None:
            return super().has_change_permission(request)
        return obj.current and super().has_change_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        return ["id", "space", "valid_from", "valid_to"]

    def save_model(self, request, obj, form, change):
        original = Page.objects.get(pk=obj.pk)
        try:
            revision = page_save(
                space=original.space,
                path=original.path,
                new_path=obj.path,
                title=obj.title,
                body=obj.body,
                condition=obj.condition,
                message="Edited in the admin",
                author=request.user,
                # the revision that wrote the version opened: a change since is merged
                based_on=original.space.revisions.get(number=original.valid_from).pk,
            )
        except PageConflict:
            request.page_conflict = True
            return
        self.message_user(request, f"Saved as the new revision {revision.pk}.", messages.INFO)

    def response_change(self, request, obj):
        if getattr(request, "page_conflict", False):
            self.message_user(
                request,
                "The page changed since you opened it: nothing was saved. Open it again.",
                messages.ERROR,
            )
            return HttpResponseRedirect(request.path)
        return super().response_change(request, obj)


class SiteSpaceInline(SpaceChoices, admin.TabularInline):
    """The spaces a site publishes, in the order of their positions: a list of the spaces
    named with their organization (an autocomplete would name them by title alone)."""

    model = SiteSpace
    extra = 0


@admin.register(Site)
class SiteAdmin(admin.ModelAdmin):
    list_display = ["title", "id", "organization", "published", "published_at", "created_at"]
    list_filter = ["published", "organization"]
    search_fields = ["title", "id"]
    readonly_fields = ["id", "published_at", "created_at"]
    inlines = [SiteSpaceInline]

    @admin.display(description="Published at")
    def published_at(self, site):
        if not site.pk:
            return "-"
        address = site_url(site)
        return format_html('<a href="{}" rel="noopener" target="_blank">{}</a>', address, address)


@admin.register(PageFeedback)
class PageFeedbackAdmin(LimitedCount, admin.ModelAdmin):
    """What visitors said about pages: read only (a rating is the visitor's)."""

    list_display = ["updated_at", "rating", "space", "page_path", "site", "comment"]
    list_filter = ["rating", "site"]
    search_fields = ["page_path", "comment"]
    fields = ["site", "space", "page_path", "page", "visitor", "rating", "comment"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False


@admin.register(GitSync)
class GitSyncAdmin(admin.ModelAdmin):
    """Each space's syncs with its repository: read only (they are the syncs' record)."""

    list_display = ["created_at", "space", "direction", "status", "commit", "reason"]
    list_filter = ["status", "direction"]
    search_fields = ["space__title", "commit", "url"]
    readonly_fields = [field.name for field in GitSync._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are listed by name and hint only; the token itself is never stored."""

    list_display = [
        "name",
        "user",
        "hint",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at", "expires_at"]
    search_fields = ["name", "user__username"]
    fields = ["user", "name", "hint", "created_at", "expires_at", "last_used_at", "revoked_at"]
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        """Through ``api_token_revoke``, as the pages and the API revoke."""
        for token in queryset:
            api_token_revoke(token=token, actor=request.user)
        self.message_user(request, f"{len(queryset)} revoked.")


@admin.register(AuditEntry)
class AuditEntryAdmin(LimitedCount, admin.ModelAdmin):
    """The audit log of every organization: read only, since it is the record of who did
    what (its one writer is ``audit.services.audit_record``)."""

    list_display = [
        "at",
        "organization_id",
        "actor_kind",
        "actor_label",
        "action",
        "target_type",
        "target_label",
        "address",
    ]
    list_filter = ["action", "actor_kind"]
    search_fields = ["actor_label", "target_label", "organization_id"]
    date_hierarchy = "at"
    readonly_fields = [field.name for field in AuditEntry._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
