"""The Members page and the page an invitation's link opens, as a browser uses them: forms
posted with their CSRF token, refusals on the 403 page, bad input shown at its field."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from docplatform import access
from docplatform.teams.models import Invitation
from docplatform.teams.services import invitation_create
from tests.factories import MembershipFactory, UserFactory

from .conftest import STRONG_PASSWORD, audit_actions, link_in, link_path, written

MEMBERS = "/orgs/acme/members/"

pytestmark = pytest.mark.django_db


def browser(user=None) -> Client:
    """A client that checks CSRF tokens, as a browser's requests are checked."""
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    return client


def post_form(client: Client, path: str, data: dict | None = None, *, page: str | None = None):
    """Open ``page`` (default ``path``) for its CSRF cookie, then post ``data`` with it."""
    client.get(page or path)
    token = client.cookies["csrftoken"].value
    return client.post(path, {**(data or {}), "csrfmiddlewaretoken": token})


def invitation(organization, inviter, role="member", email="erin@example.com"):
    return invitation_create(
        organization=organization, email=email, role=role, invited_by=inviter, notify=False
    )


# --- The Members page ---------------------------------------------------------------------------


def test_every_member_sees_the_people_and_admins_also_the_controls(
    org_admin, org_member, organization
):
    invitation(organization, org_admin)
    seen = browser(org_member).get(MEMBERS)
    assert seen.status_code == 200
    html = seen.content.decode()
    assert org_admin.username in html and org_member.username in html
    assert "Invite someone" not in html and "erin@example.com" not in html
    assert 'href="/orgs/acme/members/"' in html  # the top bar's Members link

    managed = browser(org_admin).get(MEMBERS).content.decode()
    assert "Invite someone" in managed and "erin@example.com" in managed
    assert f"/orgs/acme/members/{org_member.username}/remove/" in managed


def test_an_admin_invites_from_the_page_and_sees_the_link_once(
    org_admin, organization, mailoutbox, django_capture_on_commit_callbacks
):
    admin = browser(org_admin)
    with django_capture_on_commit_callbacks(execute=True):
        shown = post_form(
            admin,
            f"{MEMBERS}invite/",
            {"email": "erin@example.com", "role": "reader"},
            page=MEMBERS,
        )
    assert shown.status_code == 200
    assert shown["Cache-Control"] == "no-store"
    [mail] = mailoutbox
    assert link_in(mail) in shown.content.decode()
    made = Invitation.objects.get()
    assert (made.email, made.role, made.invited_by) == ("erin@example.com", "reader", org_admin)
    assert audit_actions() == ["invitation.created"]
    assert link_in(mail) not in admin.get(MEMBERS).content.decode()  # once


def test_a_bad_invitation_is_shown_at_its_field(org_admin):
    shown = post_form(
        browser(org_admin), f"{MEMBERS}invite/", {"email": "nope", "role": "owner"}, page=MEMBERS
    )
    assert shown.status_code == 400
    errors = shown.context["form"].errors
    assert set(errors) == {"email", "role"}
    assert not Invitation.objects.exists()


def test_an_admin_revokes_an_open_invitation(org_admin, organization):
    made = invitation(organization, org_admin)
    done = post_form(
        browser(org_admin),
        f"{MEMBERS}invitations/{made.invitation.pk}/revoke/",
        page=MEMBERS,
    )
    assert done.status_code == 302
    assert Invitation.objects.get().state == "revoked"
    assert audit_actions() == ["invitation.created", "invitation.revoked"]
    assert Client().get(link_path(made.url)).status_code == 410


def test_an_admin_changes_a_role_and_the_last_admin_stays(org_admin, org_member, organization):
    admin = browser(org_admin)
    changed = post_form(
        admin, f"{MEMBERS}{org_member.username}/role/", {"role": "reader"}, page=MEMBERS
    )
    assert changed.status_code == 302
    assert access.membership_of(organization, org_member.username).role == "reader"

    refused = post_form(
        admin, f"{MEMBERS}{org_admin.username}/role/", {"role": "member"}, page=MEMBERS
    )
    assert refused.status_code == 400
    assert "last admin" in refused.content.decode()
    bad = post_form(admin, f"{MEMBERS}{org_member.username}/role/", {"role": "owner"}, page=MEMBERS)
    assert bad.status_code == 400
    assert audit_actions() == ["member.role_changed"]


def test_removing_asks_first_then_removes(org_admin, org_member, organization):
    admin = browser(org_admin)
    remove = f"{MEMBERS}{org_member.username}/remove/"
    confirmation = admin.get(remove)
    assert confirmation.status_code == 200
    assert f"Remove {org_member.username} from Acme?" in confirmation.content.decode()
    assert access.membership_of(organization, org_member.username) is not None

    assert post_form(admin, remove).status_code == 302
    assert access.membership_of(organization, org_member.username) is None
    assert audit_actions() == ["member.removed"]

    last = post_form(admin, f"{MEMBERS}{org_admin.username}/remove/")
    assert last.status_code == 400 and "last admin" in last.content.decode()


def test_a_form_without_its_csrf_token_is_refused(org_admin, org_member):
    refused = browser(org_admin).post(f"{MEMBERS}{org_member.username}/remove/")
    assert refused.status_code == 403
    assert audit_actions() == []


