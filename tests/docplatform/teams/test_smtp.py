"""Invitations through a real SMTP server (aiosmtpd, on a local port): the mails arrive, and
the links they carry make accounts that join, through the page and through the API."""

import email
import email.policy
import re
from urllib.parse import urlsplit

import pytest
from aiosmtpd.controller import Controller
from django.test import Client

from docplatform import access
from tests.api_helpers import API, api_client
from tests.network import free_port

from .conftest import STRONG_PASSWORD, invitations_url


class Inbox:
    """aiosmtpd's handler: keeps every message it is sent."""

    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):  # the name aiosmtpd calls
        self.messages.append(
            email.message_from_bytes(envelope.content, policy=email.policy.default)
        )
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp_inbox(settings):
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = controller.hostname, controller.port
    settings.EMAIL_USE_TLS = False
    settings.DEFAULT_FROM_EMAIL = "docplatform <noreply@docs.example.com>"
    yield inbox
    controller.stop()


def link_in(message) -> str:
    """The accept link in a received message's text."""
    return re.search(r"http\S+/invitations/[\w-]+/", message.get_content()).group(0)


def accept_by_page(link: str, username: str) -> Client:
    """Follow the link as someone without an account: make one there; a signed-in browser."""
    visitor, path = Client(), urlsplit(link).path
    visitor.get(path)
    joined = visitor.post(
        path, {"username": username, "password": STRONG_PASSWORD, "password2": STRONG_PASSWORD}
    )
    assert joined.status_code == 302, joined.content
    return visitor


@pytest.mark.django_db(transaction=True)
def test_two_people_invited_by_mail_join_through_the_links_they_were_sent(
    org_admin, organization, smtp_inbox
):
    admin = api_client(org_admin)
    for address, role in (("erin@example.com", "member"), ("frank@example.com", "reader")):
        made = admin.post(invitations_url(), {"email": address, "role": role})
        assert made.status_code == 201 and made.json()["emailSent"] is True

    erin_mail, frank_mail = smtp_inbox.messages
    assert (erin_mail["To"], frank_mail["To"]) == ("erin@example.com", "frank@example.com")
    assert erin_mail["From"] == "docplatform <noreply@docs.example.com>"
    assert erin_mail["Subject"] == "Join Acme on docplatform"

    erin = accept_by_page(link_in(erin_mail), "erin")  # through the page
    assert erin.get("/orgs/acme/members/").status_code == 200
    frank_token = link_in(frank_mail).rstrip("/").rsplit("/", 1)[-1]
    joined = api_client().post(  # through the API
        f"{API}/invitations/accept/",
        {"token": frank_token, "username": "frank", "password": STRONG_PASSWORD},
    )
    assert joined.status_code == 201

    roles = {m.user.username: (m.role, m.user.email) for m in access.members_of(organization)}
    assert roles["erin"] == ("member", "erin@example.com")
    assert roles["frank"] == ("reader", "frank@example.com")
