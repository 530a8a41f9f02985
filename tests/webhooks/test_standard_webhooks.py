"""Standard Webhooks, per endpoint: an endpoint whose configuration sets ``signature`` to
``standard-webhooks`` is verified by the ``standardwebhooks`` package's own verifier, with the
secret as the API and the installation page show it, a rotation's overlap included.

Real Celery worker, real local receiver; the default scheme keeps its tests (test_delivery,
the receiver kit, Stripe's verifier).
"""

import base64
import json
import time

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from docplatform_sdk.receiver import SignatureMismatch, verify_signature
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from docplatform.events.models import Delivery
from docplatform.revisions import space_content_update
from integrations.services.installations import installation_configure
from tests.api_helpers import API, api_client, error_attrs
from tests.conftest import wait_until
from webhooks.models import DeliveryAttempt, SigningSecret
from webhooks.services.signing_secrets import signing_secret_current

pytestmark = pytest.mark.usefixtures("webhook_settings", "celery_worker")

STANDARD = {"signature": "standard-webhooks"}


@pytest.fixture
def admin_client(org_admin):
    client = Client()
    client.force_login(org_admin)
    return client


def update(space):
    space_content_update(space=space, pages=[{"path": "p", "title": "P"}])


def secret_api(org_admin, installation) -> dict:
    return (
        api_client(org_admin).get(f"{API}/installations/{installation.pk}/webhook/secret/").json()
    )


def key(shown: str) -> str:
    """The HMAC key of X-Service-Signature from a secret shown as Standard Webhooks shows it."""
    return base64.b64decode(shown.removeprefix("whsec_")).decode()


def verified(secret: str, received) -> dict:
    """The payload, once the package's verifier accepted the request as received."""
    return Webhook(secret).verify(received.body, received.headers)


@pytest.mark.slow
def test_every_delivery_verifies_with_the_standard_webhooks_package(
    receiver, install_webhook, space, org_admin
):
    receiver.respond(503, 200)  # a retry is signed afresh, and verifies too
    installation = install_webhook(space=space, url=receiver.url, **STANDARD)
    shown = secret_api(org_admin, installation)
    assert shown["signature"] == "standard-webhooks" and shown["secret"].startswith("whsec_")
    update(space)
    first, retry = receiver.wait_for(2)
    wait_until(lambda: Delivery.objects.filter(status="succeeded").exists())
    delivery = Delivery.objects.get(consumer="webhook")

    for received in (first, retry):
        payload = verified(shown["secret"], received)
        assert payload["eventId"] == str(delivery.event_uuid)
        assert received.headers["webhook-id"] == payload["eventId"]
        assert abs(int(received.headers["webhook-timestamp"]) - time.time()) < 30
        assert received.headers["webhook-signature"].startswith("v1,")
        # Every webhook request carries the specification's signature too, of the same
        # timestamp, keyed with the same bytes (the shown secret's base64, decoded).
        service = received.headers["X-Service-Signature"]
        assert service.startswith(f"t={received.headers['webhook-timestamp']},v1=")
        assert verify_signature(received.body, service, key(shown["secret"]))
        assert received.headers["X-Service-Delivery"] == payload["eventId"]
    # The attempt log records the signature sent, as it records X-Service-Signature.
    sent = [a.request_headers for a in DeliveryAttempt.objects.order_by("number")]
    assert [h["webhook-signature"] for h in sent] == [
        r.headers["webhook-signature"] for r in (first, retry)
    ]

    tampered = first.body.replace(b"space_content_updated", b"space_content_deleted")
    assert tampered != first.body
    with pytest.raises(WebhookVerificationError, match="No matching signature"):
        Webhook(shown["secret"]).verify(tampered, first.headers)
    with pytest.raises(SignatureMismatch):
        verify_signature(tampered, first.headers["X-Service-Signature"], key(shown["secret"]))


def test_both_secrets_verify_during_a_rotations_overlap(
    receiver, install_webhook, space, org_admin
):
    installation = install_webhook(space=space, url=receiver.url, **STANDARD)
    client = api_client(org_admin)
    secret_url = f"{API}/installations/{installation.pk}/webhook/secret/"
    old = client.get(secret_url).json()["secret"]
    rotated = client.post(f"{secret_url}rotate/").json()
    new = rotated["secret"]
    assert new.startswith("whsec_") and new != old and rotated["signature"] == "standard-webhooks"
    assert client.get(secret_url).json()["secret"] == new

    client.post(f"{API}/installations/{installation.pk}/webhook/ping/")
    (during,) = receiver.wait_for(1)
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    assert during.headers["X-Service-Signature"].count("v1=") == 2
    assert verified(new, during)["type"] == "ping"
    assert verified(old, during)["type"] == "ping"

    SigningSecret.objects.filter(expires_at__isnull=False).update(expires_at=timezone.now())
    update(space)
    _, after = receiver.wait_for(2)
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert verified(new, after)["type"] == "space_content_updated"
    with pytest.raises(WebhookVerificationError):
        verified(old, after)


@pytest.mark.slow
def test_switching_scheme_keeps_the_secret_and_shows_whsec_only_for_standard_webhooks(
    receiver, install_webhook, space, org_admin, admin_client
):
    installation = install_webhook(space=space, url=receiver.url)
    stored = signing_secret_current(installation)
    shown = secret_api(org_admin, installation)
    assert shown == {"secret": stored, "signature": "service", "previous": []}

    installation = installation_configure(
        user=org_admin, installation=installation, changes=STANDARD
    )
    shown = secret_api(org_admin, installation)
    assert shown["signature"] == "standard-webhooks"
    # The same key: the stored secret's UTF-8 bytes, as whsec_ + standard base64.
    assert shown["secret"] == "whsec_" + base64.b64encode(stored.encode()).decode()
    assert signing_secret_current(installation) == stored
    page = admin_client.get(
        reverse("marketplace:installation", args=["acme", installation.pk])
    ).content.decode()
    assert shown["secret"] in page and "webhook-signature" in page

    update(space)
    (received,) = receiver.wait_for(1)
    assert json.loads(received.body) == verified(shown["secret"], received)


def test_an_unknown_scheme_is_refused_naming_the_property(install_webhook, space, org_admin):
    installation = install_webhook(space=space, url="https://example.com/hooks")
    url = f"{API}/installations/{installation.pk}/configuration/"
    refused = api_client(org_admin).patch(url, {"signature": "hmac-sha1"}, format="json")
    assert refused.status_code == 400
    assert error_attrs(refused) == ["configuration.signature"]
    (error,) = refused.json()["errors"]
    assert error["detail"] == "must be one of 'service', 'standard-webhooks'"
    installation.refresh_from_db()
    assert installation.configuration["signature"] == "service"  # the default, untouched
