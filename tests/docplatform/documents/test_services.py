"""The page actions: each makes one revision through the service the API uses, so
``space_content_updated`` fires whichever door was used; nothing is lost or half-written."""

import pytest
from django.core.exceptions import ValidationError

from docplatform.documents import selectors, services, visits
from docplatform.events.models import Event
from docplatform.models import Revision
from docplatform.page_versions import page_dicts
from docplatform.reading import navigation
from docplatform.revisions import space_content_update
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec():
    return {
        "pages": [
            {"path": "a", "title": "A", "body": "one\ntwo\nthree"},
            {"path": "b", "title": "B", "body": "bee"},
            {"path": "b/child", "title": "Child", "body": ""},
            {"path": "c", "title": "C", "body": "sea"},
        ]
    }


def paths(space) -> list[str]:
    space.refresh_from_db()
    return [page["path"] for page in page_dicts(space.current_revision_id)]


def content_events() -> int:
    return Event.objects.filter(type="space_content_updated").count()


def test_an_edit_of_another_page_made_meanwhile_is_kept_and_mine_applied_on_top(space):
    base = space.current_revision_id
    services.page_save(space=space, path="b", title="B", body="theirs", based_on=base)
    services.page_save(space=space, path="a", title="A", body="mine", based_on=base)
    pages = {p["path"]: p["body"] for p in page_dicts(space.current_revision_id)}
    assert pages["a"] == "mine" and pages["b"] == "theirs"


def test_an_edit_of_the_same_page_made_meanwhile_is_a_conflict_and_writes_nothing(space):
    base = space.current_revision_id
    services.page_save(space=space, path="a", title="A", body="theirs", based_on=base)
    revisions = Revision.objects.count()
    with pytest.raises(services.PageConflict) as conflict:
        services.page_save(space=space, path="a", title="A", body="mine", based_on=base)
    assert conflict.value.theirs["body"] == "theirs"
    assert Revision.objects.count() == revisions
    services.page_save(
        space=space, path="a", title="A", body="mine", based_on=conflict.value.current.pk
    )
    assert page_dicts(space.current_revision_id)[0]["body"] == "mine"


def test_rename_to_a_taken_path_and_other_bad_input_name_their_fields(space):
    base = space.current_revision_id
    with pytest.raises(ValidationError) as error:
        services.page_save(space=space, path="a", new_path="c", title="", body="", based_on=base)
    assert set(error.value.message_dict) == {"path", "title"}
    for path in ["history", "new/x", "x/edit", "-", "a b", "/a", "a//b"]:
        with pytest.raises(ValidationError) as error:
            services.page_save(
                space=space, path="a", new_path=path, title="A", body="", based_on=base
            )
        assert "path" in error.value.message_dict, path
    with pytest.raises(ValidationError) as error:
        services.page_create(space=space, path="d", title="D", body="x" * (600 * 1024))
    assert "body" in error.value.message_dict
    assert space.revisions.count() == 1


def test_move_reorders_among_siblings_only(space):
    services.page_move(space=space, path="c", direction="up")
    assert paths(space) == ["a", "c", "b", "b/child"]
    assert services.page_move(space=space, path="a", direction="up") is None
    assert services.page_move(space=space, path="b/child", direction="down") is None
    _, ordered = navigation.navigation(space.current_revision_id)
    assert [(item.path, item.depth) for item in ordered] == [
        ("a", 0),
        ("c", 0),
        ("b", 0),
        ("b/child", 1),
    ]


def test_delete_keeps_at_least_one_page_and_restore_brings_a_revision_back(space):
    first = space.current_revision
    base = space.current_revision_id
    services.page_delete(space=space, path="c", based_on=base)
    assert paths(space) == ["a", "b", "b/child"]
    restored = services.revision_restore(space=space, revision=first)
    assert paths(space) == ["a", "b", "b/child", "c"]
    assert restored.parent_id != first.pk  # a new revision on top: history is never rewritten
    lone = SpaceFactory(organization=space.organization)
    space_content_update(space=lone, pages=[{"path": "only", "title": "Only"}])
    with pytest.raises(ValidationError):
        services.page_delete(space=lone, path="only", based_on=lone.current_revision_id)


def test_every_action_fires_one_content_event(space):
    before = content_events()
    base = space.current_revision_id
    services.page_save(space=space, path="a", title="A", body="x", based_on=base)
    services.page_create(space=space, path="d", title="D")
    services.page_move(space=space, path="d", direction="up")
    space.refresh_from_db()
    services.page_delete(space=space, path="d", based_on=space.current_revision_id)
    assert content_events() == before + 4


