"""The Event Reactor example through real processes: published with the console script,
installed and fed through the REST API, run by a Celery worker and the runtime host."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from docplatform.events.models import Delivery
from docplatform.services import api_token_create
from tests.conftest import wait_until
from tests.factories import SpaceFactory

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "event-reactor"


def example_module():
    spec = importlib.util.spec_from_file_location("event_reactor", EXAMPLE / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_digest_counts_pages_and_words_and_lists_short_pages():
    digest = example_module().digest
    pages = [
        {"path": "intro", "body": "one two three"},
        {"path": "guide", "body": "word " * 60},
        {"path": "faq", "body": ""},
    ]
    assert digest(pages, 50) == "3 page(s), 63 word(s); under 50 words: faq, intro"
    assert digest(pages, 0) == "3 page(s), 63 word(s)"


def test_the_manifest_passes_the_console_check():
    check = subprocess.run(
        [sys.executable, "-m", "docplatform_sdk.cli", "check", str(EXAMPLE)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr


class Api:
    """The platform's REST API as the organization's admin, over HTTP."""

    def __init__(self, url: str, token: str):
        self.url = url
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def __call__(self, method: str, path: str, **json):
        answer = self.session.request(method, self.url + path, json=json or None, timeout=20)
        assert answer.ok, answer.text
        return answer.json() if answer.content else None


@pytest.mark.slow
def test_a_content_update_is_digested_into_the_space_installation(
    runtime, live_server, celery_worker, org_admin, organization, settings
):
    token = api_token_create(user=org_admin, name="example")[1]
    api = Api(live_server.url + "/api/v1/", token)
    published = subprocess.run(
        [sys.executable, "-m", "docplatform_sdk.cli", "publish", str(EXAMPLE)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "DOCPLATFORM_API": api.url, "DOCPLATFORM_TOKEN": token},
        timeout=60,
    )
    assert published.stdout == "published event-reactor version 1\n", published.stderr

    space = SpaceFactory(organization=organization)
    installation = api("POST", f"spaces/{space.id}/installations/", integration="event-reactor")
    assert installation["status"] == "active"
    api("PATCH", f"installations/{installation['id']}/configuration/", min_words=5)

    revision = api(
        "POST",
        f"spaces/{space.id}/revisions/",
        message="First draft",
        pages=[
            {"path": "intro", "title": "Intro", "body": "Welcome to the docs."},
            {"path": "guide", "title": "Guide", "body": "Install it, then run it twice."},
        ],
    )

    def digested():
        return api("GET", f"installations/{installation['id']}/")["configuration"].get("digest")

    wait_until(digested, timeout=30)
    shown = api("GET", f"installations/{installation['id']}/")
    assert shown["configuration"]["digest"] == "2 page(s), 10 word(s); under 5 words: intro"
    assert shown["externalIds"] == [f"revision:{revision['id']}"]

    endpoint = settings.INTEGRATIONS_URL + f"/installations/{installation['id']}/"
    assert requests.get(endpoint, timeout=20).json() == {
        "space": space.id,
        "digest": "2 page(s), 10 word(s); under 5 words: intro",
        "revision": revision["id"],
    }

    # A redelivery of the same event is recognized: nothing is written again.
    delivery = Delivery.objects.get(
        installation_id=installation["id"], event__type="space_content_updated"
    )
    edits = Delivery.objects.filter(event__type="installation_setup")
    edits_before = edits.count()
    api("POST", f"deliveries/{delivery.pk}/redeliver/")
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).chain == 2)
    wait_until(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded")
    assert Delivery.objects.get(pk=delivery.pk).outcome == "handled"
    assert edits.count() == edits_before
