"""Comments on change requests: through the REST API
(``/api/v1/spaces/{id}/change-requests/{number}/comments/``) and the change request's page;
never among a page's comments (nor the reverse); mentions, who may, bad input."""

import pytest
from django.core import mail

from docplatform.documents.comments.models import Comment
from docplatform.events.models import Event
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import IntegrationFactory, MembershipFactory

pytestmark = pytest.mark.django_db

PAGES = [
    {"path": "index", "title": "Home", "body": "one\ntwo\nthree\n"},
    {"path": "guide", "title": "Guide", "body": "read me\n"},
]


@pytest.fixture
def space_spec():
    return {"title": "Handbook", "pages": PAGES}


@pytest.fixture
def number(space, org_member):
    url = f"{API}/spaces/{space.pk}/change-requests/"
    response = api_client(org_member).post(url, {"subject": "Install guide"})
    assert response.status_code == 201, response.content
    return response.json()["number"]


def url(space, number, rest=""):
    return f"{API}/spaces/{space.pk}/change-requests/{number}/comments/{rest}"


def post(user, space, number, **body):
    return api_client(user).post(url(space, number), {"page": "", **body})


def threads(user, space, number):
    response = api_client(user).get(url(space, number))
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.mark.slow
def test_comment_reply_resolve_reopen_and_delete_through_the_api(
    space, number, org_member, org_admin
):
    whole = post(org_member, space, number, body="Ready for review?")
    assert whole.status_code == 201, whole.content
    assert whole.json()["page"] == "" and whole.json()["anchor"] is None
    on_lines = post(org_admin, space, number, page="index", anchor={"lines": [2, 3]}, body="Typo")
    assert on_lines.status_code == 201, on_lines.content
    reply = post(
        org_member, space, number, page="index", body="Fixed.", replyTo=on_lines.json()["id"]
    )
    assert reply.status_code == 201, reply.content
    listed = threads(org_member, space, number)
    assert [thread["body"] for thread in listed] == ["Typo", "Ready for review?"]
    assert [r["body"] for r in listed[0]["replies"]] == ["Fixed."]
    thread_id = on_lines.json()["id"]
    resolved = api_client(org_member).patch(url(space, number, f"{thread_id}/"), {"resolved": True})
    assert resolved.status_code == 200 and resolved.json()["resolved"] is True
    reopened = api_client(org_admin).patch(url(space, number, f"{thread_id}/"), {"resolved": False})
    assert reopened.json()["resolved"] is False
    gone = api_client(org_member).delete(url(space, number, f"{whole.json()['id']}/"))
    assert gone.status_code == 204
    assert [thread["id"] for thread in threads(org_admin, space, number)] == [thread_id]


def test_change_request_and_page_comments_never_mix(space, number, org_member):
    mine = post(org_member, space, number, page="index", body="On the change request.").json()
    page_comment = api_client(org_member).post(
        f"{API}/spaces/{space.pk}/comments/", {"page": "index", "body": "On the page."}
    )
    assert page_comment.status_code == 201, page_comment.content
    on_page = api_client(org_member).get(f"{API}/spaces/{space.pk}/comments/", {"page": "index"})
    assert [thread["body"] for thread in on_page.json()["results"]] == ["On the page."]
    assert [thread["body"] for thread in threads(org_member, space, number)] == [
        "On the change request."
    ]
    # Neither's address finds the other's comments, nor do replies cross over.
    page_id = page_comment.json()["id"]
    patch = api_client(org_member).patch
    assert patch(url(space, number, f"{page_id}/"), {"resolved": True}).status_code == 404
    cross = f"{API}/spaces/{space.pk}/comments/{mine['id']}/"
    assert patch(cross, {"resolved": True}).status_code == 404
    reply = post(org_member, space, number, page="index", body="x", replyTo=page_id)
    assert reply.status_code == 400 and error_attrs(reply) == ["replyTo"]
    assert Comment.objects.count() == 2


def test_a_mention_mails_a_link_to_the_change_request(
    space, number, org_member, org_admin, django_capture_on_commit_callbacks
):
    org_admin.email = "admin@example.test"
    org_admin.save()
    with django_capture_on_commit_callbacks(execute=True):
        response = post(org_member, space, number, body=f"Please look, @{org_admin.username}.")
    assert response.status_code == 201, response.content
    [message] = mail.outbox
    assert message.to == ["admin@example.test"]
    assert "#1 Install guide" in message.subject
    assert f"/s/{space.pk}/~cr/{number}/#comment-{response.json()['id']}" in message.body