ADMIN_PAGES = {
    "invite": lambda ids: (f"{MEMBERS}invite/", {"email": "eve@example.com", "role": "admin"}),
    "revoke": lambda ids: (f"{MEMBERS}invitations/{ids['invitation']}/revoke/", {}),
    "change a role": lambda ids: (f"{MEMBERS}{ids['admin']}/role/", {"role": "reader"}),
    "remove": lambda ids: (f"{MEMBERS}{ids['admin']}/remove/", {}),
}


@pytest.mark.parametrize("operation", ADMIN_PAGES)
@pytest.mark.parametrize("role", ["member", "reader"])
def test_members_and_readers_get_the_403_page(operation, role, org_admin, organization):
    ids = {
        "invitation": invitation(organization, org_admin).invitation.pk,
        "admin": org_admin.username,
    }
    person = browser(MembershipFactory(organization=organization, role=role).user)
    path, data = ADMIN_PAGES[operation](ids)
    before = written()
    refused = post_form(person, path, data, page=MEMBERS)
    assert refused.status_code == 403
    assert "admins may invite people and manage its members" in refused.content.decode()
    assert written() == before
    if operation == "remove":
        assert person.get(path).status_code == 403  # nor the confirmation


def test_another_organizations_people_find_no_members_page(org_admin, outsider, organization):
    ids = {
        "invitation": invitation(organization, org_admin).invitation.pk,
        "admin": org_admin.username,
    }
    MembershipFactory(user=outsider, role="admin")
    stranger = browser(outsider)
    assert stranger.get(MEMBERS).status_code == 404
    before = written()
    for operation in ADMIN_PAGES.values():
        path, data = operation(ids)
        assert post_form(stranger, path, data, page="/s/").status_code == 404
    assert written() == before


def test_the_members_page_asks_to_sign_in():
    answer = Client().get(MEMBERS)
    assert answer.status_code == 302 and answer["Location"].startswith("/marketplace/login/")


# --- The invitation's page ----------------------------------------------------------------------


def test_someone_without_an_account_makes_one_and_is_signed_in_as_a_member(org_admin, organization):
    made = invitation(organization, org_admin, role="reader")
    visitor = browser()
    page = visitor.get(link_path(made.url))
    assert page.status_code == 200
    assert "Join Acme" in page.content.decode() and "Password again" in page.content.decode()

    joined = post_form(
        visitor,
        link_path(made.url),
        {"username": "erin", "password": STRONG_PASSWORD, "password2": STRONG_PASSWORD},
    )
    assert joined.status_code == 302 and joined["Location"] == "/s/"
    erin = get_user_model().objects.get(username="erin")
    assert access.role_of(erin, organization) == "reader"
    assert "Welcome to Acme" in visitor.get("/s/").content.decode()
    assert visitor.get(MEMBERS).status_code == 200  # signed in, a member
    assert audit_actions() == ["invitation.created", "invitation.accepted"]


def test_the_account_form_shows_what_is_wrong_at_its_field(org_admin, organization):
    made = invitation(organization, org_admin)
    UserFactory(username="erin")
    users = get_user_model().objects.count()
    visitor = browser()
    shown = post_form(
        visitor,
        link_path(made.url),
        {"username": "ERIN", "password": "short", "password2": "other"},
    )
    assert shown.status_code == 400
    assert set(shown.context["form"].errors) == {"username", "password", "password2"}
    assert Invitation.objects.get().state == "open"
    assert get_user_model().objects.count() == users


def test_a_signed_in_person_joins_with_one_button(org_admin, organization):
    made = invitation(organization, org_admin, role="member")
    frank = UserFactory(username="frank")
    person = browser(frank)
    page = person.get(link_path(made.url)).content.decode()
    assert "Join Acme as member" in page and "Password again" not in page
    assert post_form(person, link_path(made.url)).status_code == 302
    assert access.role_of(frank, organization) == "member"


@pytest.mark.parametrize("state", ["accepted", "revoked", "expired"])
def test_a_used_revoked_or_expired_link_says_which_and_grants_nothing(
    state, org_admin, organization
):
    made = invitation(organization, org_admin)
    if state == "accepted":
        post_form(browser(UserFactory()), link_path(made.url))
    elif state == "revoked":
        Invitation.objects.update(revoked_at=timezone.now())
    else:
        Invitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    before = written()
    shown = browser().get(link_path(made.url))
    assert shown.status_code == 410
    word = {"accepted": "used", "revoked": "revoked", "expired": "expired"}[state]
    assert f"This invitation {'has ' if state == 'expired' else 'was '}{word}" in (
        shown.content.decode()
    )
    frank = UserFactory(username="frank")
    assert post_form(browser(frank), link_path(made.url), page="/s/").status_code == 410
    assert access.role_of(frank, organization) is None
    assert written() == before


def test_a_wrong_token_tells_nothing_of_any_organization(org_admin, organization):
    invitation(organization, org_admin)
    shown = browser().get("/invitations/not-a-real-token/")
    assert shown.status_code == 404
    assert "Acme" not in shown.content.decode()
