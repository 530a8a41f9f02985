"""Production keys: with DEBUG off the platform refuses the development SECRET_KEY, derives no
key from it, and ``check --deploy`` names every missing key; development derives them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KEYS = ("SECRET_KEY", "ENCRYPTION_KEYS", "RUNTIME_SIGNING_KEY", "DEBUG")


def run(arguments: list[str], **environment) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in KEYS}
    env.update(DJANGO_SETTINGS_MODULE="docplatform.settings", **environment)
    return subprocess.run(
        [sys.executable, *arguments], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "secret_key", [None, "dev-only-insecure-key-change-me-in-production-0123456789"]
)
def test_production_refuses_to_start_without_a_secret_key_of_its_own(secret_key):
    environment = {"SECRET_KEY": secret_key} if secret_key else {}
    done = run(["manage.py", "check"], **environment)
    assert done.returncode == 2
    assert done.stderr.startswith("error: SECRET_KEY is unset or the development key")
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_check_deploy_names_every_missing_key():
    done = run(["manage.py", "check", "--deploy"], SECRET_KEY="a-production-secret-" + "y" * 40)
    assert done.returncode != 0
    assert "ENCRYPTION_KEYS is not set" in done.stderr
    assert "RUNTIME_SIGNING_KEY is not set" in done.stderr


@pytest.mark.slow
def test_production_derives_no_key_from_the_secret_key():
    code = (
        "import django; django.setup()\n"
        "from integrations.environment import runtime_signing_key\n"
        "from django.core.exceptions import ImproperlyConfigured\n"
        "for use in (runtime_signing_key, __import__('docplatform.crypto').crypto.fernet):\n"
        "    try:\n"
        "        use()\n"
        "    except ImproperlyConfigured as error:\n"
        "        print(error)\n"
    )
    done = run(["-c", code], SECRET_KEY="a-production-secret-" + "y" * 40)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("RUNTIME_SIGNING_KEY is not set: it signs every envelope")
    assert lines[1].startswith("ENCRYPTION_KEYS is not set: it encrypts secrets")
    assert all("derived from SECRET_KEY only in development (DEBUG=true)" in line for line in lines)


@pytest.mark.slow
def test_development_derives_the_keys():
    code = (
        "import django; django.setup()\n"
        "from integrations.environment import runtime_signing_key\n"
        "from docplatform.crypto import encrypt_json, decrypt_json\n"
        "print(len(runtime_signing_key()), decrypt_json(encrypt_json({'a': 1})))\n"
    )
    done = run(["-c", code], DEBUG="true")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "64 {'a': 1}"
