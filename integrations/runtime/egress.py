"""The egress broker: the HTTP requests integration code asks for (``context.fetch``,
``context.api``), performed by the host under the platform's outbound rules.

- A request to the platform's own API (below the signed environment's ``apiEndpoint``) goes
  there, whatever its address: that is how integration code reaches the platform.
- Any other request must name a host the manifest's ``network.fetch`` allows (none when it
  declares none; ``"*"`` any: ``host_allowed``) and pass the outbound guard (``outbound.py``:
  public addresses only, unless in ``RUNTIME_ALLOWED_NETWORKS``; connect to the checked
  address; no redirect followed; 3 s to connect and 10 s in all, never past the call's own
  deadline; at most ``RUNTIME_FETCH_MAX_MB`` of answer).

A refused request comes back as a 403 whose JSON body says why (``egress_refused``), as
Forge does, and the reason goes to the call's output (``refusal``), so the integration's log
shows it whatever the code does with the 403; a request that got no answer raises
``FetchError`` in the integration.
"""

import base64
import json
import logging
import posixpath
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from docplatform_sdk import outbound
from docplatform_sdk.addresses import parse_networks
from docplatform_sdk.manifest.network import host_allowed, how_to_declare

logger = logging.getLogger("integrations.runtime")

METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
UNSENT_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "te"}
UNRETURNED_HEADERS = {"content-encoding", "content-length", "transfer-encoding", "connection"}
MAX_REQUEST_BYTES = 10 * 1024 * 1024
EVERYWHERE = parse_networks(["0.0.0.0/0", "::/0"])


@dataclass(frozen=True)
class EgressSettings:
    allowed_networks: list = field(default_factory=list)
    connect_timeout: float = 3
    total_timeout: float = 10
    max_response_bytes: int = 10 * 1024 * 1024


def _refused(reason: str) -> dict:
    """The 403 the code gets; ``refusal`` is for the host (``refusal_of``), never sent on."""
    body = json.dumps({"error": "egress_refused", "message": reason}).encode()
    return {
        "status": 403,
        "headers": [["Content-Type", "application/json"], ["X-Runtime-Egress", "refused"]],
        "body": base64.b64encode(body).decode(),
        "refusal": reason,
    }


def refusal_of(answer: dict) -> str | None:
    """Why ``answer`` (of ``Egress.perform``) is a refusal, or None; removes the reason, so
    that what goes on to the worker is the 403 alone."""
    return answer.pop("refusal", None)


def _api_request(url: str, api_endpoint) -> bool:
    """Whether ``url`` lies below the platform API endpoint (no way out with ``..``)."""
    if not isinstance(api_endpoint, str) or not api_endpoint:
        return False
    base = urlsplit(api_endpoint.rstrip("/"))
    try:
        target = urlsplit(url)
    except ValueError:
        return False
    if (target.scheme, target.netloc) != (base.scheme, base.netloc):
        return False
    path = unquote(target.path)
    if "\\" in path or posixpath.normpath(path) != path.rstrip("/") or "/../" in path + "/":
        return False
    return path.startswith(base.path.rstrip("/") + "/")


class Egress:
    """Performs the requests of one host's workers (thread-safe; shares connection pools)."""

    def __init__(self, settings: EgressSettings):
        self.settings = settings
        self.pools = outbound.pool_manager(connections_per_host=4)

    def for_call(self, name: str, environment: dict):
        """The egress function of one call: ``(request, seconds left) -> answer``."""
        integration = environment.get("integration") or {}
        network = integration.get("network") if isinstance(integration, dict) else None
        allowed_hosts = network.get("fetch") if isinstance(network, dict) else None
        api_endpoint = environment.get("apiEndpoint")

        def perform(request: dict, seconds_left: float) -> dict:
            return self.perform(name, request, seconds_left, api_endpoint, allowed_hosts)

        return perform

    def perform(self, name, request, seconds_left, api_endpoint, allowed_hosts) -> dict:
        try:
            url, method, headers, body, timeout = _parse(request)
        except ValueError as error:
            return {"error": f"the request is malformed: {error}"}
        if _api_request(url, api_endpoint):
            networks = EVERYWHERE
        else:
            host = (urlsplit(url).hostname or "").lower()
            if host and not host_allowed(host, allowed_hosts):  # no host: check_url says so
                logger.info("egress integration=%s host=%s refused=network.fetch", name, host)
                return _refused(
                    f"{host} is not in the manifest's network.fetch; add it: "
                    + how_to_declare(host)
                )
            networks = self.settings.allowed_networks
        try:
            target = outbound.check_url(url, allowed_networks=networks)
        except outbound.UnsafeURL as error:
            logger.info("egress integration=%s refused=%s", name, error)
            return _refused(str(error))
        total = min(self.settings.total_timeout, timeout, seconds_left)
        if total <= 0:
            return {"error": "timeout: the call has no time left"}
        limit = self.settings.max_response_bytes
        try:
            answer = outbound.request(
                self.pools,
                target,
                method=method,
                body=body,
                headers=headers,
                keep=limit + 1,
                connect_timeout=min(self.settings.connect_timeout, total),
                total_timeout=total,
            )
        except outbound.SendError as error:
            logger.info("egress integration=%s host=%s error=%s", name, target.host, error)
            return {"error": str(error)}
        logger.info("egress integration=%s host=%s status=%s", name, target.host, answer.status)
        if len(answer.body) > limit or (answer.truncated and len(answer.body) >= limit):
            return {"error": f"the response is over {limit} bytes"}
        return {
            "status": answer.status,
            "headers": [
                [name, value]
                for name, value in answer.headers
                if name.lower() not in UNRETURNED_HEADERS
            ],
            "body": base64.b64encode(answer.body).decode(),
        }


def _parse(request: dict) -> tuple[str, str, dict, bytes | None, float]:
    url, method = request.get("url"), request.get("method") or "GET"
    if not isinstance(url, str) or not url:
        raise ValueError("url must be a string")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(sorted(METHODS))}")
    headers = request.get("headers") or {}
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and "\r" not in k + v and "\n" not in k + v
        for k, v in headers.items()
    ):
        raise ValueError("headers must be strings without line breaks")
    if not all((k + v).isascii() for k, v in headers.items()):
        raise ValueError("header names and values must be ASCII")
    timeout = request.get("timeout", 10)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout < float("inf")
    ):
        raise ValueError("timeout must be a number of seconds above 0")
    headers = {k: v for k, v in headers.items() if k.lower() not in UNSENT_HEADERS}
    body = request.get("body")
    if body is not None:
        if not isinstance(body, str) or len(body) > MAX_REQUEST_BYTES * 4 // 3 + 4:
            raise ValueError(f"the body must be at most {MAX_REQUEST_BYTES} bytes")
        body = base64.b64decode(body)
    return url, method, headers, body, float(timeout)
