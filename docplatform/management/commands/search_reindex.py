"""Index the spaces' current pages again (``search_index.space_search_reindex``): after a
deploy whose renderer changed what pages show, so search finds what readers read."""

from django.core.management.base import BaseCommand, CommandError

from ...models import Space
from ...search_index import space_search_reindex


class Command(BaseCommand):
    help = (
        "Index the current pages of every space (or of --space ID ...) again, from what they "
        "show now: run it after a deploy whose renderer changed what pages show."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--space", action="append", default=[], metavar="ID", help="only this space's pages"
        )

    def handle(self, *args, space, **options):
        spaces = Space.objects.order_by("pk")
        if space:
            spaces = spaces.filter(pk__in=space)
            unknown = sorted(set(space) - set(spaces.values_list("pk", flat=True)))
            if unknown:
                raise CommandError(f"--space: no space {', '.join(unknown)}")
        indexed = count = 0
        for each in spaces.iterator():
            indexed += space_search_reindex(space=each)
            count += 1
        self.stdout.write(f"{indexed} pages of {count} spaces indexed again")
