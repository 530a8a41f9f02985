"""``ORGANIZATION_CREATION`` takes ``anyone`` (the default) or ``staff``; anything else stops
start-up with an error naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def loaded(**environment) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name != "ORGANIZATION_CREATION"}
    env |= {"DJANGO_SETTINGS_MODULE": "docplatform.settings", **environment}
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(settings.ORGANIZATION_CREATION)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "read"), [(None, "anyone"), ("staff", "staff"), (" Staff ", "staff"), ("", "anyone")]
)
def test_the_setting_is_read(value, read):
    done = loaded(**({} if value is None else {"ORGANIZATION_CREATION": value}))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == read


def test_another_value_stops_start_up_naming_the_variable():
    done = loaded(ORGANIZATION_CREATION="admins")
    assert done.returncode != 0
    assert "ORGANIZATION_CREATION must be one of anyone, staff, not 'admins'" in done.stderr
