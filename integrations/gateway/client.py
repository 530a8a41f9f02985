"""The gateway's client: envelopes to the runtime host, answers or failures back.

``POST {RUNTIME_URL}/integrations/{name}/v1`` with the parts ``event``, ``environment`` and
``fetch-body`` (multipart/form-data), the raw body signed with the platform-to-runtime key
(the webhook scheme). The host keeps code by the SHA-256 of its bundle (which it checks);
when it does not have this version's bundle it answers 409 ``bundle_required`` and the
envelope is sent again with the extension part ``bundle``.
"""

import json
import time
from dataclasses import dataclass

import requests
from django.conf import settings
from docplatform_sdk import signing
from urllib3.filepost import encode_multipart_formdata

from ..environment import environment_for, runtime_signing_key
from ..models import Installation, IntegrationVersion
from .failures import HOST_OUTCOMES, IntegrationFault, PlatformFault

OUTCOME_HEADER = "X-Runtime-Outcome"


@dataclass(frozen=True)
class RuntimeAnswer:
    """What the integration's code answered (the runtime host's own failures are raised)."""

    status: int
    headers: dict
    body: bytes
    duration_ms: int

    def json(self):
        return json.loads(self.body)


_session = requests.Session()
_session.trust_env = False


def envelope_url(integration_name: str) -> str:
    return f"{settings.RUNTIME_URL}/integrations/{integration_name}/v1"


def _envelope(event: dict, environment: dict, fetch_body: bytes | None, bundle: bytes | None):
    fields = [
        ("event", ("event.json", json.dumps(event).encode(), "application/json")),
        ("environment", ("environment.json", json.dumps(environment).encode(), "application/json")),
    ]
    if fetch_body is not None:
        fields.append(("fetch-body", ("body", fetch_body, "application/octet-stream")))
    if bundle is not None:
        fields.append(("bundle", ("bundle.json", bundle, "application/json")))
    return encode_multipart_formdata(fields)


def call_runtime(
    event: dict,
    *,
    version: IntegrationVersion,
    installation: Installation | None = None,
    fetch_body: bytes | None = None,
) -> RuntimeAnswer:
    """Send one envelope and return the integration code's answer. Raises PlatformFault when
    the host cannot be reached or refuses the envelope, IntegrationFault when the code failed
    (``duration_ms`` of the call is on the failure as ``duration_ms``)."""
    environment = environment_for(version, installation)
    started = time.perf_counter()
    answer = _post(version, event, environment, fetch_body, bundle=None)
    if answer.status_code == 409 and answer.headers.get(OUTCOME_HEADER) == "bundle_required":
        answer = _post(version, event, environment, fetch_body, bundle=bytes(version.bundle))
    duration_ms = int((time.perf_counter() - started) * 1000)
    outcome = answer.headers.get(OUTCOME_HEADER, "")
    if outcome in HOST_OUTCOMES:
        failure = IntegrationFault.from_outcome(outcome, _message_of(answer))
        failure.duration_ms = duration_ms
        raise failure
    if outcome != "ok":
        # The envelope itself was refused (signature, shape, size): the platform's fault.
        raise PlatformFault(
            "runtime_unavailable",
            f"the runtime refused the envelope ({answer.status_code} {outcome or 'no outcome'})",
        )
    return RuntimeAnswer(
        status=answer.status_code,
        headers=dict(answer.headers),
        body=answer.content,
        duration_ms=duration_ms,
    )


def _message_of(answer: requests.Response) -> str | None:
    """The integration's exception (``Type: message``) the host reported, if any."""
    try:
        message = answer.json().get("message")
    except (ValueError, AttributeError):
        return None
    return message if isinstance(message, str) else None


def _post(version, event, environment, fetch_body, bundle) -> requests.Response:
    body, content_type = _envelope(event, environment, fetch_body, bundle)
    headers = {
        "Content-Type": content_type,
        signing.HEADER: signing.sign(body, runtime_signing_key()),
    }
    try:
        return _session.post(
            envelope_url(version.integration.name),
            data=body,
            headers=headers,
            timeout=(settings.RUNTIME_CONNECT_TIMEOUT, settings.RUNTIME_RESPONSE_TIMEOUT),
            allow_redirects=False,
        )
    except requests.RequestException as exc:
        raise PlatformFault(
            "runtime_unavailable",
            f"the runtime host cannot be reached ({exc.__class__.__name__})",
        ) from exc
