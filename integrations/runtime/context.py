"""What a handler receives as ``context``: the environment, the platform API and ``fetch``."""

import requests

from .http_messages import Response
from .jsonobject import JSONObject

API_TIMEOUT = 10
OPTIONAL_ENVIRONMENT_KEYS = ("installation", "spaceInstallation", "siteInstallation")
# requests hands back the body decoded and whole: these headers no longer describe it.
DECODED_BODY_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


class Environment(JSONObject):
    """``context.environment``: apiEndpoint, apiTokens, integration, secrets, and where the
    call concerns one, installation, spaceInstallation, siteInstallation (None otherwise)."""

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
    """The platform's REST API at ``apiEndpoint``, as this installation (``Bearer`` token)."""

    def __init__(self, environment: Environment):
        self.endpoint = (environment.get("apiEndpoint") or "").rstrip("/")
        self.token = environment.api_token

    def request(self, method: str, path: str, json=None):
        """Send a request; returns the parsed JSON answer (None when empty)."""
        if not self.endpoint:
            raise PlatformAPIError(method, path, 0, "the environment has no apiEndpoint")
        url = self.endpoint + "/" + path.lstrip("/")
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        answer = requests.request(method, url, json=json, headers=headers, timeout=API_TIMEOUT)
        try:
            body = answer.json() if answer.content else None
        except ValueError:
            body = answer.text
        if not answer.ok:
            raise PlatformAPIError(method, url, answer.status_code, body)
        return body

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, json=None):
        return self.request("POST", path, json=json)

    def patch(self, path: str, json=None):
        return self.request("PATCH", path, json=json)

    def installation(self):
        """This installation, as the platform sees it now."""
        return self.get("/installation/")

    def update_installation(self, configuration: dict | None = None, external_ids=None):
        """Change this installation's configuration properties and/or its external ids."""
        changes = {}
        if configuration is not None:
            changes["configuration"] = configuration
        if external_ids is not None:
            changes["externalIds"] = list(external_ids)
        return self.patch("/installation/", json=changes)


def fetch(url: str, method: str = "GET", headers=None, body=None, timeout: float = 10) -> Response:
    """An outbound HTTP request; any status comes back as a Response (network errors raise)."""
    answer = requests.request(method, url, headers=headers, data=body, timeout=timeout)
    headers = {
        name: value
        for name, value in answer.headers.items()
        if name.lower() not in DECODED_BODY_HEADERS
    }
    return Response(answer.status_code, headers, answer.content)


class Context:
    """The second argument of every handler."""

    def __init__(self, environment: dict):
        self.environment = (
            environment if isinstance(environment, Environment) else Environment(environment)
        )
        self.api = PlatformAPI(self.environment)
        self.fetch = fetch
