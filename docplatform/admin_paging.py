"""Admin changelists over tables that grow with use (events' deliveries and their attempts,
integration logs, the audit log, page versions, revisions, feedback): the paginator counts at
most ``COUNT_LIMIT`` + 1 matching rows (``COUNT(*)`` over a ``LIMIT``ed subquery), so a page
costs the same at a million rows as at a thousand; past the limit the list says so and pages
through the newest ``COUNT_LIMIT``, and a filter or a search reaches older rows."""

from functools import cached_property

from django.core.paginator import Paginator

COUNT_LIMIT = 10_000


class LimitedCountPaginator(Paginator):
    @property
    def limit(self) -> int:
        return COUNT_LIMIT

    @cached_property
    def count(self) -> int:
        return self.object_list[: COUNT_LIMIT + 1].count()

    @property
    def limited(self) -> bool:
        """More rows match than were counted (``templates/admin/pagination.html`` says so)."""
        return self.count > COUNT_LIMIT


class LimitedCount:
    """A ModelAdmin mixin: its changelist counts at most ``COUNT_LIMIT`` + 1 rows and never
    the whole table (``show_full_result_count``)."""

    paginator = LimitedCountPaginator
    show_full_result_count = False
