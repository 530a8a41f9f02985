"""The change requests' pages, through Django's test client: the tab and the list, opening
one, editing its page with the space's editor, reviewing, the Merge button disabled naming
the unmet rule, merging, updating from the space with the overlaps resolved in the change
request, "Save to a change request" from the editor, and members' direct saves refused in a
space that takes edits through change requests only."""

import pytest
from django.test import Client

from docplatform.documents.changes.models import ChangeRequest
from docplatform.models import Revision
from docplatform.page_versions import page_dicts
from docplatform.revisions import space_content_update

pytestmark = pytest.mark.django_db

PAGES = [{"path": "index", "title": "Home", "body": "one\ntwo\nthree\n"}]


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "pages": PAGES}


def client_of(person) -> Client:
    client = Client()
    client.force_login(person)
    return client


def body_now(space) -> str:
    space.refresh_from_db()
    return page_dicts(space.current_revision_id)[0]["body"]


def open_and_edit(space, person, body) -> ChangeRequest:
    client = client_of(person)
    opened = client.post(f"/s/{space.id}/~cr/", {"subject": "Better intro"})
    assert opened.status_code == 302 and opened["Location"] == f"/s/{space.id}/~cr/1/"
    change_request = ChangeRequest.objects.get(space=space, number=1)
    edit = f"/s/{space.id}/~cr/1/index/edit"
    form = client.get(edit)
    assert form.status_code == 200 and "Save to change request #1" in form.content.decode()
    head = change_request.revisions.order_by("-pk").first()
    saved = client.post(edit, {"title": "Home", "path": "index", "body": body, "based_on": head.pk})
    assert saved.status_code == 302, saved.content.decode()
    return change_request


def test_the_tab_lists_them_and_a_change_request_shows_its_diff(space, org_member, org_reader):
    revisions = Revision.objects.count()
    open_and_edit(space, org_member, "one\nTWO\nthree\n")
    assert Revision.objects.count() == revisions  # the space is not touched
    listing = client_of(org_reader).get(f"/s/{space.id}/~cr/").content.decode()
    assert "Change requests" in listing and "#1 Better intro" in listing
    page = client_of(org_reader).get(f"/s/{space.id}/~cr/1/").content.decode()
    assert "- two" in page and "+ TWO" in page
    assert 'value="approved"' not in page  # readers read, they do not review


def test_the_author_cannot_approve_and_merge_waits_for_the_approvals(space, org_member, org_admin):
    space.required_approvals = 1
    space.save()
    open_and_edit(space, org_member, "one\nTWO\nthree\n")
    page = client_of(org_member).get(f"/s/{space.id}/~cr/1/").content.decode()
    assert "your own approval does not count" in page
    assert "requiredApprovals" in page and 'type="submit" disabled>Merge' in page
    client_of(org_member).post(f"/s/{space.id}/~cr/1/-/review", {"status": "approved"})
    assert not ChangeRequest.objects.get().reviews.exists()
    client_of(org_admin).post(f"/s/{space.id}/~cr/1/-/review", {"status": "approved"})
    page = client_of(org_member).get(f"/s/{space.id}/~cr/1/").content.decode()
    assert "requiredApprovals" not in page
    merged = client_of(org_member).post(f"/s/{space.id}/~cr/1/-/merge")
    assert merged.status_code == 302
    assert body_now(space) == "one\nTWO\nthree\n"
    assert ChangeRequest.objects.get().status == "merged"


def test_overlaps_are_resolved_in_the_change_request_never_in_the_space(space, org_member):
    open_and_edit(space, org_member, "one\nmine\nthree\n")
    space_content_update(space=space, pages=[{**PAGES[0], "body": "one\ntheirs\nthree\n"}])
    client = client_of(org_member)
    revisions = Revision.objects.count()
    refused = client.post(f"/s/{space.id}/~cr/1/-/merge")
    assert refused.status_code == 409 and "Update from the space" in refused.content.decode()
    assert Revision.objects.count() == revisions
    resolved = {
        "clashes": "1",
        "clash-0-path": "index",
        "clash-0-title": "Home",
        "clash-0-body": "one\ntheirs and mine\nthree\n",
    }
    assert client.post(f"/s/{space.id}/~cr/1/-/update", resolved).status_code == 302
    assert client.post(f"/s/{space.id}/~cr/1/-/merge").status_code == 302
    assert body_now(space) == "one\ntheirs and mine\nthree\n"


def test_save_to_a_change_request_from_the_editor(space, org_member):
    base = space.current_revision_id
    edit = {"title": "Home", "path": "index", "body": "one\nnew\nthree\n", "based_on": base}
    response = client_of(org_member).post(
        f"/s/{space.id}/index/edit", {**edit, "to_change_request": "1"}
    )
    assert response.status_code == 302 and response["Location"] == f"/s/{space.id}/~cr/1/"
    change_request = ChangeRequest.objects.get()
    assert change_request.base_revision_id == base
    assert change_request.revisions.order_by("-pk").first().pages[0]["body"] == edit["body"]
    assert body_now(space) == PAGES[0]["body"]


def test_change_requests_only_refuses_a_members_save_and_offers_a_change_request(
    space, org_member, org_admin
):
    space.change_requests_only = True
    space.save()
    edit = {
        "title": "Home",
        "path": "index",
        "body": "edited\n",
        "based_on": space.current_revision_id,
    }
    form = client_of(org_member).get(f"/s/{space.id}/index/edit").content.decode()
    assert "Save to a change request" in form and "data-save>Save</button>" not in form
    refused = client_of(org_member).post(f"/s/{space.id}/index/edit", edit)
    assert refused.status_code == 403 and "change requests only" in refused.content.decode()
    assert client_of(org_member).get(f"/s/{space.id}/new").status_code == 403
    assert body_now(space) == PAGES[0]["body"]
    assert client_of(org_admin).post(f"/s/{space.id}/index/edit", edit).status_code == 302
    assert body_now(space) == "edited\n"


def test_outsiders_see_no_change_request(space, org_member, people):
    open_and_edit(space, org_member, "x\n")
    assert client_of(people["outsider"]).get(f"/s/{space.id}/~cr/1/").status_code == 404
    refused = client_of(people["reader"]).post(f"/s/{space.id}/~cr/1/-/merge")
    assert refused.status_code == 403
    assert ChangeRequest.objects.get().status == "open"
