"""E-mail settings: development prints mails, an EMAIL_HOST sends them through SMTP, a bad
value stops start-up naming it; an invitation lasts INVITATION_DAYS."""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from docplatform.teams.services import invitation_create

REPO = Path(__file__).resolve().parents[3]
EMAIL_VARIABLES = ("EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_USE_TLS", "DEBUG")
PRINTED = ("EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_USE_TLS", "INVITATION_DAYS")


def settings_read(**environment) -> subprocess.CompletedProcess:
    """The platform's settings as a process started with ``environment`` reads them."""
    env = {k: v for k, v in os.environ.items() if k not in EMAIL_VARIABLES}
    env |= {"DJANGO_SETTINGS_MODULE": "docplatform.settings", **environment}
    code = (
        "from django.conf import settings; print("
        + ", ".join(f"settings.{name}" for name in PRINTED)
        + ")"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_development_prints_mails_and_an_email_host_sends_them_through_smtp():
    development = settings_read(DEBUG="true")
    assert development.returncode == 0, development.stderr
    assert development.stdout.split() == [
        "django.core.mail.backends.console.EmailBackend",
        "localhost",
        "25",
        "False",
        "7",
    ]
    smtp = settings_read(
        DEBUG="true",
        EMAIL_HOST="smtp.example.com",
        EMAIL_PORT="587",
        EMAIL_USE_TLS="yes",
        INVITATION_DAYS="3",
    )
    assert smtp.returncode == 0, smtp.stderr
    assert smtp.stdout.split() == [
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.example.com",
        "587",
        "True",
        "3",
    ]
    production = settings_read(DEBUG="false")
    assert production.stdout.split()[0] == "django.core.mail.backends.smtp.EmailBackend"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("EMAIL_PORT", "smtp", "EMAIL_PORT must be a whole number of at least 1, not 'smtp'"),
        ("EMAIL_USE_TLS", "maybe", "EMAIL_USE_TLS must be true or false"),
        ("INVITATION_DAYS", "0", "INVITATION_DAYS must be a number above 0, not '0'"),
    ],
)
def test_a_bad_email_setting_is_refused_by_name(name, value, message):
    done = settings_read(DEBUG="true", **{name: value})
    assert done.returncode != 0
    assert message in done.stderr


@pytest.mark.django_db
def test_an_invitation_lasts_invitation_days(settings, organization, org_admin):
    settings.INVITATION_DAYS = 2
    made = invitation_create(
        organization=organization, email="erin@example.com", role="reader", invited_by=org_admin
    )
    expected = timezone.now() + timedelta(days=2)
    assert abs(made.invitation.expires_at - expected) < timedelta(minutes=1)
