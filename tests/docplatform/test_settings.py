"""Settings that must be positive numbers stop start-up with an error naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def load_settings(**environment) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "docplatform.settings", **environment}
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.WEBHOOK_BATCH_SIZE, settings.WEBHOOK_DRAIN_SECONDS)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WEBHOOK_BATCH_SIZE", "0"),
        ("WEBHOOK_BATCH_SIZE", "many"),
        ("WEBHOOK_SENDERS", "-3"),
        ("WEBHOOK_PARALLEL_DRAINS", "2.5"),
        ("WEBHOOK_DRAIN_SECONDS", "0"),
    ],
)
def test_a_bad_drain_setting_is_refused_by_name(name, value):
    done = load_settings(**{name: value})
    assert done.returncode != 0
    assert f"ImproperlyConfigured: {name} must be a number above 0, not '{value}'" in done.stderr


@pytest.mark.slow
def test_good_drain_settings_are_read():
    done = load_settings(WEBHOOK_BATCH_SIZE="40", WEBHOOK_DRAIN_SECONDS="2.5")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["40", "2.5"]
