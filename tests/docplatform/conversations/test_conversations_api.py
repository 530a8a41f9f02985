"""Posting conversations with an installation token holding ``conversations:ingest``, and
reading them as an organization's admin."""

import pytest

from docplatform.conversations.models import Conversation
from docplatform.revisions import space_content_update
from docplatform.services import api_token_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import SpaceFactory

CONVERSATIONS = f"{API}/orgs/acme/conversations/"


def thread(**fields) -> dict:
    return {
        "externalId": "ticket-4711",
        "subject": "How do I rotate a webhook secret?",
        "url": "https://support.example.com/tickets/4711",
        "messages": [
            {
                "role": "user",
                "text": "Where do I rotate the signing secret of our webhook?",
                "time": "2026-03-01T09:30:00Z",
            },
            {
                "role": "agent",
                "text": "Open the installation, then Rotate.",
                "time": "2026-03-01T09:42:00+00:00",
            },
        ],
        **fields,
    }


def post(installation, body, org="acme"):
    return api_client(token=installation.api_token).post(
        f"{API}/orgs/{org}/conversations/", body, format="json"
    )


def test_posting_an_external_id_twice_answers_the_same_conversation(helpdesk, guide):
    first = post(helpdesk, thread())
    assert first.status_code == 201, first.json()
    body = first.json()
    assert body["externalId"] == "ticket-4711"
    assert body["installation"] == helpdesk.pk
    assert body["postedBy"] == f"Helpdesk (installation {helpdesk.pk})"
    assert [m["role"] for m in body["messages"]] == ["user", "agent"]
    assert body["answered"] is True

    again = post(helpdesk, thread())
    assert again.status_code == 200
    assert again.json()["id"] == body["id"]
    assert again.json()["messages"] == body["messages"]
    assert Conversation.objects.count() == 1


def test_a_repost_adds_the_new_messages_and_keeps_the_old(helpdesk):
    first = post(helpdesk, thread()).json()
    follow_up = {"role": "user", "text": "Thanks, found it.", "time": "2026-03-01T10:00:00Z"}
    only_new = post(helpdesk, thread(messages=[follow_up], subject="Rotating a secret"))
    assert only_new.status_code == 200
    assert only_new.json()["subject"] == "Rotating a secret"
    texts = [m["text"] for m in only_new.json()["messages"]]
    assert texts == [m["text"] for m in first["messages"]] + ["Thanks, found it."]

    # The whole thread again, with one more message earlier than the last: nothing twice,
    # everything in time order.
    earlier = {"role": "agent", "text": "Did that work?", "time": "2026-03-01T09:50:00Z"}
    whole = thread(messages=[*thread()["messages"], earlier, follow_up])
    merged = post(helpdesk, whole).json()["messages"]
    assert [m["text"] for m in merged] == [
        "Where do I rotate the signing secret of our webhook?",
        "Open the installation, then Rotate.",
        "Did that work?",
        "Thanks, found it.",
    ]


def test_an_installation_without_the_scope_is_refused(reader_bot):
    response = post(reader_bot, thread())
    assert response.status_code == 403
    assert "conversations:ingest" in response.json()["errors"][0]["detail"]
    assert not Conversation.objects.exists()


def test_another_organizations_installation_cannot_post_here(globex_helpdesk, helpdesk):
    assert post(globex_helpdesk, thread()).status_code == 404
    assert post(globex_helpdesk, thread(), org="nowhere").status_code == 404
    assert not Conversation.objects.exists()
    assert post(globex_helpdesk, thread(), org="globex").status_code == 201


@pytest.mark.parametrize("who", ["admin", "member"])
def test_people_do_not_post_conversations(people, who):
    response = api_client(people[who]).post(CONVERSATIONS, thread(), format="json")
    assert response.status_code == 403
    assert "Only an integration posts conversations" in response.json()["errors"][0]["detail"]
    assert not Conversation.objects.exists()


def test_a_personal_token_does_not_post(org_admin):
    _, token = api_token_create(user=org_admin, name="cli")
    assert api_client(token=token).post(CONVERSATIONS, thread(), format="json").status_code == 403


def _without(field):
    body = thread()
    del body[field]
    return body


def _message(position, **fields):
    body = thread()
    body["messages"][position] = {**body["messages"][position], **fields}
    return body


@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        (_without("externalId"), ["externalId"]),
        (thread(externalId="x" * 201), ["externalId"]),
        (thread(externalId="   "), ["externalId"]),
        (_without("subject"), ["subject"]),
        (_message(1, role="bot"), ["messages.1.role"]),
        (_message(0, time="yesterday"), ["messages.0.time"]),
        (_message(0, time="9999-12-31T23:00:00-05:00"), ["messages.0.time"]),
        (_message(0, time="0001-01-01T00:00:00+05:00"), ["messages.0.time"]),
        (_message(0, text=""), ["messages.0.text"]),
        (_message(1, text=20_001 * "a"), ["messages.1.text"]),
        (thread(messages=[]), ["messages"]),
        (thread(messages="hello"), ["messages"]),
        (thread(url="javascript:alert(1)"), ["url"]),
        (thread(url="ftp://example.com/x"), ["url"]),
        (thread(url="https://example.com/" + "x" * 2000), ["url"]),
        (_message(0, role="bot", time="soon"), ["messages.0.time"]),  # types first
    ],
)
def test_a_bad_field_is_a_400_naming_it_and_writes_nothing(helpdesk, body, attrs):
    response = post(helpdesk, body)
    assert response.status_code == 400, response.json()
    assert error_attrs(response) == attrs
    assert not Conversation.objects.exists()


