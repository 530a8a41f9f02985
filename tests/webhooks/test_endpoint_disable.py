"""Endpoints that failed every attempt for days are disabled with their reason: no delivery is
made to them (new events make none, open ones are cancelled with the reason), and re-enabling
(the service, the REST API, the admin) delivers to them again. Real receivers and a real worker
where deliveries run."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from docplatform.events.leases import delivery_claim
from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.operators import OPERATOR
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.conftest import wait_until
from tests.factories import MembershipFactory, OrganizationFactory
from webhooks.models import DeliveryAttempt, EndpointState
from webhooks.services.endpoints import endpoint_disable, endpoint_reenable
from webhooks.services.ping import webhook_ping_send
from webhooks.tasks import disable_failing_endpoints

pytestmark = pytest.mark.usefixtures("webhook_settings")

PAGES = [{"path": "p", "title": "P", "body": "b"}]


@pytest.fixture
def hook(install_webhook, space, receiver):
    return install_webhook(space=space, url=receiver.url, space_content_updated=True)


@pytest.fixture
def site_hook(install_webhook, site, receiver):
    return install_webhook(site=site, url=receiver.url_for("/site"), page_feedback=True)


def attempt(installation, *, days_ago: float, outcome="failed", status_code=503, error=""):
    """A logged attempt of a new ping of the installation, ``days_ago`` days ago."""
    delivery = webhook_ping_send(user=OPERATOR, installation=installation)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed")
    return DeliveryAttempt.objects.create(
        delivery=delivery,
        number=1,
        started_at=timezone.now() - timedelta(days=days_ago),
        duration_ms=3,
        url=installation.configuration["url"],
        status_code=status_code,
        error=error,
        outcome=outcome,
    )


def state_of(installation) -> EndpointState | None:
    return EndpointState.objects.filter(pk=installation.pk).first()


# --- Which endpoints are disabled --------------------------------------------------------------


def test_an_endpoint_failing_every_attempt_for_3_days_is_disabled_with_its_reason(hook, site_hook):
    attempt(hook, days_ago=10, outcome="succeeded", status_code=200)
    attempt(hook, days_ago=3.5, status_code=500)
    attempt(hook, days_ago=1, status_code=None, error="connection refused", outcome="retry")
    attempt(hook, days_ago=0.1, status_code=503)
    attempt(site_hook, days_ago=3.5)  # failing as long, but a success since
    attempt(site_hook, days_ago=0.5, outcome="succeeded", status_code=200)
    attempt(site_hook, days_ago=0.2)

    assert disable_failing_endpoints() == 1
    state = state_of(hook)
    assert state.is_disabled
    started = (timezone.now() - timedelta(days=3.5)).strftime("%d %b %Y %H:%M")
    assert state.disabled_reason == (
        f"Every delivery attempt failed since {started} UTC (3 attempts; the last: HTTP 503)"
    )
    assert state_of(site_hook) is None
    assert disable_failing_endpoints() == 0  # already disabled: once


@pytest.mark.slow
@pytest.mark.parametrize(
    "history",
    [
        [(2.9, "failed")],  # failing for less than 3 days
        [(5, "failed"), (4, "failed")],  # failed long ago, nothing since: not failing now
        [(5, "failed"), (1, "succeeded"), (0.5, "failed")],  # a success in the window
        [],
    ],
)
def test_endpoints_not_failing_throughout_the_window_stay_enabled(hook, history):
    for days_ago, outcome in history:
        attempt(
            hook,
            days_ago=days_ago,
            outcome=outcome,
            status_code=200 if outcome == "succeeded" else 500,
        )
    assert disable_failing_endpoints() == 0
    assert state_of(hook) is None


@pytest.mark.slow
def test_the_window_is_a_setting(hook, settings):
    attempt(hook, days_ago=1.5)
    attempt(hook, days_ago=0.1)
    assert disable_failing_endpoints() == 0
    settings.WEBHOOK_DISABLE_AFTER_DAYS = 1
    assert disable_failing_endpoints() == 1


@pytest.mark.slow
def test_a_re_enabled_endpoint_starts_its_streak_anew(hook, org_admin):
    attempt(hook, days_ago=4)
    attempt(hook, days_ago=0.1)
    assert disable_failing_endpoints() == 1
    endpoint_reenable(installation=hook, by=org_admin)
    assert disable_failing_endpoints() == 0  # the old failures count no more
    assert not state_of(hook).is_disabled
    with pytest.raises(ValidationError) as raised:
        endpoint_reenable(installation=hook, by=org_admin)
    assert raised.value.message_dict == {"endpoint": ["the endpoint is not disabled"]}


@pytest.mark.slow
def test_firing_to_an_enabled_endpoint_asks_nothing_about_endpoints(hook, space):
    space_content_update(space=space, pages=PAGES)  # the list of disabled ones is read once
    with CaptureQueriesContext(connection) as queries:
        space_content_update(space=space, pages=PAGES)
    assert (
        Delivery.objects.filter(installation=hook, event__type="space_content_updated").count() == 2
    )
    assert not [q for q in queries.captured_queries if "webhooks_endpointstate" in q["sql"]]


# --- What a disabled endpoint gets -------------------------------------------------------------


@pytest.mark.slow
def test_open_deliveries_are_cancelled_with_the_reason_and_new_events_make_none(
    hook, space, django_capture_on_commit_callbacks
):
    waiting = webhook_ping_send(user=OPERATOR, installation=hook)
    held = webhook_ping_send(user=OPERATOR, installation=hook)
    assert delivery_claim(held.pk) is not None  # a worker is on it
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_disable(installation=hook, reason="every attempt failed")

    waiting.refresh_from_db()
    assert (waiting.status, waiting.outcome) == (
        "cancelled",
        "endpoint disabled: every attempt failed",
    )
    held.refresh_from_db()
    assert held.status == "pending"  # its worker finishes first
    Delivery.objects.filter(pk=held.pk).update(lease_expires_at=None)  # the worker let go
    disable_failing_endpoints()  # the next run cancels it
    held.refresh_from_db()
    assert held.status == "cancelled"

    space_content_update(space=space, pages=PAGES)
    assert not Delivery.objects.filter(
        installation=hook, event__type="space_content_updated"
    ).exists()
    with pytest.raises(ValidationError) as raised:
        webhook_ping_send(user=OPERATOR, installation=hook)
    assert "endpoint" in raised.value.message_dict


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
def test_a_dead_endpoint_is_disabled_then_re_enabled_through_the_api(
    hook, space, receiver, org_admin
):
    receiver.respond(500)
    space_content_update(space=space, pages=PAGES)
    first = Delivery.objects.get(installation=hook, event__type="space_content_updated")
    wait_until(lambda: Delivery.objects.get(pk=first.pk).status == "failed")
    assert DeliveryAttempt.objects.filter(delivery=first).count() == 4  # 1 + 3 retries
    # Three days and a half later, still failing.
    DeliveryAttempt.objects.filter(delivery=first).update(
        started_at=timezone.now() - timedelta(days=3.5)
    )
    space_content_update(space=space, pages=PAGES)
    wait_until(lambda: Delivery.objects.filter(installation=hook, status="failed").count() == 2)
    assert disable_failing_endpoints() == 1
    received = len(receiver.requests)

    space_content_update(space=space, pages=PAGES)  # while disabled: nothing is made
    assert Delivery.objects.filter(installation=hook).count() == 2

    client = api_client(org_admin)
    state = client.get(f"{API}/installations/{hook.pk}/webhook/endpoint/").json()
    assert state["disabled"] is True and state["reason"].startswith("Every delivery attempt failed")
    response = client.post(f"{API}/installations/{hook.pk}/webhook/endpoint/reenable/")
    assert response.status_code == 200
    assert response.json()["disabled"] is False
    assert response.json()["reenabledBy"] == org_admin.username

    receiver.respond(200)
    space_content_update(space=space, pages=PAGES)
    wait_until(lambda: Delivery.objects.filter(installation=hook, status="succeeded").count() == 1)
    assert len(receiver.requests) == received + 1


# --- Who re-enables ----------------------------------------------------------------------------


def test_only_the_organizations_admins_read_and_re_enable_through_the_api(
    hook, org_admin, org_member
):
    endpoint_disable(installation=hook, reason="failing")
    outsider = MembershipFactory(organization=OrganizationFactory(subdomain="globex"), role="admin")
    state_url = f"{API}/installations/{hook.pk}/webhook/endpoint/"
    reenable_url = f"{state_url}reenable/"
    for user in (None, outsider.user):
        client = api_client(user)
        for response in (client.get(state_url), client.post(reenable_url)):
            assert response.status_code in (401, 403, 404)
            if user is not None:
                assert response.json() == NOT_FOUND
    member = api_client(org_member)
    assert member.get(state_url).status_code == 403
    assert member.post(reenable_url).status_code == 403
    assert state_of(hook).is_disabled

    admin = api_client(org_admin)
    assert admin.post(reenable_url).status_code == 200
    response = admin.post(reenable_url)
    assert response.status_code == 400 and error_attrs(response) == ["endpoint"]


def test_the_api_refuses_another_integrations_installation(
    org_admin, organization, notifier_installation
):
    response = api_client(org_admin).post(
        f"{API}/installations/{notifier_installation.pk}/webhook/endpoint/reenable/"
    )
    assert response.status_code == 400 and error_attrs(response) == ["installation"]


@pytest.fixture
def notifier_installation(org_admin, organization):
    from integrations.services.installations import installation_create
    from tests.factories import IntegrationFactory

    integration = IntegrationFactory(name="notifier", organization=organization)
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_operators_re_enable_in_the_admin(client, hook):
    operator = get_user_model().objects.create_superuser("operator", password="x")
    client.force_login(operator)
    endpoint_disable(installation=hook, reason="every attempt failed since Monday")
    listing = client.get("/admin/webhooks/endpointstate/").content.decode()
    assert "every attempt failed since Monday" in listing
    response = client.post(
        "/admin/webhooks/endpointstate/",
        {"action": "reenable", "_selected_action": [hook.pk]},
        follow=True,
    )
    assert f"{hook}: re-enabled." in [str(m) for m in response.context["messages"]]
    state = state_of(hook)
    assert not state.is_disabled and state.reenabled_by == operator
