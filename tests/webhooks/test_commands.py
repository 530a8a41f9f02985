"""`manage.py webhooks secret|rotate-secret|ping|deliveries|redeliver`."""

import io

import pytest
from django.core.management import CommandError, call_command
from docplatform_sdk.receiver import verify_signature

from docplatform.events.models import Delivery
from tests.conftest import wait_until


def run(*args):
    out = io.StringIO()
    call_command("webhooks", *args, stdout=out)
    return out.getvalue().strip()


@pytest.mark.usefixtures("celery_worker")
def test_secret_rotation_ping_deliveries_and_redelivery(
    receiver, install_webhook, space, webhook_settings
):
    installation = install_webhook(space=space, url=receiver.url)
    secret = run("secret", installation.id)
    assert secret.startswith("whsec_") and run("secret", installation.id) == secret
    new = run("rotate-secret", installation.id)
    assert new != secret and run("secret", installation.id) == new

    assert run("ping", installation.id).startswith("ping queued as delivery ")
    (received,) = receiver.wait_for(1)
    verify_signature(received.body, received.headers["X-Service-Signature"], new)
    verify_signature(received.body, received.headers["X-Service-Signature"], secret)
    delivery = Delivery.objects.get(consumer="webhook")
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")

    listing = run("deliveries", "--installation", installation.id).splitlines()
    assert listing[0].split() == ["id", "event", "status", "attempts", "outcome"]
    assert listing[1].split() == [str(delivery.pk), "ping", "succeeded", "1", "HTTP", "200"]

    assert (
        run("redeliver", str(delivery.pk))
        == f"delivery {delivery.pk} queued again (attempt chain 2)"
    )
    receiver.wait_for(2)


@pytest.mark.django_db
def test_unknown_ids_are_usage_errors(install_webhook, space):
    with pytest.raises(CommandError, match="no such webhook installation") as error:
        run("secret", "nope")
    assert error.value.returncode == 2
    organization_level = install_webhook(space=space, url="https://example.com/x").parent
    with pytest.raises(CommandError, match="no such webhook installation"):
        run("rotate-secret", organization_level.id)
    with pytest.raises(CommandError, match="no such webhook delivery"):
        run("redeliver", "999999")
