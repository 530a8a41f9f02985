"""Who may do what with change requests (readers 403, other organizations 404, nothing
written), bad input answered 400 naming the field, the space's rules set through its PATCH,
and "edits through change requests only" refusing members' direct saves but not admins'."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.documents.changes.models import ChangeRequest, Review
from docplatform.models import Revision
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs

pytestmark = pytest.mark.django_db

PAGES = [{"path": "index", "title": "Home", "body": "one\n"}]


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "pages": PAGES}


def cr_url(space, rest=""):
    return f"{API}/spaces/{space.id}/change-requests/{rest}"


@pytest.fixture
def opened(space, org_member):
    response = api_client(org_member).post(cr_url(space), {"subject": "Fix"})
    assert response.status_code == 201
    return response.json()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "rest", "body"),
    [
        ("post", "", {"subject": "Mine"}),
        ("patch", "1/", {"status": "closed"}),
        ("post", "1/pages/", {"pages": [{"path": "index", "title": "Home", "body": "x"}]}),
        ("post", "1/reviews/", {"status": "approved"}),
        ("post", "1/merge/", None),
    ],
)
def test_readers_get_403_and_other_organizations_404_with_nothing_written(
    space, opened, people, method, rest, body
):
    counts = (ChangeRequest.objects.count(), Revision.objects.count(), Review.objects.count())
    refused = getattr(api_client(people["reader"]), method)(cr_url(space, rest), body)
    assert refused.status_code == 403, refused.json()
    hidden = getattr(api_client(people["outsider"]), method)(cr_url(space, rest), body)
    assert hidden.status_code == 404 and hidden.json() == NOT_FOUND
    after = (ChangeRequest.objects.count(), Revision.objects.count(), Review.objects.count())
    assert after == counts
    assert ChangeRequest.objects.get().status == "open"


def test_readers_read_change_requests(space, opened, org_reader):
    assert api_client(org_reader).get(cr_url(space, "1/")).json()["subject"] == "Fix"
    assert api_client(org_reader).get(cr_url(space, "1/pages/")).json()["pages"] == PAGES
    assert api_client(org_reader).get(cr_url(space, "9/")).status_code == 404


@pytest.mark.parametrize(
    ("method", "rest", "body", "attrs"),
    [
        ("post", "", {"subject": ""}, ["subject"]),
        ("post", "", {"subject": "x" * 201}, ["subject"]),
        ("patch", "1/", {}, ["non_field_errors"]),
        ("patch", "1/", {"status": "merged"}, ["status"]),
        ("patch", "1/", {"reviewers": ["nobody"]}, ["reviewers"]),
        ("post", "1/pages/", {"pages": []}, ["pages"]),
        ("post", "1/pages/", {"pages": [{"path": "~x", "title": "X"}]}, ["pages.0.path"]),
        ("post", "1/pages/", {"pages": PAGES, "basedOn": 999999}, ["basedOn"]),
        ("post", "1/pages/", {"pages": PAGES, "spaceRevision": "nope"}, ["spaceRevision"]),
        ("post", "1/reviews/", {"status": "maybe"}, ["status"]),
    ],
)
def test_bad_input_is_400_naming_the_field(space, opened, org_admin, method, rest, body, attrs):
    response = getattr(api_client(org_admin), method)(cr_url(space, rest), body)
    assert response.status_code == 400, response.json()
    assert error_attrs(response) == attrs


def test_reviewers_are_editors_of_the_organization_other_than_the_author(
    space, opened, people, org_member
):
    url = cr_url(space, "1/")
    for name in (people["reader"].username, people["outsider"].username, org_member.username):
        response = api_client(org_member).patch(url, {"reviewers": [name]})
        assert response.status_code == 400 and error_attrs(response) == ["reviewers"]
    asked = api_client(org_member).patch(url, {"reviewers": [people["admin"].username]})
    assert asked.json()["reviewers"] == [people["admin"].username]


def test_closed_and_reopened_and_a_closed_one_takes_no_pages(space, opened, org_member):
    url = cr_url(space, "1/")
    assert api_client(org_member).patch(url, {"status": "closed"}).json()["status"] == "closed"
    pages = {"pages": [{"path": "index", "title": "Home", "body": "two\n"}]}
    refused = api_client(org_member).post(cr_url(space, "1/pages/"), pages)
    assert refused.status_code == 409 and refused.json()["errors"][0]["attr"] == "status"
    assert api_client(org_member).patch(url, {"status": "open"}).json()["status"] == "open"
    actions = AuditEntry.objects.filter(action__startswith="change_request.")
    assert sorted(actions.values_list("action", flat=True)) == [
        "change_request.closed",
        "change_request.opened",
        "change_request.reopened",
    ]


def test_admins_set_the_merge_rules_and_members_may_not(space, org_admin, org_member):
    rules = {"mergeRules": {"requiredApprovals": 2, "upToDate": True}, "changeRequestsOnly": True}
    assert api_client(org_member).patch(f"{API}/spaces/{space.id}/", rules).status_code == 403
    response = api_client(org_admin).patch(f"{API}/spaces/{space.id}/", rules)
    assert response.status_code == 200
    body = response.json()
    assert body["mergeRules"] == {"requiredApprovals": 2, "upToDate": True}
    assert body["changeRequestsOnly"] is True
    bad = api_client(org_admin).patch(
        f"{API}/spaces/{space.id}/", {"mergeRules": {"requiredApprovals": -1}}
    )
    assert bad.status_code == 400 and error_attrs(bad) == ["mergeRules.requiredApprovals"]


def test_change_requests_only_refuses_a_members_direct_save_not_an_admins(
    space, org_admin, org_member
):
    space.change_requests_only = True
    space.save()
    revision = {"pages": [{"path": "index", "title": "Home", "body": "two\n"}]}
    revisions = Revision.objects.count()
    refused = api_client(org_member).post(f"{API}/spaces/{space.id}/revisions/", revision)
    assert refused.status_code == 403
    assert "change requests only" in refused.json()["errors"][0]["detail"]
    assert Revision.objects.count() == revisions
    saved = api_client(org_admin).post(f"{API}/spaces/{space.id}/revisions/", revision)
    assert saved.status_code == 201
    assert api_client(org_member).post(cr_url(space), {"subject": "Still"}).status_code == 201
