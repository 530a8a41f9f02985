"""OAuth connect bound to a member (DESIGN.md, the envelope protocol's OAuth paragraph): the
Connect button issues a single-use, expiring state to the signed-in member who pressed it; the
integration checks it and completes the flow with it; a ``button`` property is written that way
only. The whole flow through the runtime and a real provider is in test_oauth_flow.py."""

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse
from django.utils import timezone

from docplatform.events.models import Event
from docplatform.models import Membership
from integrations.environment import installation_public_endpoint
from integrations.models import Installation, Integration, OAuthState
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import IntegrationFactory, MembershipFactory

pytestmark = pytest.mark.django_db

BUTTON = {
    "type": "button",
    "title": "Tracker account",
    "description": "Whose projects are offered.",
    "button_text": "Connect the tracker",
    "callback_url": "/connect/start",
}
CONFIGURATIONS = {
    "account": {
        "properties": {
            "tracker": BUTTON,
            "chat": {**BUTTON, "title": "Chat", "button_text": "Connect chat"},
            "project": {"type": "string", "title": "Project", "description": "Which one."},
        },
        "required": ["tracker"],
    }
}
CREDENTIALS = {"access_token": "tok-secret-123", "refresh_token": "ref-456", "expires_at": 99}


@pytest.fixture
def integration(organization):
    return IntegrationFactory(
        name="tracker",
        organization=organization,
        visibility=Integration.Visibility.PUBLIC,
        configurations=CONFIGURATIONS,
    )


@pytest.fixture
def installation(integration, organization, org_admin):
    return installation_create(user=org_admin, integration=integration, organization=organization)


@pytest.fixture
def other_installation(integration, outsider):
    """The same integration installed by another organization."""
    membership = MembershipFactory(user=outsider, role="admin")
    return installation_create(
        user=outsider, integration=integration, organization=membership.organization
    )


@pytest.fixture
def member_api(org_admin):
    return api_client(org_admin)


def token_api(installation: Installation):
    return api_client(token=installation.api_token)


def press_connect(client, installation, property_name="tracker") -> str:
    """The Connect button of the API: the state issued to the caller."""
    response = client.post(
        f"{API}/installations/{installation.pk}/oauth/connect/", {"property": property_name}
    )
    assert response.status_code == 201, response.json()
    return response.json()["state"]


def complete(installation, state, configuration=None):
    return token_api(installation).post(
        f"{API}/installation/oauth/complete",
        {"state": state, "configuration": configuration or {"tracker": CREDENTIALS}},
    )


def check(installation, state):
    return token_api(installation).post(f"{API}/installation/oauth/check", {"state": state})


def snapshot(installation) -> tuple:
    """What a refused step must leave as it was."""
    installation.refresh_from_db()
    return (
        installation.status,
        installation.configuration,
        installation.credentials,
        Event.objects.count(),
        list(OAuthState.objects.order_by("pk").values_list("consumed_at", flat=True)),
    )


# --- The Connect button ---------------------------------------------------------------------


def test_the_page_shows_connect_buttons_and_never_the_token(client, org_admin, installation):
    client.force_login(org_admin)
    url = reverse("marketplace:installation", args=["acme", installation.pk])
    content = client.get(url).content.decode()
    assert content.count("Not connected") == 2
    connect_action = reverse("marketplace:installation-connect", args=["acme", installation.pk])
    assert f'action="{connect_action}"' in content
    assert '<input type="hidden" name="property" value="tracker">' in content
    assert "Connect the tracker</button>" in content
    # No link to the endpoint itself: only a state the member is issued starts the flow.
    assert installation_public_endpoint(installation) not in content

    state = press_connect(api_client(org_admin), installation)
    assert complete(installation, state).status_code == 200
    content = client.get(url).content.decode()
    assert content.count("Not connected") == 1
    assert f"by {org_admin.username}," in content
    assert "Reconnect</button>" in content and "Disconnect</button>" in content
    assert "tok-secret-123" not in content and "ref-456" not in content


@pytest.mark.slow
def test_pressing_connect_issues_a_state_to_the_member_and_opens_the_callback_url(
    client, org_admin, installation, settings
):
    client.force_login(org_admin)
    response = client.post(
        reverse("marketplace:installation-connect", args=["acme", installation.pk]),
        {"property": "tracker"},
    )
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    endpoint = installation_public_endpoint(installation)
    assert endpoint.startswith(settings.INTEGRATIONS_URL + "/installations/")
    assert f"{location.scheme}://{location.netloc}{location.path}" == endpoint + "/connect/start"
    [state] = parse_qs(location.query)["state"]

    issued = OAuthState.objects.get()
    assert (issued.installation, issued.property_name, issued.issued_to) == (
        installation,
        "tracker",
        org_admin,
    )
    assert issued.consumed_at is None
    expected_expiry = timezone.now() + timedelta(seconds=settings.OAUTH_STATE_MAX_AGE)
    assert abs((issued.expires_at - expected_expiry).total_seconds()) < 5
    assert check(installation, state).json() == {"property": "tracker"}


