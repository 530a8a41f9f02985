"""The example webhook receiver as its users run it: a process, signed requests."""

import json
import select
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from docplatform_sdk import signing

RECEIVER = Path(__file__).resolve().parents[2] / "examples" / "webhook_receiver.py"
SECRET = "whsec_example-receiver-secret"


def line(process: subprocess.Popen, timeout: float = 10) -> str:
    """The receiver's next line of output; fails, rather than hangs, when none comes."""
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, f"no output within {timeout} s"
    return process.stdout.readline()


@pytest.fixture
def receiver():
    process = subprocess.Popen(
        [sys.executable, str(RECEIVER), "--port", "0", "--secret", SECRET],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    first = line(process)
    assert first.startswith("listening on "), first
    yield process, first.split()[-1]
    process.kill()
    process.wait(timeout=10)


def post(url: str, body, secret: str = SECRET) -> requests.Response:
    raw = json.dumps(body).encode()
    headers = {signing.HEADER: signing.sign(raw, secret), "Content-Type": "application/json"}
    return requests.post(url, data=raw, headers=headers, timeout=5)


def test_a_signed_event_without_an_installation_is_processed_and_the_next_one_too(receiver):
    process, url = receiver
    answer = post(url, {"type": "space_view", "eventId": "evt_1", "spaceId": "s"})
    assert answer.status_code == 200
    assert line(process).strip() == "space_view evt_1 for installation (none)"

    answer = post(url, {"type": "space_view", "eventId": "evt_2", "installationId": "inst_1"})
    assert answer.status_code == 200
    assert line(process).strip() == "space_view evt_2 for installation inst_1"


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ([1, 2], "the body is not a JSON object"),
        ({"eventId": "evt_3"}, "type: a non-empty string is required"),
        ({"type": "space_view", "eventId": 7}, "eventId: a non-empty string is required"),
    ],
)
def test_a_signed_body_that_is_no_event_is_a_400_naming_why(receiver, body, detail):
    process, url = receiver
    answer = post(url, body)
    assert answer.status_code == 400
    assert answer.json() == {"error": "invalid_event", "detail": detail}
    assert post(url, {"type": "t", "eventId": "evt_4"}).status_code == 200
    assert process.poll() is None


def test_a_wrong_signature_is_a_401(receiver):
    _, url = receiver
    answer = post(url, {"type": "t", "eventId": "evt_5"}, secret="whsec_another")
    assert answer.status_code == 401
    assert answer.json()["error"] == "invalid_signature"