def test_readers_outsiders_and_installation_tokens(
    space, number, org_reader, outsider, org_admin, organization
):
    refused = post(org_reader, space, number, body="Me too.")
    assert refused.status_code == 403
    assert threads(org_reader, space, number) == []
    space.readers_may_comment = True
    space.save()
    assert post(org_reader, space, number, body="Me too.").status_code == 201
    assert post(outsider, space, number, body="Hi").status_code == 404
    assert api_client(outsider).get(url(space, number)).status_code == 404
    installation = installation_create(
        user=org_admin,
        integration=IntegrationFactory(organization=organization),
        organization=organization,
    )
    token = api_client(token=installation.api_token)
    assert token.get(url(space, number)).status_code == 403
    assert api_client(org_admin).get(url(space, 99)).status_code == 404
    assert Comment.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"page": "nowhere", "body": "x"}, "page"),
        ({"body": "   "}, "body"),
        ({"page": "index", "anchor": {"lines": [2, 9]}, "body": "x"}, "anchor.lines"),
        ({"page": "index", "anchor": {"heading": "one"}, "body": "x"}, "anchor"),
        ({"anchor": {"lines": [1, 1]}, "body": "x"}, "anchor"),
        ({"body": "x", "replyTo": "nosuchcomment"}, "replyTo"),
    ],
)
def test_bad_input_names_its_field_and_writes_nothing(space, number, org_member, body, field):
    response = api_client(org_member).post(url(space, number), body)
    assert response.status_code == 400, response.content
    assert error_attrs(response) == [field]
    assert not Comment.objects.exists()


def test_the_page_shows_threads_escaped_and_its_forms_write(client, space, number, org_member):
    client.force_login(org_member)
    address = f"/s/{space.pk}/~cr/{number}/"
    created = client.post(f"{address}-/comments", {"page": "", "body": "<script>alert(1)</script>"})
    assert created.status_code == 302
    thread = Comment.objects.get()
    assert thread.change_request.number == number and created.url.endswith(f"#comment-{thread.pk}")
    client.post(
        f"{address}-/comments",
        {"page": "index", "anchor": "lines", "from": "1", "to": "2", "body": "Lines."},
    )
    assert Comment.objects.get(body="Lines.").anchor == {"lines": [1, 2]}
    client.post(f"{address}-/comments", {"page": "", "reply_to": thread.pk, "body": "A reply."})
    assert Comment.objects.get(body="A reply.").reply_to_id == thread.pk
    client.post(f"{address}-/comments/{thread.pk}/resolve", {"resolved": "1"})
    thread.refresh_from_db()
    assert thread.resolved
    html = client.get(address).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "A reply." in html and "Resolved" in html and "index, lines 1 to 2" in html
    assert html.index("Lines.") < html.index("A reply.")  # newest thread first
    client.post(f"{address}-/comments/{thread.pk}/resolve", {"resolved": "0"})
    thread.refresh_from_db()
    assert not thread.resolved
    assert "&lt;script&gt;" in client.get(address).content.decode()
    page_html = client.get(f"/s/{space.pk}/index").content.decode()
    assert "A reply." not in page_html and "Lines." not in page_html
    client.post(f"{address}-/comments/{thread.pk}/delete")
    assert list(Comment.objects.values_list("body", flat=True)) == ["Lines."]


def test_opened_edited_commented_approved_and_merged(space, org_member, org_admin, organization):
    reviewer = MembershipFactory(organization=organization, role="member").user
    rules = api_client(org_admin).patch(
        f"{API}/spaces/{space.pk}/", {"mergeRules": {"requiredApprovals": 1}}
    )
    assert rules.status_code == 200, rules.content
    base = f"{API}/spaces/{space.pk}/change-requests/"
    number = api_client(org_member).post(base, {"subject": "Better home"}).json()["number"]
    head = api_client(org_member).get(f"{base}{number}/pages/").json()
    pages = [{**p, "body": "one\n2\nthree\n"} if p["path"] == "index" else p for p in head["pages"]]
    written = api_client(org_member).post(
        f"{base}{number}/pages/", {"pages": pages, "basedOn": head["revision"]}
    )
    assert written.status_code == 201, written.content
    comment = post(reviewer, space, number, page="index", anchor={"lines": [2, 2]}, body="Why 2?")
    assert comment.status_code == 201, comment.content
    assert api_client(org_member).post(f"{base}{number}/merge/").status_code == 409
    review = api_client(reviewer).post(f"{base}{number}/reviews/", {"status": "approved"})
    assert review.status_code == 201, review.content
    before = Event.objects.filter(type="space_content_updated").count()
    merged = api_client(org_member).post(f"{base}{number}/merge/")
    assert merged.status_code == 201, merged.content
    assert Event.objects.filter(type="space_content_updated").count() == before + 1
    assert [thread["body"] for thread in threads(org_member, space, number)] == ["Why 2?"]