def test_the_diff_shows_the_changed_lines(space):
    base = space.current_revision_id
    revision = services.page_save(
        space=space, path="a", title="A", body="one\nTWO\nthree", based_on=base
    )
    [change] = selectors.revision_diff(revision)
    assert change.kind == "changed"
    assert ("-", "two") in change.lines and ("+", "TWO") in change.lines


def test_a_diffs_hunks_count_the_bodys_lines_and_a_new_title_is_a_line_of_its_own(space):
    body = "\n".join(f"line {n}" for n in range(1, 11))
    first = services.page_save(
        space=space, path="a", title="A", body=body, based_on=space.current_revision_id
    )
    revision = services.page_save(
        space=space, path="a", title="Alpha", body=body.replace("line 8", "LINE 8"),
        based_on=first.pk,
    )  # fmt: skip
    [change] = selectors.revision_diff(revision)
    assert change.lines[:3] == [("-", "# A"), ("+", "# Alpha"), ("@", "@@ -5,6 +5,6 @@")]
    assert change.lines[3:6] == [(" ", "line 5"), (" ", "line 6"), (" ", "line 7")]
    assert change.lines[6:8] == [("-", "line 8"), ("+", "LINE 8")]
    body_only = services.page_save(
        space=space, path="a", title="Alpha", body=body, based_on=revision.pk
    )
    [change] = selectors.revision_diff(body_only)
    assert change.lines[0] == ("@", "@@ -5,6 +5,6 @@")


def test_the_admin_edits_a_current_page_as_a_new_revision(client, space, admin_user):
    client.force_login(admin_user)
    page = space.current_revision.pages.get(path="a")
    response = client.post(
        f"/admin/docplatform/page/{page.pk}/change/",
        {"path": "a", "title": "A", "body": "from the admin"},
    )
    assert response.status_code == 302
    assert page_dicts(Revision.objects.latest().pk)[0]["body"] == "from the admin"
    page.refresh_from_db()
    assert page.body == "one\ntwo\nthree"  # rows are never rewritten
    refused = client.post(
        f"/admin/docplatform/page/{page.pk}/change/", {"path": "a", "title": "A", "body": "again"}
    )
    assert refused.status_code == 403  # no longer the current revision's page
    current = Revision.objects.latest().pages.get(path="a")
    invalid = client.post(
        f"/admin/docplatform/page/{current.pk}/change/", {"path": "b", "title": "", "body": ""}
    )
    assert invalid.status_code == 200
    assert "another page has the path" in invalid.content.decode()


def test_visits_older_than_the_interval_are_purged_and_fire_again(space):
    from datetime import timedelta

    from django.core.cache import cache
    from django.utils import timezone

    from docplatform.events import Visitor
    from docplatform.models import SpaceVisit
    from docplatform.tasks import purge_space_visits

    visitor = Visitor(anonymous_id="a" * 20, user_agent="ua", ip="127.0.0.1", cookies={})
    assert visits.space_view_once(space=space, visitor=visitor, who="anon:a")
    assert not visits.space_view_once(space=space, visitor=visitor, who="anon:a")
    SpaceVisit.objects.update(last_fired_at=timezone.now() - timedelta(minutes=6))
    cache.clear()  # the shared cache's flag, kept for the interval, is past it too
    assert purge_space_visits() == 1
    assert visits.space_view_once(space=space, visitor=visitor, who="anon:a")
    assert Event.objects.filter(type="space_view").count() == 2


def test_edits_of_different_lines_of_one_page_are_merged_with_no_question(space):
    base = space.current_revision_id
    services.page_save(space=space, path="a", title="A", body="one\ntwo\nthree\n", based_on=base)
    base = space.current_revision_id
    services.page_save(
        space=space, path="a", title="A", body="one, theirs\ntwo\nthree\n", based_on=base
    )
    services.page_save(
        space=space, path="a", title="A (mine)", body="one\ntwo\nthree, mine\n", based_on=base
    )
    page = page_dicts(space.current_revision_id)[0]
    assert page == {"path": "a", "title": "A (mine)", "body": "one, theirs\ntwo\nthree, mine\n"}


def test_an_overlap_carries_its_hunks_and_the_page_as_it_was(space):
    base = space.current_revision_id
    services.page_save(space=space, path="a", title="A", body="x\ny\nz\n", based_on=base)
    base = space.current_revision_id
    services.page_save(space=space, path="a", title="A", body="x\nTHEIRS\nz\n", based_on=base)
    with pytest.raises(services.PageConflict) as conflict:
        services.page_save(space=space, path="a", title="A", body="x\nMINE\nz\n", based_on=base)
    assert [hunk.as_json() for hunk in conflict.value.clash.body.hunks] == [
        {"base": "y\n", "theirs": "THEIRS\n", "mine": "MINE\n"}
    ]
    assert conflict.value.base["body"] == "x\ny\nz\n"