def test_connect_in_the_api_answers_the_state_and_the_url(member_api, installation):
    response = member_api.post(
        f"{API}/installations/{installation.pk}/oauth/connect/", {"property": "chat"}
    )
    assert response.status_code == 201
    body = response.json()
    url = urlsplit(body["url"])
    assert body["url"].startswith(installation_public_endpoint(installation) + "/connect/start?")
    assert parse_qs(url.query) == {"state": [body["state"]]}
    assert body["expiresAt"]
    assert OAuthState.objects.get().property_name == "chat"


@pytest.mark.parametrize("property_name", ["project", "nosuch", ""])
def test_connect_refuses_what_is_not_a_button_property(
    client, member_api, org_admin, installation, property_name
):
    response = member_api.post(
        f"{API}/installations/{installation.pk}/oauth/connect/", {"property": property_name}
    )
    assert error_attrs(response) == ["property"]
    client.force_login(org_admin)
    page = client.post(
        reverse("marketplace:installation-connect", args=["acme", installation.pk]),
        {"property": property_name},
        follow=True,
    )
    assert page.status_code == 200 and "Not connected:" in page.content.decode()
    assert not OAuthState.objects.exists()


def test_only_members_of_the_installing_organization_press_connect(client, outsider, installation):
    url = f"{API}/installations/{installation.pk}/oauth/connect/"
    assert api_client(outsider).post(url, {"property": "tracker"}).json() == NOT_FOUND
    assert api_client().post(url, {"property": "tracker"}).status_code in (401, 403)
    assert token_api(installation).post(url, {"property": "tracker"}).status_code == 403
    client.force_login(outsider)
    page = client.post(
        reverse("marketplace:installation-connect", args=["acme", installation.pk]),
        {"property": "tracker"},
    )
    assert page.status_code == 404
    assert not OAuthState.objects.exists()


# --- The flow starts only from a member's state, and uses it up ------------------------------


def test_completing_the_flow_connects_and_records_who_and_when(member_api, org_admin, installation):
    state = press_connect(member_api, installation)
    assert check(installation, state).json() == {"property": "tracker"}
    response = complete(installation, state, {"tracker": CREDENTIALS, "project": "docs"})
    assert response.status_code == 200, response.json()

    installation.refresh_from_db()
    assert installation.credentials == {"tracker": CREDENTIALS}
    assert installation.configuration == {"project": "docs"}
    assert installation.status == "active"
    setup = Event.objects.filter(type="installation_setup").latest("created_at")
    assert setup.payload == {"status": "active", "changed": ["project", "tracker"]}
    used = OAuthState.objects.get()
    assert used.issued_to == org_admin and used.consumed_at is not None

    shown = member_api.get(f"{API}/installations/{installation.pk}/").json()["configuration"]
    assert shown["tracker"] == {
        "connected": True,
        "connectedBy": org_admin.username,
        "connectedAt": used.consumed_at.isoformat(),
    }
    assert "tok-secret-123" not in response.content.decode()


@pytest.mark.parametrize(
    "state",
    ["", "not-a-state", "eyJpIjoiYWJjIiwibiI6Im4ifQ:1vAAAA:forgedsignature"],
    ids=["empty", "garbage", "forged"],
)
def test_a_flow_without_a_member_issued_state_is_refused_and_changes_nothing(installation, state):
    before = snapshot(installation)
    for response in (check(installation, state), complete(installation, state)):
        assert response.status_code == 400
        assert error_attrs(response) == ["state"]
    assert snapshot(installation) == before


def test_a_flow_with_no_state_at_all_is_refused(installation):
    before = snapshot(installation)
    client = token_api(installation)
    assert error_attrs(client.post(f"{API}/installation/oauth/check", {})) == ["state"]
    response = client.post(
        f"{API}/installation/oauth/complete", {"configuration": {"tracker": CREDENTIALS}}
    )
    assert error_attrs(response) == ["state"]
    assert snapshot(installation) == before


def test_a_state_issued_to_an_admin_since_made_a_reader_is_refused(
    member_api, org_admin, installation
):
    """The flow configures the installation: it goes on only while the person who pressed
    Connect may still configure it."""
    state = press_connect(member_api, installation)
    Membership.objects.filter(user=org_admin).update(role="reader")
    before = snapshot(installation)
    for response in (check(installation, state), complete(installation, state)):
        assert response.status_code == 400
        assert "may no longer configure" in response.json()["errors"][0]["detail"]
    assert snapshot(installation) == before


def test_a_replayed_state_is_refused(member_api, installation):
    state = press_connect(member_api, installation)
    assert complete(installation, state).status_code == 200
    before = snapshot(installation)

    for response in (
        check(installation, state),
        complete(installation, state, {"tracker": {"access_token": "attacker-token"}}),
    ):
        assert error_attrs(response) == ["state"]
        assert "already used" in response.json()["errors"][0]["detail"]
    assert snapshot(installation) == before