def test_too_many_messages_and_too_much_text_are_refused(helpdesk, settings):
    settings.CONVERSATIONS_MAX_MESSAGES = 3
    settings.CONVERSATIONS_MAX_TOTAL_LENGTH = 100
    one = {"role": "user", "text": "hi there", "time": "2026-03-01T09:30:00Z"}
    many = [{**one, "time": f"2026-03-01T09:3{n}:00Z"} for n in range(4)]
    response = post(helpdesk, thread(messages=many))
    assert (response.status_code, error_attrs(response)) == (400, ["messages"])
    assert "at most 3 messages" in response.json()["errors"][0]["detail"]
    long = [{**one, "text": "a" * 60}, {**one, "text": "b" * 60}]
    assert error_attrs(post(helpdesk, thread(messages=long))) == ["messages"]
    assert not Conversation.objects.exists()

    # A repost whose new messages would take the kept thread past a bound changes nothing.
    assert post(helpdesk, thread(messages=many[:3])).status_code == 201
    response = post(helpdesk, thread(messages=many[3:], subject="Changed"))
    assert (response.status_code, error_attrs(response)) == (400, ["messages"])
    kept = Conversation.objects.get()
    assert (len(kept.messages), kept.subject) == (3, "How do I rotate a webhook secret?")


def test_hostile_json_is_refused_not_stored(helpdesk):
    assert post(helpdesk, thread(subject="a\x00b")).status_code == 400
    assert post(helpdesk, thread(subject=42)).status_code == 400
    assert not Conversation.objects.exists()


# --- Reading ---------------------------------------------------------------------------------


@pytest.fixture
def posted(helpdesk, guide):
    answered = post(helpdesk, thread()).json()
    unanswered = post(
        helpdesk,
        thread(
            externalId="ticket-4712",
            subject="Invoices in euros",
            url="",
            messages=[
                {
                    "role": "user",
                    "text": "Can I pay invoices in euros?",
                    "time": "2026-03-02T08:00:00Z",
                }
            ],
        ),
    ).json()
    return {"answered": answered, "unanswered": unanswered}


def test_admins_list_them_newest_first_paged(org_admin, posted):
    response = api_client(org_admin).get(CONVERSATIONS, {"limit": 1})
    assert response.status_code == 200
    page = response.json()
    assert page["count"] == 2
    assert [row["externalId"] for row in page["results"]] == ["ticket-4712"]
    assert page["results"][0]["url"] is None
    assert page["results"][0]["answered"] is False
    rest = api_client(org_admin).get(CONVERSATIONS, {"limit": 1, "offset": 1}).json()
    assert [row["externalId"] for row in rest["results"]] == ["ticket-4711"]


def test_one_conversation_comes_with_the_pages_that_match_it(org_admin, posted, guide):
    answered = api_client(org_admin).get(f"{CONVERSATIONS}{posted['answered']['id']}/").json()
    best = answered["matches"][0]
    assert (best["space"]["id"], best["path"], best["title"]) == (
        guide.pk,
        "webhooks/secrets",
        "Rotating a webhook signing secret",
    )
    assert all(match["path"] != "sites" for match in answered["matches"])
    assert answered["matches"][0]["url"].endswith(f"/s/{guide.pk}/webhooks/secrets")
    unanswered = api_client(org_admin).get(f"{CONVERSATIONS}{posted['unanswered']['id']}/")
    assert unanswered.json()["matches"] == []


@pytest.mark.parametrize(("who", "status"), [("member", 403), ("reader", 403), ("outsider", 404)])
def test_members_readers_and_outsiders_do_not_read_them(people, posted, who, status):
    client = api_client(people[who])
    assert client.get(CONVERSATIONS).status_code == status
    assert client.get(f"{CONVERSATIONS}{posted['answered']['id']}/").status_code == status
    if status == 403:
        detail = client.get(CONVERSATIONS).json()["errors"][0]["detail"]
        assert detail == (
            "Only the organization's admins may read the support conversations its "
            "integrations posted."
        )


def test_an_installation_token_does_not_read_them(helpdesk, posted):
    client = api_client(token=helpdesk.api_token)
    assert client.get(CONVERSATIONS).status_code == 403
    assert client.get(f"{CONVERSATIONS}{posted['answered']['id']}/").status_code == 403


def test_another_organizations_conversation_is_not_found(org_admin, globex_helpdesk):
    theirs = post(globex_helpdesk, thread(), org="globex").json()
    assert api_client(org_admin).get(f"{CONVERSATIONS}{theirs['id']}/").status_code == 404


def test_a_page_in_another_organization_never_matches(org_admin, helpdesk, globex_helpdesk):
    globex = globex_helpdesk.organization
    page = {"path": "secret", "title": "Rotate webhook signing secret", "body": "rotate it"}
    space_content_update(space=SpaceFactory(organization=globex), pages=[page])
    assert post(globex_helpdesk, thread(), org="globex").json()["answered"] is True
    body = post(helpdesk, thread()).json()
    assert body["answered"] is False
    assert api_client(org_admin).get(f"{CONVERSATIONS}{body['id']}/").json()["matches"] == []


def test_times_are_answered_in_utc_as_every_time_of_the_api(helpdesk):
    at = {"role": "user", "text": "Rotating secrets?", "time": "2026-03-01T10:30:00+01:00"}
    body = post(helpdesk, thread(messages=[at])).json()
    assert body["messages"][0]["time"] == "2026-03-01T09:30:00Z"
    assert body["receivedAt"].endswith("Z")
