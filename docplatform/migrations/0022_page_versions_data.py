"""Page versions (2 of 3): each space's revisions numbered along its line, and its pages, which
every revision copied whole, folded into versions: a page left as it was by a revision is the
same row as before (the copy is deleted, what pointed at it points at the row it repeats), and
positions become keys (``docplatform.positions``) that keep every revision's order."""

from django.db import migrations

from docplatform.ids import new_id
from docplatform.positions import keys_for

CURRENT = 2**31 - 1


def fold_space(Revision, Page, PageFeedback, space_id) -> None:
    revisions = list(Revision.objects.filter(space_id=space_id).order_by("created_at", "pk"))
    current: dict[str, object] = {}  # path -> its open version
    for number, revision in enumerate(revisions, start=1):
        rows = sorted(
            Page.objects.filter(revision_id=revision.pk),
            key=lambda page: (int(page.position), page.path),
        )
        order = [page.path for page in rows]
        keys = keys_for(order, {path: current[path].position for path in order if path in current})
        changed, repeats = [], {}
        for page in rows:
            now = current.get(page.path)
            same = now is not None and (now.title, now.body, now.condition, now.position) == (
                page.title,
                page.body,
                page.condition,
                keys[page.path],
            )
            if same:
                repeats[page.pk] = now.pk
                continue
            if now is not None:
                now.valid_to = number
                changed.append(now)
            page.space_id, page.valid_from, page.valid_to = space_id, number, CURRENT
            page.position = keys[page.path]
            changed.append(page)
            current[page.path] = page
        for path in set(current) - set(order):
            current[path].valid_to = number
            changed.append(current.pop(path))
        Page.objects.bulk_update(changed, ["space", "valid_from", "valid_to", "position"])
        for copy, kept in repeats.items():
            PageFeedback.objects.filter(page_id=copy).update(page_id=kept)
        Page.objects.filter(pk__in=list(repeats)).delete()
        revision.number, revision.page_count = number, len(rows)
        revision.save(update_fields=["number", "page_count"])


def forwards(apps, schema_editor):
    Revision = apps.get_model("docplatform", "Revision")
    Page = apps.get_model("docplatform", "Page")
    PageFeedback = apps.get_model("docplatform", "PageFeedback")
    Space = apps.get_model("docplatform", "Space")
    for space_id in Space.objects.values_list("pk", flat=True):
        fold_space(Revision, Page, PageFeedback, space_id)
    Page.objects.filter(space=None).delete()  # rows of no revision: none is expected


def backwards(apps, schema_editor):
    """Every revision's pages copied out again, positions numbered."""
    Revision = apps.get_model("docplatform", "Revision")
    Page = apps.get_model("docplatform", "Page")
    Page.objects.update(revision=None)  # each row goes to the first revision holding it
    for space_id in apps.get_model("docplatform", "Space").objects.values_list("pk", flat=True):
        versions = list(Page.objects.filter(space_id=space_id))
        keys = {page.pk: page.position for page in versions}
        for revision in Revision.objects.filter(space_id=space_id).order_by("number"):
            held = sorted(
                (p for p in versions if p.valid_from <= revision.number < p.valid_to),
                key=lambda page: (keys[page.pk], page.path),
            )
            for index, page in enumerate(held):
                copy = Page.objects.get(pk=page.pk)
                if copy.revision_id is not None:  # it serves an earlier revision: a copy
                    copy.pk = new_id()
                    copy._state.adding = True
                copy.revision_id, copy.position = revision.pk, str(index)
                copy.save()
    Page.objects.filter(revision=None).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("docplatform", "0021_page_versions_fields"),
    ]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
