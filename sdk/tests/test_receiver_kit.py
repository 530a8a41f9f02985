"""The receiver kit and the runnable example receiver."""

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from docplatform_sdk import signing
from docplatform_sdk.receiver import (
    MalformedSignature,
    MissingSignature,
    SignatureError,
    SignatureMismatch,
    StaleSignature,
    verify_signature,
)

REPO = Path(__file__).resolve().parents[2]
SECRET = "whsec_test-secret"
BODY = b'{"type":"ping","eventId":"e-1","installationId":"i-1"}'


def test_a_valid_signature_returns_its_timestamp():
    header = signing.sign(BODY, SECRET, timestamp=1_700_000_000)
    assert verify_signature(BODY, header, SECRET, tolerance=None) == 1_700_000_000
    assert verify_signature(BODY, signing.sign(BODY, SECRET), SECRET) > 0


@pytest.mark.parametrize(
    ("header", "error", "message"),
    [
        (None, MissingSignature, "header is missing"),
        ("", MissingSignature, "header is missing"),
        ("v1=abc", MalformedSignature, "the t= part is missing"),
        ("t=123", MalformedSignature, "no v1= signature"),
        ("t=abc,v1=00", MalformedSignature, "t must be a Unix timestamp"),
        ("garbage", MalformedSignature, "is not key=value"),
    ],
)
def test_each_kind_of_bad_header_has_its_error(header, error, message):
    with pytest.raises(error, match=message):
        verify_signature(BODY, header, SECRET)


def test_a_stale_timestamp_is_refused_and_the_tolerance_is_configurable():
    header = signing.sign(BODY, SECRET, timestamp=time.time() - 301)
    with pytest.raises(StaleSignature, match="tolerance 300 s"):
        verify_signature(BODY, header, SECRET)
    assert verify_signature(BODY, header, SECRET, tolerance=600)


def test_a_changed_body_or_another_secret_does_not_match():
    header = signing.sign(BODY, SECRET)
    with pytest.raises(SignatureMismatch):
        verify_signature(BODY + b" ", header, SECRET)
    with pytest.raises(SignatureMismatch):
        verify_signature(BODY, header, "whsec_other")
    assert issubclass(SignatureMismatch, SignatureError)


def test_any_matching_v1_entry_is_accepted():
    header = signing.sign(BODY, ["whsec_new", SECRET])
    assert header.count("v1=") == 2
    assert verify_signature(BODY, header, SECRET)
    assert verify_signature(BODY, header, "whsec_new")


def test_the_signature_is_hmac_sha256_over_t_dot_body():
    import hashlib
    import hmac

    header = signing.sign(BODY, SECRET, timestamp=42)
    expected = hmac.new(SECRET.encode(), b"42." + BODY, hashlib.sha256).hexdigest()
    assert header == f"t=42,v1={expected}"


class Lines:
    """A process's output lines, read in a thread: ``next`` fails, rather than hangs, when
    none comes within ``timeout``."""

    def __init__(self, stream):
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self.lines.put(line)

    def next(self, timeout: float = 10) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout} s") from None


@pytest.fixture
def example_receiver():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(REPO / "examples" / "webhook_receiver.py"), "--port", str(port),
         "--secret", SECRET],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    output = Lines(process.stdout)
    assert "listening" in output.next()
    yield f"http://127.0.0.1:{port}/", output
    process.kill()
    process.wait(timeout=5)


def test_the_example_receiver(example_receiver):
    url, output = example_receiver
    unsigned = requests.post(url, data=BODY, timeout=5)
    assert unsigned.status_code == 401
    assert unsigned.json()["error"] == "invalid_signature"
    forged = requests.post(
        url, data=BODY, headers={"X-Service-Signature": signing.sign(BODY, "wrong")}, timeout=5
    )
    assert forged.status_code == 401

    for _ in range(2):  # a repeated delivery is acknowledged but processed once
        signed = requests.post(
            url, data=BODY, headers={"X-Service-Signature": signing.sign(BODY, SECRET)}, timeout=5
        )
        assert signed.status_code == 200 and signed.json() == {"received": True}
    other = json.dumps({"type": "ping", "eventId": "e-2", "installationId": "i-1"}).encode()
    requests.post(
        url, data=other, headers={"X-Service-Signature": signing.sign(other, SECRET)}, timeout=5
    )
    assert output.next().strip() == "ping e-1 for installation i-1"
    assert output.next().strip() == "ping e-2 for installation i-1"
