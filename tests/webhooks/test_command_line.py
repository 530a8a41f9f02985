"""``manage.py webhooks`` run as operators run it, in a process of its own."""

import pytest

from tests.processes import manage_py


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_secrets_deliveries_and_unknown_ids(install_webhook, space):
    installation = install_webhook(space=space, url="https://example.com/hook")

    secret = manage_py("webhooks", "secret", installation.id)
    assert secret.returncode == 0, secret.stderr
    assert secret.stdout.startswith("whsec_")
    rotated = manage_py("webhooks", "rotate-secret", installation.id)
    assert rotated.returncode == 0, rotated.stderr
    assert rotated.stdout != secret.stdout
    assert manage_py("webhooks", "secret", installation.id).stdout == rotated.stdout

    listed = manage_py("webhooks", "deliveries", "--installation", installation.id)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["id", "event", "status", "attempts", "outcome"]

    unknown = manage_py("webhooks", "secret", "nope")
    assert (unknown.returncode, unknown.stderr.strip()) == (
        2,
        "CommandError: nope: no such webhook installation",
    )
    assert manage_py("webhooks", "redeliver", "999999").returncode == 2
    usage = manage_py("webhooks", "redeliver", "not-a-number")
    assert usage.returncode == 2
    assert "invalid int value: 'not-a-number'" in usage.stderr
