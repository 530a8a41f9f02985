"""From nothing to a team, as the README's walkthrough goes, through the pages and through
the API: a person creates an organization, invites two people by e-mail (a member and a
reader), they accept through the links in the mails they were sent, the member creates a space
and writes a page, the admin publishes a site with it, and an anonymous visitor reads it on
SITES_URL. The reader, all along, creates nothing."""

import re
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from docplatform.audit.models import AuditEntry
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
LINK = re.compile(r"https?://[^/\s]+(/invitations/[A-Za-z0-9_-]+/)")


def link_sent_to(address: str) -> str:
    """The accept link's path in the last mail sent to ``address``."""
    sent = [message for message in mail.outbox if address in message.to]
    assert sent, f"no mail to {address}"
    return LINK.search(sent[-1].body).group(1)


@pytest.fixture
def founder():
    return UserFactory(username="alice")


@pytest.fixture
def mails_after_commit(django_capture_on_commit_callbacks):
    """Invitations are mailed once their row is committed: run what waits for the commit."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def visitor(settings):
    return Client(HTTP_HOST=urlsplit(settings.SITES_URL).netloc)


@pytest.mark.slow
def test_a_team_forms_and_publishes_through_the_pages(founder, visitor, mails_after_commit):
    alice = Client()
    alice.force_login(founder)
    created = alice.post("/orgs/new/", {"title": "Acme", "subdomain": "acme"})
    assert created.status_code == 302

    for email, role in [("carol@example.com", "member"), ("dave@example.com", "reader")]:
        with mails_after_commit():
            invited = alice.post("/orgs/acme/members/invite/", {"email": email, "role": role})
        assert invited.status_code == 200

    carol, dave = Client(), Client()
    for client, username, email in [
        (carol, "carol", "carol@example.com"),
        (dave, "dave", "dave@example.com"),
    ]:
        link = link_sent_to(email)
        assert "Make my account and join" in client.get(link).content.decode()
        joined = client.post(
            link,
            {
                "username": username,
                "password": "a long pass phrase",
                "password2": "a long pass phrase",
            },
        )
        assert joined.status_code == 302
        assert client.post(link, {}).status_code == 410  # used once

    members = alice.get("/orgs/acme/members/").content.decode()
    assert "carol" in members and "dave" in members

    assert dave.get("/orgs/acme/spaces/new/").status_code == 403
    made = carol.post("/orgs/acme/spaces/new/", {"title": "Handbook", "visibility": "public"})
    assert made.status_code == 302
    space_id = made["Location"].split("/")[2]
    written = carol.post(
        f"/s/{space_id}/new",
        {"title": "Welcome", "path": "welcome", "body": "# Welcome\n\nHello, team.\n"},
    )
    assert written.status_code == 302

    assert carol.get("/orgs/acme/sites/new/").status_code == 403
    site = alice.post(
        "/orgs/acme/sites/new/",
        {
            "title": "Acme docs",
            "spaces": [space_id],
            f"position-{space_id}": "1",
            "published": "on",
        },
    )
    assert site.status_code == 302
    from docplatform.models import Site

    site_id = Site.objects.get(title="Acme docs").pk

    page = visitor.get(f"/{site_id}/{space_id}/welcome")
    assert page.status_code == 200
    assert "Hello, team." in page.content.decode()
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {
        "organization.created",
        "invitation.created",
        "invitation.accepted",
        "space.created",
        "site.created",
    } <= actions


@pytest.mark.slow
def test_a_team_forms_and_publishes_through_the_api(founder, visitor, mails_after_commit):
    from docplatform.services import api_token_create

    _, token = api_token_create(user=founder, name="walkthrough")
    alice = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert (
        alice.post(
            "/api/v1/orgs/", {"title": "Acme", "subdomain": "acme"}, content_type="application/json"
        ).status_code
        == 201
    )
    for email, role in [("carol@example.com", "member"), ("dave@example.com", "reader")]:
        with mails_after_commit():
            invited = alice.post(
                "/api/v1/orgs/acme/invitations/",
                {"email": email, "role": role},
                content_type="application/json",
            )
        assert invited.status_code == 201

    tokens = {}
    for username, email in [("carol", "carol@example.com"), ("dave", "dave@example.com")]:
        link_token = link_sent_to(email).rstrip("/").rsplit("/", 1)[-1]
        accepted = Client().post(
            "/api/v1/invitations/accept/",
            {"token": link_token, "username": username, "password": "a long pass phrase"},
            content_type="application/json",
        )
        assert accepted.status_code == 201, accepted.json()
        person = Client()
        person.force_login(get_user_model().objects.get(username=username))
        made = person.post("/api/v1/me/tokens/", {"name": "cli"}, content_type="application/json")
        tokens[username] = Client(HTTP_AUTHORIZATION=f"Bearer {made.json()['token']}")

    carol, dave = tokens["carol"], tokens["dave"]
    roles = {
        m["username"]: m["role"] for m in alice.get("/api/v1/orgs/acme/members/").json()["results"]
    }
    assert roles == {"alice": "admin", "carol": "member", "dave": "reader"}

    body = {"title": "Handbook", "visibility": "public"}
    assert (
        dave.post("/api/v1/orgs/acme/spaces/", body, content_type="application/json").status_code
        == 403
    )
    space = carol.post("/api/v1/orgs/acme/spaces/", body, content_type="application/json")
    assert space.status_code == 201
    space_id = space.json()["id"]
    pages = {"pages": [{"path": "welcome", "title": "Welcome", "body": "Hello, team.\n"}]}
    assert (
        carol.post(
            f"/api/v1/spaces/{space_id}/revisions/", pages, content_type="application/json"
        ).status_code
        == 201
    )

    site_body = {"title": "Acme docs", "spaces": [space_id], "published": True}
    assert (
        carol.post(
            "/api/v1/orgs/acme/sites/", site_body, content_type="application/json"
        ).status_code
        == 403
    )
    site = alice.post("/api/v1/orgs/acme/sites/", site_body, content_type="application/json")
    assert site.status_code == 201

    page = visitor.get(f"/{site.json()['id']}/{space_id}/welcome")
    assert page.status_code == 200
    assert "Hello, team." in page.content.decode()
