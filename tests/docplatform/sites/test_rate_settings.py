"""The visitors' rate settings (SITE_FEEDBACK_RATE, SITE_BLOCK_PRESS_RATE): a wrong one stops
start-up naming it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def load_settings(**environment) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "docplatform.settings", **environment}
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.SITE_RATES['feedback'], settings.SITE_RATES['blocks'])"
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
        ("SITE_FEEDBACK_RATE", "0/minute"),
        ("SITE_FEEDBACK_RATE", "ten/minute"),
        ("SITE_BLOCK_PRESS_RATE", "10/fortnight"),
        ("SITE_BLOCK_PRESS_RATE", "10"),
    ],
)
def test_a_bad_rate_is_refused_by_name(name, value):
    done = load_settings(**{name: value})
    assert done.returncode != 0
    assert f"ImproperlyConfigured: {name} must be a number of requests per" in done.stderr
    assert repr(value) in done.stderr


@pytest.mark.slow
def test_good_rates_are_read():
    done = load_settings(SITE_FEEDBACK_RATE="5/hour", SITE_BLOCK_PRESS_RATE="100/second")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5/hour", "100/second"]
