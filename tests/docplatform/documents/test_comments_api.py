"""Comments on a space's pages through the REST API (``/api/v1/spaces/{id}/comments/``):
threads anchored to a heading, to lines or to the whole page, replies, resolving, mentions,
who may, and bad input naming its field with nothing written."""

import pytest
from django.core import mail

from docplatform.documents.comments.models import Comment
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import IntegrationFactory, UserFactory

pytestmark = pytest.mark.django_db

INSTALL = "# Install\n\n## Requirements\n\nPython 3.12.\n\n## Steps\n\nRun it.\n"


@pytest.fixture
def space_spec(org_admin):
    return {
        "title": "Handbook",
        "visibility": "public",
        "pages": [
            {"path": "guide/install", "title": "Install", "body": INSTALL},
            {"path": "intro", "title": "Intro", "body": "Hello."},
        ],
        "author": org_admin,
    }


def comments_url(space) -> str:
    return f"{API}/spaces/{space.pk}/comments/"


def post(user, space, **body):
    return api_client(user).post(comments_url(space), {"page": "guide/install", **body})


def threads(user, space, page="guide/install"):
    response = api_client(user).get(comments_url(space), {"page": page})
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.mark.slow
def test_a_member_comments_on_a_heading_on_lines_and_on_the_whole_page(space, org_member):
    on_heading = post(org_member, space, anchor={"heading": "requirements"}, body="Is 3.11 ok?")
    assert on_heading.status_code == 201, on_heading.content
    assert on_heading.json()["anchor"] == {"heading": "requirements"}
    assert on_heading.json()["author"] == org_member.username
    on_lines = post(org_member, space, anchor={"lines": [3, 5]}, body="Typo here.")
    assert on_lines.status_code == 201, on_lines.content
    whole = post(org_member, space, anchor=None, body="Nice page.")
    assert whole.status_code == 201
    listed = threads(org_member, space)
    assert [thread["body"] for thread in listed] == ["Nice page.", "Typo here.", "Is 3.11 ok?"]
    assert listed[1]["anchor"] == {"lines": [3, 5]}
    assert listed[0]["anchor"] is None and listed[0]["resolved"] is False
    assert threads(org_member, space, page="intro") == []


def test_a_reply_to_a_reply_joins_the_thread_of_its_first_comment(space, org_member, org_admin):
    root = post(org_member, space, body="Question?").json()
    reply = post(org_admin, space, body="Answer.", replyTo=root["id"])
    assert reply.status_code == 201, reply.content
    reply_id = reply.json()["replies"][0]["id"]
    again = post(org_member, space, body="Thanks!", replyTo=reply_id)
    assert again.status_code == 201
    [thread] = threads(org_member, space)
    assert thread["id"] == root["id"]
    assert [r["body"] for r in thread["replies"]] == ["Answer.", "Thanks!"]
    assert {r["replyTo"] for r in thread["replies"]} == {root["id"]}


def test_a_thread_is_resolved_and_reopened_by_members_and_by_who_started_it(
    space, org_member, org_admin, org_reader
):
    space.readers_may_comment = True
    space.save()
    thread = post(org_reader, space, body="Unclear.").json()
    address = f"{comments_url(space)}{thread['id']}/"
    resolved = api_client(org_member).patch(address, {"resolved": True})
    assert resolved.status_code == 200
    assert resolved.json()["resolved"] is True
    assert resolved.json()["resolvedBy"] == org_member.username
    reopened = api_client(org_reader).patch(address, {"resolved": False})
    assert reopened.json()["resolved"] is False and reopened.json()["resolvedBy"] is None
    # a reply's thread is what a PATCH of the reply resolves
    reply = post(org_admin, space, body="Clarified.", replyTo=thread["id"]).json()
    reply_id = reply["replies"][0]["id"]
    by_reply = api_client(org_admin).patch(f"{comments_url(space)}{reply_id}/", {"resolved": True})
    assert by_reply.json()["id"] == thread["id"] and by_reply.json()["resolved"] is True


def test_a_reader_may_not_resolve_another_persons_thread(space, org_member, org_reader):
    thread = post(org_member, space, body="Mine.").json()
    refused = api_client(org_reader).patch(
        f"{comments_url(space)}{thread['id']}/", {"resolved": True}
    )
    assert refused.status_code == 403
    assert Comment.objects.get().resolved_at is None


def test_readers_comment_only_where_the_space_allows_it(space, org_reader, org_admin):
    refused = post(org_reader, space, body="May I?")
    assert refused.status_code == 403
    assert "readers where the space's admins allow it" in refused.json()["errors"][0]["detail"]
    assert not Comment.objects.exists()
    post(org_admin, space, body="Readers read this.")
    assert len(threads(org_reader, space)) == 1  # reading is always allowed
    allowed = api_client(org_admin).patch(f"{API}/spaces/{space.pk}/", {"readersMayComment": True})
    assert allowed.status_code == 200 and allowed.json()["readersMayComment"] is True
    assert post(org_reader, space, body="Now I may.").status_code == 201


