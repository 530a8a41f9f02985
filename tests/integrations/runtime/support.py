"""A real runtime host in a subprocess, and a client that sends it signed envelopes as the
platform does (reusable by the platform's end-to-end tests)."""

import hashlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import requests
from docplatform_sdk import signing
from docplatform_sdk.codebundle import CodeBundle, digest
from requests.structures import CaseInsensitiveDict

from integrations.runtime import frames
from tests.network import free_port

PROJECT_ROOT = Path(__file__).resolve().parents[3]


class RunningHost:
    """``python -m integrations.runtime.host`` on a free port (``url``, HTTP) and a Unix
    socket named as its log (``frames_url``, frames: the platform's default in the tests;
    a host never takes another's socket); its log goes to ``log_path`` and its temporary
    directories beside it."""

    def __init__(
        self,
        signing_key: str,
        log_path: Path,
        open_files: int | None = None,
        **environment: str,
    ):
        """``open_files``: the soft limit of open files the host starts under."""
        self.signing_key = signing_key
        self.log_path = log_path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.socket_path = log_path.with_suffix(".sock")  # one a host each, beside its log
        self.frames_url = f"unix://{self.socket_path}"
        self._log = log_path.open("wb")
        command = [sys.executable, "-m", "integrations.runtime.host", "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--socket", str(self.socket_path)],
            cwd=PROJECT_ROOT,
            env={
                **os.environ,
                "RUNTIME_SIGNING_KEY": signing_key,
                "TMPDIR": str(log_path.parent),
                **environment,
            },
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=None if open_files is None else partial(_soft_open_files, open_files),
        )
        wait_for_health(self.url, self.process)  # its socket listens by then

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._log.close()


def wait_for_health(url: str, process: subprocess.Popen, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the runtime host exited with {process.returncode}")
        try:
            if requests.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except requests.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("the runtime host did not answer /health in time")


def bundle_of(script, modules: dict | None = None) -> bytes:
    """The canonical bundle of a one-file script (``main.py``) and optional modules beside
    it; a CodeBundle or bytes is taken as it is."""
    if isinstance(script, bytes):
        return script
    if isinstance(script, CodeBundle):
        return script.encode()
    return CodeBundle(script="main.py", files={"main.py": script, **(modules or {})}).encode()


def content_hash(name: str, script) -> str:
    return hashlib.sha256(name.encode() + b"\n" + bundle_of(script)).hexdigest()


def environment_for(name: str, script: str, host_url: str = "http://runtime", **extra) -> dict:
    """An environment as the platform sends it, for an organization installation."""
    return {
        "apiEndpoint": "http://platform.invalid/api/v1",
        "apiTokens": {"integration": "integration-token", "installation": "installation-token"},
        "integration": {
            "name": name,
            "version": 1,
            "contentHash": content_hash(name, script),
            "bundleHash": digest(bundle_of(script)),
            "urls": {"publicEndpoint": f"{host_url}/integrations/{name}"},
        },
        "secrets": {"API_KEY": "secret-of-" + name},
        "installation": {
            "id": "inst-1",
            "status": "active",
            "configuration": {},
            "externalIds": [],
            "target": "all",
            "space_selection": {"all": True},
            "urls": {"publicEndpoint": f"http://platform.invalid/installations/inst-1/{name}"},
        },
        **extra,
    }


def envelope_parts(event=None, environment=None, fetch_body=None, bundle=None) -> dict:
    """The multipart parts of an envelope; a value given as bytes is sent as it is."""

    def encoded(value):
        return value if isinstance(value, bytes) else json.dumps(value).encode()

    parts = {}
    if event is not None:
        parts["event"] = (None, encoded(event), "application/json")
    if environment is not None:
        parts["environment"] = (None, encoded(environment), "application/json")
    if fetch_body is not None:
        parts["fetch-body"] = ("fetch-body", fetch_body, "application/octet-stream")
    if bundle is not None:
        parts["bundle"] = ("bundle.json", bundle, "application/json")
    return parts


def _soft_open_files(limit: int):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


class EnvelopeClient:
    """Sends envelopes to a host as the platform does: in frames on its Unix socket (the
    platform's default; calls carried on the host's event loop), or over HTTP
    (``transport="http"``, the fallback). A request signed otherwise than with the host's key
    (``signature``, ``sign=False``) goes over HTTP, where the signature is the request's, and
    so does an envelope with a part no frame field carries."""

    def __init__(self, host: RunningHost, transport: str = "frames"):
        self.host = host
        self.transport = transport
        self.session = requests.Session()
        self._connections = threading.local()  # one per thread, as the platform keeps them

    def post(self, name, parts, version="v1", signature=None, sign=True, timeout=30):
        framed = self.transport == "frames" and sign and signature is None
        if framed and set(parts) <= set(FRAME_PARTS):
            return self._framed(f"/integrations/{name}/{version}", parts, timeout)
        prepared = requests.Request(
            "POST", f"{self.host.url}/integrations/{name}/{version}", files=parts
        ).prepare()
        if signature is not None:
            prepared.headers[signing.HEADER] = signature
        elif sign:
            prepared.headers[signing.HEADER] = signing.sign(prepared.body, self.host.signing_key)
        return self.session.send(prepared, timeout=timeout)

    def _framed(self, path: str, parts: dict, timeout: float) -> "FramedAnswer":
        fields: list[bytes | None] = [None] * frames.REQUEST_FIELDS
        fields[frames.PATH] = path.encode()
        for name, position in FRAME_PARTS.items():
            if name in parts:
                fields[position] = parts[name][1]
        connection = getattr(self._connections, "now", None)
        if connection is None or connection.broken:
            connection = frames.Connection(self.host.frames_url, self.host.signing_key, 5)
            self._connections.now = connection
        try:
            answer = connection.call(fields, timeout=timeout, answer_limit=64 * 1024**2)
        except frames.FrameError as error:  # the host gone: as requests says it over HTTP
            raise requests.ConnectionError(str(error)) from error
        return FramedAnswer(answer)

    def call(self, name, script, event, environment=None, fetch_body=None):
        """Send the envelope as the platform does: without the bundle first, and again with it
        when the host answers 409 bundle_required."""
        environment = environment or environment_for(name, script, self.host.url)
        answer = self.post(name, envelope_parts(event, environment, fetch_body))
        if answer.status_code == 409 and answer.json()["error"] == "bundle_required":
            answer = self.post(
                name, envelope_parts(event, environment, fetch_body, bundle_of(script))
            )
        return answer


#: The envelope's multipart parts and the frame's fields that carry them.
FRAME_PARTS = {
    "event": frames.EVENT,
    "environment": frames.ENVIRONMENT,
    "fetch-body": frames.FETCH_BODY,
    "bundle": frames.BUNDLE,
}


class FramedAnswer:
    """A frame's answer, read as the tests read an HTTP response."""

    def __init__(self, answer: frames.Answer):
        self.status_code = answer.status
        self.headers = CaseInsensitiveDict(answer.headers)
        self.content = answer.body

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self):
        return json.loads(self.content)
