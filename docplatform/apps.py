from django.apps import AppConfig
from django.db.models.signals import post_migrate


class DocplatformConfig(AppConfig):
    name = "docplatform"
    verbose_name = "Documentation platform"

    def ready(self):
        from django.urls import register_converter

        from .api.inputs import (
            DeliveryIdConverter,
            IntegrationNameConverter,
            ObjectIdConverter,
            OrganizationRefConverter,
        )
        from .api.schema import register_api_tag
        from .change_feed import feed
        from .conversations.services import conversations_rematch_on_change
        from .documents.changes.services import change_request_propose
        from .events import checks  # noqa: F401 - registers the outbox's system checks
        from .events.metrics import OutboxCollector
        from .gitsync.selectors import settings_context as git_settings_context
        from .gitsync.services import git_sync_on_revision
        from .hooks import (
            on_pages_proposed,
            on_revision_written,
            on_space_content_changed,
            on_space_settings,
        )
        from .observability.metrics import collector_register
        from .observability.tracing import tracing_start
        from .openapi.operation_block import BUILTIN_BLOCK
        from .reading.blocks import register_builtin
        from .search_index import search_language_exists  # noqa: F401 - registers its check
        from .selectors import kept_tokens
        from .sites.selectors import feedback_context
        from .teams.converters import UsernameConverter

        # The API's path converters, shared with the plug-in apps' routes.
        register_converter(ObjectIdConverter, "id")
        register_converter(OrganizationRefConverter, "orgref")
        register_converter(IntegrationNameConverter, "name")
        register_converter(DeliveryIdConverter, "deliveryid")
        register_converter(DeliveryIdConverter, "tokenid")  # a row id: at most 18 digits
        register_converter(UsernameConverter, "username")
        _register_api_tags(register_api_tag)
        on_revision_written(git_sync_on_revision)
        on_space_content_changed(conversations_rematch_on_change)
        # The features' parts of what the core shows and does (the core imports no feature).
        on_pages_proposed(change_request_propose)
        on_space_settings(git_settings_context)
        on_space_settings(feedback_context)
        register_builtin(BUILTIN_BLOCK)
        # Traces, when the environment configures an exporter (README, "Traces and metrics"):
        # here, so that every process (web, worker, commands) starts them before it serves.
        tracing_start()
        collector_register(OutboxCollector())  # the outbox's backlog, read at each scrape
        feed.subscribe(kept_tokens.changed)  # the personal tokens requests keep read
        post_migrate.connect(cache_tables_create, sender=self)


def cache_tables_create(using, verbosity=1, **kwargs) -> None:
    """After ``migrate``: the database cache's tables (the embedded default's shared cache,
    ``settings.cache``, and any ``dbcache://`` one configured), made when missing. Every
    database migrated has ``docplatform_cache``, whatever ``CACHE_URL`` says now, so
    ``make run``, the test databases and a later switch to the database cache find it."""
    from django.conf import settings
    from django.core.management.commands.createcachetable import Command

    tables = {settings.CACHE_TABLE}
    tables |= {
        cache["LOCATION"]
        for cache in settings.CACHES.values()
        if cache["BACKEND"].endswith("DatabaseCache")
    }
    command = Command()
    command.verbosity = 0
    for table in sorted(tables):
        command.create_table(using, table, dry_run=False)


def _register_api_tags(register) -> None:
    """The host's groups of operations in the API's documentation (plug-in apps add theirs)."""
    register("Organizations", "The caller's organizations.", r"orgs/")
    register(
        "Spaces",
        "Spaces, their revisions and pages, visibility and views.",
        r"orgs/[^/]+/spaces/",
        r"spaces/",
        r"revisions/",
    )
    register(
        "Comments",
        "Threads of comments on a space's pages: replies, resolving, mentions.",
        r"spaces/[^/]+/comments/",
    )
    register(
        "Change requests",
        "Proposed changes of a space's pages: their pages, reviews and merges.",
        r"spaces/[^/]+/change-requests/",
    )
    register(
        "OpenAPI specifications",
        "An organization's OpenAPI documents: their versions, content and publishing.",
        r"orgs/[^/]+/openapi/",
    )
    register(
        "Git sync",
        "A space's Git connection, its syncs both ways and their history.",
        r"spaces/[^/]+/git/",
    )
    register(
        "Sites", "Published sites and the spaces they publish.", r"orgs/[^/]+/sites/", r"sites/"
    )
    register(
        "Events",
        "The events fired in an organization; every event type with its JSON Schema.",
        r"orgs/[^/]+/events/",
        r"event-types/",
    )
    register(
        "Beacon",
        "Public, without authentication: views and feedback from published sites' pages.",
        r"beacon/",
    )
    register("Me and tokens", "The caller, and their personal API tokens.", r"me/")
    register(
        "Members",
        "An organization's people and their roles; invitations to join it, and accepting one.",
        r"orgs/[^/]+/members/",
        r"orgs/[^/]+/invitations/",
        r"invitations/",
    )
    register(
        "Conversations",
        "Support conversations integrations post, and the pages that answer them; for admins.",
        r"orgs/[^/]+/conversations/",
    )
    register(
        "Audit log",
        "Who did what in an organization, when and from where; for its admins.",
        r"orgs/[^/]+/audit-log/",
    )
