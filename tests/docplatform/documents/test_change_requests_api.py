"""Change requests through the REST API: opened from a space, edited apart from it, reviewed
(the author's own approval never counts) and merged as one revision, the space's merge rules
answering 409 naming the rule; readers 403, other organizations 404, nothing written then."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.documents.changes.models import ChangeRequest
from docplatform.events.models import Event
from docplatform.models import Revision
from docplatform.page_versions import page_dicts
from docplatform.revisions import space_content_update
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import MembershipFactory, SpaceFactory

pytestmark = pytest.mark.django_db

PAGES = [
    {"path": "index", "title": "Home", "body": "one\ntwo\nthree\n"},
    {"path": "guide", "title": "Guide", "body": "read me\n"},
]


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "pages": PAGES}


@pytest.fixture
def reviewer(organization):
    return MembershipFactory(organization=organization, role="member").user


def cr_url(space, number=None, rest=""):
    base = f"{API}/spaces/{space.id}/change-requests/"
    return base if number is None else f"{base}{number}/{rest}"


def opened(space, person, subject="Install guide"):
    response = api_client(person).post(cr_url(space), {"subject": subject, "description": "x"})
    assert response.status_code == 201, response.json()
    return response.json()


def edited(space, person, number, body):
    pages_url = cr_url(space, number, "pages/")
    head = api_client(person).get(pages_url).json()
    pages = [{**page, "body": body} if page["path"] == "index" else page for page in head["pages"]]
    response = api_client(person).post(pages_url, {"pages": pages, "basedOn": head["revision"]})
    assert response.status_code == 201, response.json()
    return response.json()


def content_events() -> int:
    return Event.objects.filter(type="space_content_updated").count()


def test_numbers_count_per_space_and_the_space_is_untouched_until_the_merge(
    space, org_member, organization
):
    first, second = opened(space, org_member), opened(space, org_member, "Second")
    other = SpaceFactory(organization=organization)
    assert (first["number"], second["number"], opened(other, org_member)["number"]) == (1, 2, 1)
    assert first["status"] == "open" and first["baseRevision"] == space.current_revision_id
    revisions = Revision.objects.count()
    edited(space, org_member, 1, "one\nTWO\nthree\n")
    assert Revision.objects.count() == revisions
    listed = api_client(org_member).get(cr_url(space)).json()
    assert [row["number"] for row in listed["results"]] == [2, 1]
    assert AuditEntry.objects.filter(action="change_request.opened").count() == 3


def test_a_merge_writes_one_revision_and_fires_one_event(space, org_member, reviewer):
    opened(space, org_member)
    edited(space, org_member, 1, "one\nTWO\nthree\n")
    events, revisions = content_events(), Revision.objects.count()
    response = api_client(reviewer).post(cr_url(space, 1, "merge/"))
    assert response.status_code == 201, response.json()
    assert content_events() == events + 1
    assert Revision.objects.count() == revisions + 1
    space.refresh_from_db()
    assert space.current_revision_id == response.json()["id"]
    assert page_dicts(space.current_revision_id)[0]["body"] == "one\nTWO\nthree\n"
    change_request = ChangeRequest.objects.get(space=space, number=1)
    assert (change_request.status, change_request.merged_by) == ("merged", reviewer)
    assert AuditEntry.objects.filter(action="change_request.merged").count() == 1
    again = api_client(reviewer).post(cr_url(space, 1, "merge/"))
    assert again.status_code == 409 and again.json()["errors"][0]["attr"] == "status"


@pytest.mark.slow
def test_space_changes_that_do_not_overlap_are_merged_in(space, org_member, org_admin):
    opened(space, org_member)
    edited(space, org_member, 1, "one\ntwo\nthree\nfour\n")
    pages = [{**PAGES[0], "body": "zero\none\ntwo\nthree\n"}, PAGES[1]]
    space_content_update(space=space, pages=pages)
    assert api_client(org_admin).post(cr_url(space, 1, "merge/")).status_code == 201
    space.refresh_from_db()
    assert page_dicts(space.current_revision_id)[0]["body"] == "zero\none\ntwo\nthree\nfour\n"


def test_an_overlapping_merge_writes_nothing_and_is_resolved_in_the_change_request(
    space, org_member
):
    opened(space, org_member)
    edited(space, org_member, 1, "one\nmine\nthree\n")
    space_content_update(
        space=space, pages=[{**PAGES[0], "body": "one\ntheirs\nthree\n"}, PAGES[1]]
    )
    events, revisions = content_events(), Revision.objects.count()
    refused = api_client(org_member).post(cr_url(space, 1, "merge/"))
    assert refused.status_code == 409
    body = refused.json()
    assert body["conflicts"] == [
        {
            "page": "index",
            "hunks": [{"field": "body", "base": "two\n", "theirs": "theirs\n", "mine": "mine\n"}],
        }
    ]
    assert (content_events(), Revision.objects.count()) == (events, revisions)
    space.refresh_from_db()
    resolved = [{**PAGES[0], "body": "one\ntheirs\nmine\nthree\n"}, PAGES[1]]
    written = api_client(org_member).post(
        cr_url(space, 1, "pages/"),
        {"pages": resolved, "spaceRevision": space.current_revision_id},
    )
    assert (
        written.status_code == 201 and written.json()["baseRevision"] == space.current_revision_id
    )
    assert api_client(org_member).post(cr_url(space, 1, "merge/")).status_code == 201
    space.refresh_from_db()
    assert page_dicts(space.current_revision_id)[0]["body"] == "one\ntheirs\nmine\nthree\n"


def test_stale_edits_inside_a_change_request_merge_or_answer_409(space, org_member, reviewer):
    opened(space, org_member)
    head = api_client(org_member).get(cr_url(space, 1, "pages/")).json()
    edited(space, reviewer, 1, "one\ntwo\nthree\nfour\n")
    stale = [{**PAGES[0], "body": "zero\none\ntwo\nthree\n"}, PAGES[1]]
    merged = api_client(org_member).post(
        cr_url(space, 1, "pages/"), {"pages": stale, "basedOn": head["revision"]}
    )
    assert merged.status_code == 201
    assert merged.json()["pages"][0]["body"] == "zero\none\ntwo\nthree\nfour\n"
    clashing = [{**PAGES[0], "body": "one\ntwo\nthree\nFIVE\n"}, PAGES[1]]
    refused = api_client(org_member).post(
        cr_url(space, 1, "pages/"), {"pages": clashing, "basedOn": head["revision"]}
    )
    assert refused.status_code == 409 and refused.json()["errors"][0]["attr"] == "basedOn"


def test_required_approvals_refuse_the_merge_naming_the_rule(
    space, org_member, org_admin, reviewer
):
    space.required_approvals = 1
    space.save()
    opened(space, org_member)
    edited(space, org_member, 1, "changed\n")
    own = api_client(org_member).post(cr_url(space, 1, "reviews/"), {"status": "approved"})
    assert own.status_code == 400 and error_attrs(own) == ["status"]
    refused = api_client(org_admin).post(cr_url(space, 1, "merge/"))
    assert refused.status_code == 409
    assert [error["attr"] for error in refused.json()["errors"]] == ["requiredApprovals"]
    review = api_client(reviewer).post(
        cr_url(space, 1, "reviews/"), {"status": "changes_requested", "comment": "typo"}
    )
    assert review.status_code == 201
    assert api_client(org_admin).post(cr_url(space, 1, "merge/")).status_code == 409
    api_client(reviewer).post(cr_url(space, 1, "reviews/"), {"status": "approved"})
    detail = api_client(org_member).get(cr_url(space, 1)).json()
    assert detail["approvedBy"] == [reviewer.username] and detail["mergeBlockers"] == []
    assert api_client(org_admin).post(cr_url(space, 1, "merge/")).status_code == 201


def test_up_to_date_refuses_a_change_request_made_from_an_older_revision(space, org_member):
    space.require_up_to_date = True
    space.save()
    opened(space, org_member)
    edited(space, org_member, 1, "changed\n")
    space_content_update(space=space, pages=[PAGES[0], {**PAGES[1], "body": "new\n"}])
    revisions = Revision.objects.count()
    refused = api_client(org_member).post(cr_url(space, 1, "merge/"))
    assert refused.status_code == 409
    assert [error["attr"] for error in refused.json()["errors"]] == ["upToDate"]
    assert Revision.objects.count() == revisions
