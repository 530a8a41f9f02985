"""A revision writes what it changes: a one-page save, add, move, delete or restore writes that
page's version and the revision's row, whatever the size of the space, and every other page is
read through the revision it was written in."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from docplatform.documents import services
from docplatform.models import CURRENT, Page, Revision
from docplatform.page_versions import page_dicts, pages_at, revision_changes
from docplatform.revisions import space_content_update
from tests.factories import SpaceFactory


def _space(organization, size: int):
    space = SpaceFactory(organization=organization)
    pages = [
        {"path": f"p{n:05d}", "title": f"Page {n}", "body": f"Body {n}\n"} for n in range(size)
    ]
    space_content_update(space=space, pages=pages)
    return space


def _written(action, space):
    """What ``action`` wrote: (page rows added, page rows ended, statements that wrote)."""
    before = Page.objects.filter(space=space).count()
    with CaptureQueriesContext(connection) as queries:
        revision = action(space)
    added = Page.objects.filter(space=space).count() - before
    ended = Page.objects.filter(space=space, valid_to=revision.number).count()
    writes = [
        q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE"))
    ]
    return added, ended, len(writes), len(queries)


ACTIONS = {
    "save": lambda space: services.page_save(
        space=space,
        path="p00003",
        title="Three",
        body="Edited\n",
        based_on=space.current_revision_id,
    ),
    "add": lambda space: services.page_create(space=space, path="added", title="Added"),
    "move": lambda space: services.page_move(space=space, path="p00003", direction="up"),
    "delete": lambda space: services.page_delete(
        space=space, path="p00003", based_on=space.current_revision_id
    ),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_a_one_page_action_writes_that_page_alone_whatever_the_size_of_the_space(
    organization, action
):
    small, large = _space(organization, 5), _space(organization, 400)
    on_small = _written(ACTIONS[action], small)
    on_large = _written(ACTIONS[action], large)
    assert on_small == on_large  # the same rows and the same statements, 5 pages or 400
    added, ended, _, _ = on_large
    assert added == (0 if action == "delete" else 1)
    assert ended == (0 if action == "add" else 1)


def test_the_pages_a_save_did_not_change_are_the_same_rows_in_both_revisions(organization):
    space = _space(organization, 20)
    before = space.current_revision
    after = ACTIONS["save"](space)
    old, new = (dict(pages_at(r).values_list("path", "id")) for r in (before, after))
    assert {path for path in old if old[path] != new[path]} == {"p00003"}
    assert len(new) == 20 and after.page_count == 20
    assert page_dicts(before)[3]["body"] == "Body 3\n"  # the old revision reads as it was
    assert page_dicts(after)[3]["body"] == "Edited\n"
    change = revision_changes([after])[after.pk]
    assert list(change.written) == list(change.ended) == ["p00003"]


def test_a_move_keeps_the_order_of_every_other_page(organization):
    space = _space(organization, 6)
    revision = ACTIONS["move"](space)
    assert [p["path"] for p in page_dicts(revision)] == [
        "p00000",
        "p00001",
        "p00003",
        "p00002",
        "p00004",
        "p00005",
    ]


def test_a_whole_revision_writes_only_the_pages_that_differ_or_moved(organization):
    space = _space(organization, 50)
    pages = page_dicts(space.current_revision_id)
    pages[10]["body"] = "Changed\n"
    pages.insert(0, pages.pop(30))  # one page moved to the top
    del pages[40]
    before = Page.objects.filter(space=space).count()
    revision = space_content_update(space=space, pages=pages, based_on=space.current_revision_id)
    assert Page.objects.filter(space=space).count() - before == 2  # the changed and the moved
    assert Page.objects.filter(space=space, valid_to=revision.number).count() == 3
    assert page_dicts(revision) == pages


def test_a_page_deleted_then_restored_comes_back_where_it_stood(organization):
    space = _space(organization, 5)
    first = space.current_revision
    services.page_delete(space=space, path="p00002", based_on=first.pk)
    restored = services.page_restore(space=space, path="p00002", revision=first)
    assert page_dicts(restored) == page_dicts(first)


def test_a_space_holds_at_most_space_max_pages_and_the_error_names_the_setting(
    organization, settings
):
    settings.SPACE_MAX_PAGES = 5
    space = _space(organization, 5)
    with pytest.raises(ValidationError) as error:
        services.page_create(space=space, path="sixth", title="Sixth")
    assert "SPACE_MAX_PAGES" in str(error.value.message_dict)
    assert Revision.objects.filter(space=space).count() == 1


def test_at_most_one_current_version_per_path(organization):
    space = _space(organization, 3)
    assert Page.objects.filter(space=space, valid_to=CURRENT).count() == 3
    with pytest.raises(ValidationError) as error:
        services.page_create(space=space, path="p00001", title="Again")
    assert error.value.message_dict == {"path": ["another page has the path 'p00001'"]}


@pytest.mark.django_db(transaction=True)
def test_writes_at_once_to_one_space_are_made_one_after_the_other(organization):
    """Each write waits for the space's lock, then builds on the revision the one before it
    made (its number, its page count), never on the one it read before waiting."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite takes one writer at a time: nothing waits on a row lock")
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    space = _space(organization, 3)

    def add(n: int):
        try:
            return services.page_create(space=space, path=f"added-{n}", title=f"Added {n}")
        finally:
            connections.close_all()

    with ThreadPoolExecutor(4) as pool:
        written = list(pool.map(add, range(8)))
    numbers = sorted(revision.number for revision in written)
    assert numbers == list(range(2, 10))
    space.refresh_from_db()
    assert space.current_revision.page_count == 11
    assert pages_at(space.current_revision).count() == 11