def test_only_admins_let_readers_comment(space, org_member):
    refused = api_client(org_member).patch(f"{API}/spaces/{space.pk}/", {"readersMayComment": True})
    assert refused.status_code == 403
    space.refresh_from_db()
    assert space.readers_may_comment is False


def test_other_organizations_anonymous_visitors_and_installation_tokens_get_nothing(
    space, people, organization, org_admin
):
    post(org_admin, space, body="Internal.")
    thread_id = Comment.objects.get().pk
    outsider = people["outsider"]
    assert api_client(outsider).get(comments_url(space), {"page": "intro"}).status_code == 404
    assert post(outsider, space, body="Hi").status_code == 404
    patch = api_client(outsider).patch(f"{comments_url(space)}{thread_id}/", {"resolved": True})
    assert patch.status_code == 404
    # the space is public: its pages are anyone's, its comments the organization's
    assert api_client().get(comments_url(space), {"page": "intro"}).status_code in (401, 403)
    installation = installation_create(
        user=org_admin,
        integration=IntegrationFactory(organization=organization),
        organization=organization,
    )
    token = api_client(token=installation.api_token)
    assert token.get(comments_url(space), {"page": "intro"}).status_code == 403
    assert Comment.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"page": "nowhere"}, "page"),
        ({"anchor": {"heading": "no-such-heading"}}, "anchor.heading"),
        ({"anchor": {"heading": {"not": "text"}}}, "anchor.heading"),
        ({"anchor": {"where": "there"}}, "anchor"),
        ({"anchor": {"heading": "steps", "lines": [1, 2]}}, "anchor"),
        ({"anchor": "requirements"}, "anchor"),
        ({"anchor": {"lines": [5, 3]}}, "anchor.lines"),
        ({"anchor": {"lines": [1, 99]}}, "anchor.lines"),
        ({"anchor": {"lines": [1, True]}}, "anchor.lines"),
        ({"anchor": {"lines": [1]}}, "anchor.lines"),
        ({"body": ""}, "body"),
        ({"body": "   "}, "body"),
        ({"body": "x" * 10_001}, "body"),
        ({"body": 7}, "body"),
        ({"replyTo": "nosuchcomment"}, "replyTo"),
        ({"replyTo": 12}, "replyTo"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(space, org_member, body, field):
    refused = post(org_member, space, **{"body": "Fine.", **body})
    assert refused.status_code == 400, refused.content
    assert error_attrs(refused) == [field]
    assert not Comment.objects.exists()


def test_a_reply_must_be_to_a_comment_of_the_same_page_and_takes_no_anchor(space, org_member):
    elsewhere = post(org_member, space, page="intro", body="On the intro.").json()
    refused = post(org_member, space, body="Reply?", replyTo=elsewhere["id"])
    assert error_attrs(refused) == ["replyTo"]
    root = post(org_member, space, body="Here.").json()
    anchored = post(org_member, space, body="Re", replyTo=root["id"], anchor={"lines": [1, 1]})
    assert error_attrs(anchored) == ["anchor"]
    assert Comment.objects.count() == 2


def test_the_page_parameter_is_required(space, org_member):
    refused = api_client(org_member).get(comments_url(space))
    assert refused.status_code == 400
    assert error_attrs(refused) == ["page"]


def test_a_mention_mails_a_person_of_the_organization_and_no_stranger(
    space, org_member, org_admin, django_capture_on_commit_callbacks
):
    stranger = UserFactory(username="stranger")
    with django_capture_on_commit_callbacks(execute=True):
        made = post(
            org_member,
            space,
            body=f"@{org_admin.username}, see this. Not @stranger, nor me: @{org_member.username}.",
        )
    assert made.status_code == 201
    assert [message.to for message in mail.outbox] == [[org_admin.email]]
    assert org_member.username in mail.outbox[0].subject
    assert made.json()["id"] in mail.outbox[0].body
    assert stranger.email not in str([m.to for m in mail.outbox])


def test_an_email_address_in_a_comment_mentions_nobody(
    space, org_member, org_admin, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post(org_member, space, body=f"Write to x@{org_admin.username} please.")
    assert mail.outbox == []


@pytest.mark.django_db(transaction=True)
def test_a_failing_mail_server_loses_no_comment(space, org_member, org_admin, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused
    settings.EMAIL_TIMEOUT = 2
    made = post(org_member, space, body=f"@{org_admin.username} look.")
    assert made.status_code == 201
    assert Comment.objects.get().body == f"@{org_admin.username} look."


def test_a_script_in_a_comment_is_never_html(space, org_member):
    made = post(org_member, space, body="<script>alert(1)</script> **bold**")
    html = made.json()["bodyHtml"]
    assert "<script" not in html and "<strong>bold</strong>" in html
    assert made.json()["body"].startswith("<script>")  # the Markdown as written


def test_people_delete_their_own_comments_only(space, org_member, org_admin):
    thread = post(org_member, space, body="Oops.").json()
    post(org_admin, space, body="Reply.", replyTo=thread["id"])
    address = f"{comments_url(space)}{thread['id']}/"
    assert api_client(org_admin).delete(address).status_code == 403
    assert api_client(org_member).delete(address).status_code == 204
    assert not Comment.objects.exists()  # the thread's replies went with it
