"""The REST API writes one page (``PUT``/``DELETE /api/v1/spaces/{id}/pages/{path}``), merging
a change made meanwhile, and a whole revision of a space at its page limit in one request."""

import json

import pytest

from docplatform.models import Page, Revision
from docplatform.page_versions import page_dicts
from tests.api_helpers import API, api_client, error_attrs

PAGES = [
    {"path": "intro", "title": "Intro", "body": "one\ntwo\nthree\nfour\nfive\n"},
    {"path": "guide", "title": "Guide", "body": "Read me.\n"},
]


@pytest.fixture
def space_spec():
    return {"pages": PAGES}


@pytest.fixture
def member_api(org_member):
    return api_client(org_member)


def _url(space, path):
    return f"{API}/spaces/{space.pk}/pages/{path}"


def test_put_changes_one_page_and_writes_that_page_alone(member_api, space):
    rows = Page.objects.count()
    response = member_api.put(
        _url(space, "guide"),
        {"title": "Guide", "body": "Read me twice.\n", "baseRevision": space.current_revision_id},
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["page"]["body"] == "Read me twice.\n"
    assert body["revision"]["parent"] == space.current_revision_id
    assert Page.objects.count() == rows + 1
    assert member_api.get(_url(space, "guide")).json()["body"] == "Read me twice.\n"


def test_put_of_a_new_path_adds_the_page_at_the_end(member_api, space):
    response = member_api.put(_url(space, "guide/install"), {"title": "Install", "body": "x"})
    assert response.status_code == 201, response.json()
    space.refresh_from_db()
    assert [p["path"] for p in page_dicts(space.current_revision_id)] == [
        "intro",
        "guide",
        "guide/install",
    ]


def test_an_edit_made_meanwhile_to_other_lines_is_merged(member_api, space):
    base = space.current_revision_id
    theirs = {"title": "Intro", "body": "ONE\ntwo\nthree\nfour\nfive\n", "baseRevision": base}
    assert member_api.put(_url(space, "intro"), theirs).status_code == 200
    mine = {"title": "Intro", "body": "one\ntwo\nthree\nfour\nFIVE\n", "baseRevision": base}
    response = member_api.put(_url(space, "intro"), mine)
    assert response.status_code == 200, response.json()
    assert response.json()["page"]["body"] == "ONE\ntwo\nthree\nfour\nFIVE\n"


def test_overlapping_edits_answer_409_with_the_hunks_and_write_nothing(member_api, space):
    base = space.current_revision_id
    theirs = {"title": "Intro", "body": "uno\ntwo\nthree\nfour\nfive\n", "baseRevision": base}
    assert member_api.put(_url(space, "intro"), theirs).status_code == 200
    revisions = Revision.objects.count()
    mine = {"title": "Intro", "body": "eins\ntwo\nthree\nfour\nfive\n", "baseRevision": base}
    response = member_api.put(_url(space, "intro"), mine)
    assert response.status_code == 409
    conflict = response.json()
    assert conflict["conflicts"][0]["page"] == "intro"
    assert {h["theirs"] for h in conflict["conflicts"][0]["hunks"]} == {"uno\n"}
    assert Revision.objects.count() == revisions


def test_a_page_deleted_since_the_base_answers_409(member_api, space):
    base = space.current_revision_id
    assert member_api.delete(_url(space, "guide")).status_code == 200
    response = member_api.put(
        _url(space, "guide"), {"title": "Guide", "body": "Back?", "baseRevision": base}
    )
    assert response.status_code == 409
    assert response.json()["conflicts"] == [{"page": "guide", "hunks": [], "deletedBy": "theirs"}]


def test_delete_removes_one_page_and_a_missing_one_is_404(member_api, space):
    response = member_api.delete(_url(space, "guide"))
    assert response.status_code == 200, response.json()
    space.refresh_from_db()
    assert [p["path"] for p in page_dicts(space.current_revision_id)] == ["intro"]
    assert member_api.delete(_url(space, "guide")).status_code == 404
    assert member_api.get(_url(space, "guide")).status_code == 404
    last = member_api.delete(_url(space, "intro"))
    assert last.status_code == 400 and error_attrs(last) == ["path"]


def test_bad_input_names_its_field_and_writes_nothing(member_api, space):
    revisions = Revision.objects.count()
    assert error_attrs(member_api.put(_url(space, "guide"), {"body": "x"})) == ["title"]
    taken = member_api.put(_url(space, "guide"), {"title": "G", "path": "intro"})
    assert error_attrs(taken) == ["path"]
    unknown_base = member_api.put(_url(space, "guide"), {"title": "G", "baseRevision": "nope"})
    assert unknown_base.status_code == 400
    assert member_api.put(_url(space, "history"), {"title": "H"}).status_code == 404
    assert Revision.objects.count() == revisions


def test_a_reader_may_read_a_page_but_not_write_one(org_reader, space):
    reader = api_client(org_reader)
    assert reader.get(_url(space, "intro")).status_code == 200
    assert reader.put(_url(space, "intro"), {"title": "X"}).status_code == 403
    assert reader.delete(_url(space, "intro")).status_code == 403


def test_another_organization_sees_no_such_page(space, people):
    stranger = api_client(people["outsider"])
    assert stranger.get(_url(space, "intro")).status_code == 404
    assert stranger.put(_url(space, "intro"), {"title": "X"}).status_code == 404


def test_a_whole_revision_larger_than_the_request_limit_is_written_in_one_request(
    member_api, space, settings
):
    settings.SPACE_MAX_PAGES = 700
    settings.REVISION_MAX_BYTES = 700 * 4096
    pages = [{"path": f"p{n}", "title": f"P{n}", "body": "x" * 4000} for n in range(700)]
    payload = json.dumps({"pages": pages})
    assert len(payload) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = member_api.post(
        f"{API}/spaces/{space.pk}/revisions/", payload, content_type="application/json"
    )
    assert response.status_code == 201, response.json()
    assert Revision.objects.get(pk=response.json()["id"]).page_count == 700
    too_many = member_api.post(
        f"{API}/spaces/{space.pk}/revisions/",
        {"pages": [*pages, {"path": "one-more", "title": "More"}]},
    )
    assert too_many.status_code in (400, 413)
    assert "SPACE_MAX_PAGES" in json.dumps(too_many.json()) or too_many.status_code == 413
    other = member_api.put(_url(space, "p1"), {"title": "P", "body": "y" * 3_000_000})
    assert other.status_code == 413  # one page's request keeps the ordinary limit
