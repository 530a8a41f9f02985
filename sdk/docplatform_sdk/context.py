"""What a handler receives as ``context``: the environment, the platform API and ``fetch``.

Integration code has no network of its own (it runs in a sandbox): ``context.fetch`` and
``context.api`` send each request to the runtime host over the worker's pipe, and the host
performs it under the platform's outbound rules (public addresses only, the manifest's
``network.fetch`` hosts, no redirects followed, 3 s to connect and 10 s in all). A refused
request comes back as a 403 Response whose body says why.
"""

import json as jsonlib

from .jsonobject import JSONObject

OPTIONAL_ENVIRONMENT_KEYS = ("installation", "spaceInstallation", "siteInstallation", "site")


class Environment(JSONObject):
    """``context.environment``: apiEndpoint, apiTokens, integration, secrets, and where the
    call concerns one, installation, spaceInstallation, siteInstallation and site (its
    ``id``, ``url`` and, for an installation granted ``site:visitor:auth``,
    ``visitorSigningKey``; None otherwise)."""

    def __init__(self, data: dict):
        super().__init__(data)
        self.setdefault("apiTokens", JSONObject())
        self.setdefault("secrets", JSONObject())
        for key in OPTIONAL_ENVIRONMENT_KEYS:
            self.setdefault(key, None)

    @property
    def api_token(self) -> str | None:
        """The installation's token when there is one, else the integration's."""
        tokens = self.get("apiTokens") or {}
        return tokens.get("installation") or tokens.get("integration")

    @property
    def integration_api_token(self) -> str | None:
        """The integration's own token (every call has it): it acts on every installation of
        the integration, each within its granted scopes."""
        return (self.get("apiTokens") or {}).get("integration")

    @property
    def installation_endpoint(self) -> str | None:
        """The public endpoint of the installation this call concerns, if any: the space's or
        site's installation when there is one (its token is the one in apiTokens), else the
        organization's."""
        for key in INSTALLATION_KEYS_MOST_SPECIFIC_FIRST:
            endpoint = _public_endpoint(self.get(key))
            if endpoint:
                return endpoint
        return None

    @property
    def public_endpoints(self) -> list[str]:
        """The public endpoints of this call, most specific first: the space's or site's
        installation, the organization's installation, the integration's."""
        endpoints = [
            _public_endpoint(self.get(key))
            for key in (*INSTALLATION_KEYS_MOST_SPECIFIC_FIRST, "integration")
        ]
        return [endpoint for endpoint in endpoints if endpoint]


INSTALLATION_KEYS_MOST_SPECIFIC_FIRST = ("spaceInstallation", "siteInstallation", "installation")


def _public_endpoint(holder) -> str | None:
    return ((holder or {}).get("urls") or {}).get("publicEndpoint")


class PlatformAPIError(Exception):
    """The platform API answered with an error status."""

    def __init__(self, method: str, url: str, status: int, body):
        super().__init__(f"{method} {url} answered {status}: {body}")
        self.status, self.body = status, body


class PlatformAPI:
    """The platform's REST API at ``apiEndpoint``, as this installation (``Bearer`` token), or
    as the integration itself (``token``: ``context.integration_api``)."""

    def __init__(self, environment: Environment, fetch, token: str | None = None):
        self.endpoint = (environment.get("apiEndpoint") or "").rstrip("/")
        self.token = token or environment.api_token
        self._fetch = fetch

    def request(self, method: str, path: str, json=None):
        """Send a request; returns the parsed JSON answer (None when empty)."""
        if not self.endpoint:
            raise PlatformAPIError(method, path, 0, "the environment has no apiEndpoint")
        url = self.endpoint + "/" + path.lstrip("/")
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        body = None
        if json is not None:
            headers["Content-Type"] = "application/json"
            body = jsonlib.dumps(json).encode()
        answer = self._fetch(url, method=method, headers=headers, body=body)
        try:
            data = answer.json() if answer.body else None
        except ValueError:
            data = answer.text()
        if not 200 <= answer.status < 300:
            raise PlatformAPIError(method, url, answer.status, data)
        return data

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, json=None):
        return self.request("POST", path, json=json)

    def patch(self, path: str, json=None):
        return self.request("PATCH", path, json=json)

    def installation(self):
        """This installation, as the platform sees it now."""
        return self.get("/installation/")

    def installations(self):
        """Every installation of the integration (with ``context.integration_api``)."""
        return self.get("/integration/installations/")

    def update_installation(self, configuration: dict | None = None, external_ids=None):
        """Change this installation's configuration properties and/or its external ids."""
        changes = {}
        if configuration is not None:
            changes["configuration"] = configuration
        if external_ids is not None:
            changes["externalIds"] = list(external_ids)
        return self.patch("/installation/", json=changes)


class FetchError(Exception):
    """The request got no HTTP response (network error, timeout); the message says which."""


def _no_network(url, method="GET", headers=None, body=None, timeout=10):
    raise FetchError("no network here: context.fetch works inside the runtime's workers")


class Context:
    """The second argument of every handler. ``fetch(url, method="GET", headers=None,
    body=None, timeout=10)`` returns a Response whatever its status, or raises FetchError."""

    def __init__(self, environment: dict, fetch=_no_network):
        self.environment = (
            environment if isinstance(environment, Environment) else Environment(environment)
        )
        self.fetch = fetch
        self.api = PlatformAPI(self.environment, fetch)
        #: The API as the integration itself (its integration token), on any installation of
        #: it within that installation's scopes; None-token calls answer 401.
        self.integration_api = PlatformAPI(
            self.environment, fetch, token=self.environment.integration_api_token
        )