def test_an_expired_state_is_refused(member_api, installation, settings):
    state = press_connect(member_api, installation)
    OAuthState.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    before = snapshot(installation)
    for response in (check(installation, state), complete(installation, state)):
        assert error_attrs(response) == ["state"]
        assert "expired" in response.json()["errors"][0]["detail"]
    assert snapshot(installation) == before


def test_a_state_past_its_signed_age_is_refused(member_api, installation, settings):
    state = press_connect(member_api, installation)
    settings.OAUTH_STATE_MAX_AGE = -1  # the signature's own age check
    response = complete(installation, state)
    assert error_attrs(response) == ["state"]
    assert "expired" in response.json()["errors"][0]["detail"]
    installation.refresh_from_db()
    assert installation.credentials == {}


@pytest.mark.slow
def test_another_installations_state_is_refused(
    member_api, outsider, installation, other_installation
):
    """A member of one organization cannot connect another organization's installation with
    a state they were issued, nor the other way round."""
    theirs = press_connect(api_client(outsider), other_installation)
    ours = press_connect(member_api, installation)
    before = snapshot(installation), snapshot(other_installation)
    for target, state in ((installation, theirs), (other_installation, ours)):
        for response in (check(target, state), complete(target, state)):
            assert error_attrs(response) == ["state"]
            assert "another installation" in response.json()["errors"][0]["detail"]
    assert (snapshot(installation), snapshot(other_installation)) == before


def test_a_state_writes_only_the_property_it_was_issued_for(member_api, installation):
    state = press_connect(member_api, installation, "chat")
    before = snapshot(installation)
    response = complete(installation, state, {"tracker": CREDENTIALS})
    assert error_attrs(response) == ["configuration.chat"]
    assert snapshot(installation) == before
    assert check(installation, state).json() == {"property": "chat"}  # still usable


def test_bad_credentials_refuse_the_completion_and_keep_the_state(member_api, installation):
    state = press_connect(member_api, installation)
    before = snapshot(installation)
    response = complete(installation, state, {"tracker": {"token": "no access_token"}})
    assert error_attrs(response) == ["configuration.tracker.access_token"]
    assert snapshot(installation) == before
    assert complete(installation, state).status_code == 200


def test_people_never_complete_a_flow(member_api, installation):
    state = press_connect(member_api, installation)
    response = member_api.post(
        f"{API}/installation/oauth/complete",
        {"state": state, "configuration": {"tracker": CREDENTIALS}},
    )
    assert response.status_code == 403
    installation.refresh_from_db()
    assert installation.credentials == {}


# --- A person's configuration edit never writes a button property ----------------------------


@pytest.mark.parametrize(
    "value", [{"access_token": "typed-in-token"}, {"token": "x"}, "connected", None]
)
def test_a_persons_patch_of_a_button_property_is_refused(member_api, installation, value):
    before = snapshot(installation)
    response = member_api.patch(
        f"{API}/installations/{installation.pk}/configuration/",
        {"tracker": value, "project": "docs"},
    )
    assert error_attrs(response) == ["configuration.tracker"]
    assert "Connect" in response.json()["errors"][0]["detail"]
    assert snapshot(installation) == before


def test_an_installation_tokens_patch_of_a_button_property_is_refused(installation):
    before = snapshot(installation)
    response = token_api(installation).patch(
        f"{API}/installation/", {"configuration": {"tracker": CREDENTIALS}}
    )
    assert error_attrs(response) == ["configuration.tracker"]
    assert snapshot(installation) == before


def test_installing_with_a_button_value_is_refused(member_api, integration, organization):
    response = member_api.post(
        f"{API}/orgs/acme/installations/",
        {"integration": "tracker", "configuration": {"tracker": CREDENTIALS}},
    )
    assert error_attrs(response) == ["configuration.tracker"]
    assert not Installation.objects.exists()


# --- Disconnect -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_member_disconnects_and_installation_setup_fires(
    client, member_api, org_admin, installation
):
    assert complete(installation, press_connect(member_api, installation)).status_code == 200
    client.force_login(org_admin)
    response = client.post(
        reverse("marketplace:installation-disconnect", args=["acme", installation.pk]),
        {"property": "tracker"},
    )
    assert response.status_code == 302
    installation.refresh_from_db()
    assert installation.credentials == {}
    assert installation.status == "pending"  # tracker is required
    setup = Event.objects.filter(type="installation_setup").latest("created_at")
    assert setup.payload == {"status": "pending", "changed": ["tracker"]}


def test_disconnect_in_the_api(member_api, installation, outsider):
    url = f"{API}/installations/{installation.pk}/oauth/disconnect/"
    assert error_attrs(member_api.post(url, {"property": "tracker"})) == ["property"]  # not yet
    assert complete(installation, press_connect(member_api, installation)).status_code == 200
    assert api_client(outsider).post(url, {"property": "tracker"}).json() == NOT_FOUND
    assert token_api(installation).post(url, {"property": "tracker"}).status_code == 403
    events = Event.objects.count()

    response = member_api.post(url, {"property": "tracker"})
    assert response.status_code == 200
    assert "tracker" not in response.json()["configuration"]
    assert response.json()["status"] == "pending"
    assert Event.objects.count() == events + 1
