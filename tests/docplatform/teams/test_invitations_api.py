"""Invitations through the REST API: an admin invites by e-mail, the invited person follows
the mailed link (signed in, or making an account), and a link works once."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from docplatform import access
from docplatform.audit.models import AuditEntry
from docplatform.services import api_token_create
from docplatform.teams.models import Invitation
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import IntegrationFactory, UserFactory

from .conftest import (
    STRONG_PASSWORD,
    audit_actions,
    invitations_url,
    link_in,
    token_of,
)

ACCEPT = f"{API}/invitations/accept/"

pytestmark = pytest.mark.django_db


def invite(admin, email="erin@example.com", role="member"):
    made = api_client(admin).post(invitations_url(), {"email": email, "role": role})
    assert made.status_code == 201, made.json()
    return made


@pytest.mark.django_db(transaction=True)
def test_an_invited_person_follows_the_mailed_link_and_joins_with_a_new_account(
    org_admin, organization, mailoutbox
):
    made = invite(org_admin, role="reader")
    assert made["Cache-Control"] == "no-store"
    body = made.json()
    assert body["email"] == "erin@example.com" and body["role"] == "reader"
    assert body["emailSent"] is True
    expires = timezone.now() + timedelta(days=7)
    assert abs(Invitation.objects.get().expires_at - expires) < timedelta(minutes=1)

    [mail] = mailoutbox
    assert mail.to == ["erin@example.com"]
    assert "Acme" in mail.subject
    assert org_admin.username in mail.body and "reader" in mail.body
    assert link_in(mail) == body["url"]
    token = token_of(body["url"])
    assert token not in Invitation.objects.values_list("token_hash", flat=True)[0]

    joined = api_client().post(
        ACCEPT, {"token": token, "username": "erin", "password": STRONG_PASSWORD}
    )
    assert joined.status_code == 201, joined.json()
    assert joined.json() == {
        "username": "erin",
        "organization": {"id": organization.pk, "subdomain": "acme", "title": "Acme"},
        "role": "reader",
        "joined": True,
    }
    erin = get_user_model().objects.get(username="erin")
    assert erin.email == "erin@example.com" and erin.check_password(STRONG_PASSWORD)
    assert access.role_of(erin, organization) == "reader"
    _, raw = api_token_create(user=erin, name="laptop")
    assert api_client(token=raw).get(f"{API}/orgs/acme/").status_code == 200


@pytest.mark.slow
def test_the_open_invitations_are_listed_for_admins_without_their_links(org_admin):
    first = invite(org_admin, "erin@example.com").json()
    second = invite(org_admin, "frank@example.com", role="admin").json()
    revoked = invite(org_admin, "gone@example.com").json()
    api_client(org_admin).delete(f"{invitations_url()}{revoked['id']}/")
    expired = invite(org_admin, "late@example.com").json()
    Invitation.objects.filter(pk=expired["id"]).update(expires_at=timezone.now())

    listed = api_client(org_admin).get(invitations_url())
    assert listed.status_code == 200
    rows = listed.json()["results"]
    assert [row["email"] for row in rows] == ["frank@example.com", "erin@example.com"]
    assert rows[0]["role"] == "admin" and rows[0]["invitedBy"] == org_admin.username
    assert "url" not in rows[0]
    assert token_of(first["url"]) not in listed.content.decode()
    assert token_of(second["url"]) not in listed.content.decode()


def test_a_signed_in_person_joins_as_themselves(org_admin, organization):
    url = invite(org_admin, role="member").json()["url"]
    frank = UserFactory(username="frank")
    _, raw = api_token_create(user=frank, name="cli")
    joined = api_client(token=raw).post(ACCEPT, {"token": token_of(url)})
    assert joined.status_code == 201
    assert joined.json()["username"] == "frank" and joined.json()["role"] == "member"
    assert access.membership_of(organization, "frank").role == "member"
    accepted = AuditEntry.objects.get(action="invitation.accepted")
    assert accepted.actor_label == "frank" and accepted.details["role"] == "member"


def test_a_member_accepting_keeps_their_role_and_uses_the_link_up(
    org_admin, org_member, organization
):
    url = invite(org_admin, role="admin").json()["url"]
    answer = api_client(org_member).post(ACCEPT, {"token": token_of(url)})
    assert answer.status_code == 200
    assert answer.json()["role"] == "member" and answer.json()["joined"] is False
    assert access.membership_of(organization, org_member.username).role == "member"
    assert Invitation.objects.get().state == "accepted"
    again = api_client(UserFactory()).post(ACCEPT, {"token": token_of(url)})
    assert again.status_code == 410


@pytest.mark.slow
def test_a_link_works_once(org_admin):
    token = token_of(invite(org_admin).json()["url"])
    first = api_client().post(
        ACCEPT, {"token": token, "username": "erin", "password": STRONG_PASSWORD}
    )
    assert first.status_code == 201
    before = audit_actions()

    second = api_client().post(
        ACCEPT, {"token": token, "username": "mallory", "password": STRONG_PASSWORD}
    )
    assert second.status_code == 410
    assert second.json()["errors"][0]["code"] == "invitation_accepted"
    assert "used already" in second.json()["errors"][0]["detail"]
    signed_in = api_client(UserFactory(username="trudy")).post(ACCEPT, {"token": token})
    assert signed_in.status_code == 410
    assert not get_user_model().objects.filter(username="mallory").exists()
    assert access.membership_of(Invitation.objects.get().organization, "trudy") is None
    assert audit_actions() == before


@pytest.mark.parametrize("state", ["revoked", "expired"])
def test_a_revoked_or_expired_link_says_so_and_grants_nothing(org_admin, state):
    body = invite(org_admin).json()
    if state == "revoked":
        assert api_client(org_admin).delete(f"{invitations_url()}{body['id']}/").status_code == 204
    else:
        Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    users = get_user_model().objects.count()

    refused = api_client().post(
        ACCEPT, {"token": token_of(body["url"]), "username": "erin", "password": STRONG_PASSWORD}
    )
    assert refused.status_code == 410
    assert refused.json()["errors"][0]["code"] == f"invitation_{state}"
    assert get_user_model().objects.count() == users
    assert "invitation.accepted" not in audit_actions()


@pytest.mark.slow
def test_an_unknown_token_is_not_found(org_member):
    assert api_client(org_member).post(ACCEPT, {"token": "no-such-token"}).json() == NOT_FOUND
    refused = api_client().post(
        ACCEPT, {"token": "no-such-token", "username": "erin", "password": STRONG_PASSWORD}
    )
    assert refused.status_code == 404


def test_a_new_account_is_checked_as_a_sign_up_form_checks_it(org_admin):
    token = token_of(invite(org_admin).json()["url"])
    UserFactory(username="Erin")

    def accept(**fields):
        return api_client().post(ACCEPT, {"token": token, **fields})

    taken = accept(username="erin", password=STRONG_PASSWORD)
    assert taken.status_code == 400 and error_attrs(taken) == ["username"]
    assert "taken" in taken.json()["errors"][0]["detail"]
    weak = accept(username="erin2", password="12345678")
    assert weak.status_code == 400 and set(error_attrs(weak)) == {"password"}
    bad_name = accept(username="erin smith!", password=STRONG_PASSWORD)
    assert error_attrs(bad_name) == ["username"]
    missing = accept()
    assert error_attrs(missing) == ["password", "username"]
    assert Invitation.objects.get().state == "open"  # nothing was used up

    assert accept(username="erin2", password=STRONG_PASSWORD).status_code == 201


def test_a_signed_in_caller_joins_as_themselves_only(org_admin, outsider):
    token = token_of(invite(org_admin).json()["url"])
    refused = api_client(outsider).post(
        ACCEPT, {"token": token, "username": "other", "password": STRONG_PASSWORD}
    )
    assert refused.status_code == 400 and error_attrs(refused) == ["username"]
    assert Invitation.objects.get().state == "open"


def test_revoking_stops_the_link_and_is_recorded_once(org_admin):
    body = invite(org_admin).json()
    client = api_client(org_admin)
    assert client.delete(f"{invitations_url()}{body['id']}/").status_code == 204
    assert client.delete(f"{invitations_url()}{body['id']}/").status_code == 204  # already
    assert audit_actions() == ["invitation.created", "invitation.revoked"]
    revoked = AuditEntry.objects.get(action="invitation.revoked")
    assert revoked.actor_label == org_admin.username and revoked.target_label == body["email"]
    assert client.get(invitations_url()).json()["results"] == []
    assert client.delete(f"{invitations_url()}nosuchinvitation/").status_code == 404


def test_an_accepted_invitation_cannot_be_revoked(org_admin):
    body = invite(org_admin).json()
    api_client().post(
        ACCEPT, {"token": token_of(body["url"]), "username": "erin", "password": STRONG_PASSWORD}
    )
    refused = api_client(org_admin).delete(f"{invitations_url()}{body['id']}/")
    assert refused.status_code == 400 and error_attrs(refused) == ["invitation"]
    assert "remove the member" in refused.json()["errors"][0]["detail"]


def test_each_invitation_action_leaves_one_audit_row_without_the_token(org_admin):
    body = invite(org_admin).json()
    created = AuditEntry.objects.get(action="invitation.created")
    assert created.actor_label == org_admin.username
    assert created.organization_id == Invitation.objects.get().organization_id
    assert created.details["email"] == "erin@example.com" and created.details["role"] == "member"
    api_client().post(
        ACCEPT, {"token": token_of(body["url"]), "username": "erin", "password": STRONG_PASSWORD}
    )
    assert audit_actions() == ["invitation.created", "invitation.accepted"]
    accepted = AuditEntry.objects.get(action="invitation.accepted")
    assert accepted.actor_label == "erin" and accepted.details["joined"] is True
    token = token_of(body["url"])
    every_row = json.dumps(list(AuditEntry.objects.values()), default=str)
    assert token not in every_row and Invitation.hash_token(token) not in every_row


@pytest.mark.parametrize(
    ("sent", "attrs"),
    [
        ({"role": "member"}, ["email"]),
        ({"email": "not an address", "role": "member"}, ["email"]),
        ({"email": "erin@example.com", "role": "owner"}, ["role"]),
        ({"email": "erin@example.com"}, ["role"]),
        ({}, ["email", "role"]),
    ],
)
def test_bad_input_is_refused_naming_the_field(org_admin, sent, attrs):
    refused = api_client(org_admin).post(invitations_url(), sent)
    assert refused.status_code == 400
    assert error_attrs(refused) == attrs
    assert not Invitation.objects.exists() and audit_actions() == []


def test_a_body_that_is_not_json_is_refused(org_admin):
    refused = api_client(org_admin).post(
        invitations_url(), "{not json", content_type="application/json"
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["code"] == "parse_error"
    assert not Invitation.objects.exists()
    unreadable = api_client().post(ACCEPT, "[", content_type="application/json")
    assert unreadable.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_a_failing_mail_server_loses_no_invitation(org_admin, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens: refused
    settings.EMAIL_TIMEOUT = 2
    made = invite(org_admin)
    assert made.json()["emailSent"] is False
    assert Invitation.objects.get().state == "open"
    joined = api_client().post(
        ACCEPT,
        {"token": token_of(made.json()["url"]), "username": "erin", "password": STRONG_PASSWORD},
    )
    assert joined.status_code == 201


def test_an_installation_token_cannot_accept(org_admin, organization):
    token = token_of(invite(org_admin).json()["url"])
    installation = installation_create(
        user=org_admin,
        integration=IntegrationFactory(organization=organization),
        organization=organization,
    )
    refused = api_client(token=installation.api_token).post(ACCEPT, {"token": token})
    assert refused.status_code == 403
    assert Invitation.objects.get().state == "open"
