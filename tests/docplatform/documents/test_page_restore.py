"""A page restored alone (issue 31, point 4): a deleted page comes back where it stood, an
old version of one page replaces it, and every other page keeps what was written since;
through the history's page and the API."""

import pytest

from docplatform.documents.services import page_delete, page_save
from docplatform.models import Revision
from docplatform.selectors import current_pages
from tests.api_helpers import API, api_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec(org_member):
    return {
        "title": "Handbook",
        "pages": [
            {"path": "intro", "title": "Intro", "body": "Hello.\n"},
            {"path": "guide", "title": "Guide", "body": "First guide.\n"},
            {"path": "faq", "title": "FAQ", "body": "Questions.\n"},
        ],
        "author": org_member,
    }


def pages_now(space) -> list[tuple[str, str]]:
    space.refresh_from_db()
    return [(page.path, page.body) for page in current_pages(space)]


def delete_guide_then_edit_faq(space, person) -> Revision:
    """The guide is deleted, then someone edits the FAQ: the revision holding the guide."""
    before = space.current_revision
    page_delete(space=space, path="guide", author=person, based_on=before.pk)
    space.refresh_from_db()
    page_save(
        space=space,
        path="faq",
        title="FAQ",
        body="Questions, answered.\n",
        author=person,
        based_on=space.current_revision_id,
    )
    return before


def test_a_deleted_page_comes_back_where_it_stood_and_later_edits_stay(space, org_member):
    with_guide = delete_guide_then_edit_faq(space, org_member)
    response = api_client(org_member).post(
        f"{API}/spaces/{space.pk}/pages/restore/",
        {"path": "guide", "revision": with_guide.pk},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["message"].startswith("Restore Guide as in revision")
    assert pages_now(space) == [
        ("intro", "Hello.\n"),
        ("guide", "First guide.\n"),
        ("faq", "Questions, answered.\n"),  # the later edit is kept
    ]


def test_an_old_version_of_one_page_replaces_it_alone(space, org_member):
    first = space.current_revision
    for body in ("Second guide.\n", "Third guide.\n"):
        space.refresh_from_db()
        page_save(
            space=space,
            path="guide",
            title="Guide",
            body=body,
            author=org_member,
            based_on=space.current_revision_id,
        )
    space.refresh_from_db()
    page_save(
        space=space,
        path="intro",
        title="Intro",
        body="Hello again.\n",
        author=org_member,
        based_on=space.current_revision_id,
    )
    api = api_client(org_member)
    url = f"{API}/spaces/{space.pk}/pages/restore/"
    assert api.post(url, {"path": "guide", "revision": first.pk}, format="json").status_code == 201
    assert pages_now(space) == [
        ("intro", "Hello again.\n"),
        ("guide", "First guide.\n"),
        ("faq", "Questions.\n"),
    ]
    again = api.post(url, {"path": "guide", "revision": first.pk}, format="json")
    assert again.status_code == 400
    assert again.json()["errors"][0]["attr"] == "path"


@pytest.mark.parametrize(
    ("body", "attr"),
    [
        ({"path": "nowhere", "revision": "CURRENT"}, "path"),
        ({"path": "guide", "revision": "NoSuchRevision000000"}, "revision"),
        ({"revision": "CURRENT"}, "path"),
        ({"path": "guide"}, "revision"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(space, org_member, body, attr):
    body = {
        key: space.current_revision_id if value == "CURRENT" else value
        for key, value in body.items()
    }
    count = Revision.objects.count()
    response = api_client(org_member).post(
        f"{API}/spaces/{space.pk}/pages/restore/", body, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["attr"] == attr
    assert Revision.objects.count() == count


def test_readers_restore_nothing_and_outsiders_find_nothing(space, org_member, people):
    with_guide = delete_guide_then_edit_faq(space, org_member)
    count = Revision.objects.count()
    body = {"path": "guide", "revision": with_guide.pk}
    url = f"{API}/spaces/{space.pk}/pages/restore/"
    assert api_client(people["reader"]).post(url, body, format="json").status_code == 403
    assert api_client(people["outsider"]).post(url, body, format="json").status_code == 404
    assert Revision.objects.count() == count


def test_the_delete_message_links_to_the_page_that_restores_it(space, org_member, client):
    client.force_login(org_member)
    deleted = client.post(
        f"/s/{space.pk}/-/delete",
        {"path": "guide", "based_on": space.current_revision_id},
        follow=True,
    )
    html = deleted.content.decode()
    space.refresh_from_db()
    restore_page = f"/s/{space.pk}/history/{space.current_revision.parent_id}/guide"
    assert f'<a href="{restore_page}">restore it</a>' in html

    page = client.get(restore_page).content.decode()
    assert "This page was deleted since." in page and "Restore this page" in page
    restored = client.post(
        f"/s/{space.pk}/history/{space.current_revision.parent_id}/restore-page",
        {"path": "guide"},
        follow=True,
    )
    assert "Page restored as it was in revision" in restored.content.decode()
    assert [path for path, _ in pages_now(space)] == ["intro", "guide", "faq"]


def test_a_reader_sees_no_restore_button(space, org_member, org_reader, client):
    delete_guide_then_edit_faq(space, org_member)
    space.refresh_from_db()
    client.force_login(org_reader)
    with_guide = Revision.objects.filter(space=space).order_by("created_at").first()
    page = client.get(f"/s/{space.pk}/history/{with_guide.pk}/guide").content.decode()
    assert "Restore this page" not in page
    refused = client.post(f"/s/{space.pk}/history/{with_guide.pk}/restore-page", {"path": "guide"})
    assert refused.status_code == 403
