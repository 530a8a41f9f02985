"""The integrations' side of visitor authentication (README, "Visitor authentication";
``docplatform.sites.visitor_auth`` is the host's door, registered with ``IntegrationVisitorAuth``
by ``IntegrationsConfig.ready``).

- A site installation whose integration is granted ``site:visitor:auth`` may sign the site's
  visitors in. A visitor without a session is sent to
  ``{INTEGRATIONS_URL}/visitor-auth/<installation id>?location=<address of the site>``, on the
  integrations origin (so what the integration sets there, cookies for its own flow, stays
  beside its public endpoint): the request goes to its ``visitor_authentication`` handler as
  a ``fetch`` would, and the answer (a redirect to the identity provider) comes back as it is,
  less what could carry the platform's credentials (``public_endpoints``).
- A visitor's claims reach an installation in ``site_view`` and ``page_feedback`` only when
  it holds ``site:visitor:claims`` (``installation_reads_visitor_claims``, the outbox's
  claims reader).
- When a session starts, each of the site's installations granted ``site:adaptive:write``
  is asked (``visitor_claims``, all at once, within ``VISITOR_CLAIMS_DEADLINE``) for claims to
  add; the keys each returns win over the token's, in the installations' order (the
  earliest installed first, so a later one wins a key both return). One that fails, is slow
  or answers something else than an object adds nothing and never stops the sign-in.
"""

from concurrent.futures import ThreadPoolExecutor, wait
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from docplatform.models import Site
from docplatform.sites.addresses import site_url

from ..endpoint_selectors import installation_for_call
from ..environment import VISITOR_AUTH_SCOPE
from ..gateway.client import RuntimeAnswer, RuntimeCall, call_runtime
from ..gateway.envelopes import visitor_authentication_event, visitor_claims_event
from ..gateway.failures import ClientFault, IntegrationFault, RuntimeFailure
from ..middleware import URLCONF as PUBLIC_URLCONF
from ..models import Installation, IntegrationLog
from ..policies import installation_has_scope, is_paused, is_receiving, runnable_version
from .public_endpoints import EndpointTarget, installation_endpoint_target, relayed_request_headers

ADAPTIVE_WRITE_SCOPE = "site:adaptive:write"
CLAIMS_READ_SCOPE = "site:visitor:claims"

_claims_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="visitor-claims")


def _site_installations(site: Site) -> list[Installation]:
    return list(
        Installation.objects.filter(site=site, level=Installation.Level.SITE)
        .select_related("integration", "parent")
        .order_by("created_at", "pk")
    )


def _sign_in_installation(site: Site) -> Installation | None:
    """The installation the site signs its visitors in through, when it can now."""
    if not site.authenticated or not site.visitor_auth_installation:
        return None
    installation = installation_for_call(site.visitor_auth_installation)
    if (
        installation is None
        or installation.site_id != site.pk
        or not installation_has_scope(installation, VISITOR_AUTH_SCOPE)
        or is_paused(installation)
        or runnable_version(installation.integration, installation) is None
    ):
        return None
    return installation


class IntegrationVisitorAuth:
    """``docplatform.sites.visitor_auth.VisitorAuthProvider``, by installations."""

    def choices(self, site: Site) -> list[tuple[str, str]]:
        return [
            (installation.pk, installation.integration.title)
            for installation in _site_installations(site)
            if installation_has_scope(installation, VISITOR_AUTH_SCOPE)
        ]

    def installation_problem(self, site: Site, installation_id: str) -> str | None:
        installation = next(
            (found for found in _site_installations(site) if found.pk == installation_id), None
        )
        if installation is None:
            return f"no installation of this site has the id {installation_id}"
        if not installation_has_scope(installation, VISITOR_AUTH_SCOPE):
            return (
                f"{installation.integration.title} is not granted {VISITOR_AUTH_SCOPE}: it "
                "cannot sign visitors in"
            )
        return None

    def sign_in_url(self, site: Site, location: str) -> str | None:
        installation = _sign_in_installation(site)
        if installation is None:
            return None
        path = reverse("visitor-authentication", urlconf=PUBLIC_URLCONF, args=[installation.pk])
        return f"{settings.INTEGRATIONS_URL}{path}?{urlencode({'location': location})}"

    def claims_added(self, site: Site, claims: dict) -> dict:
        return visitor_claims_collect(site, claims)


# --- The sign-in request --------------------------------------------------------------------


def visitor_authentication_target(installation_id: str, location: str) -> EndpointTarget:
    """The installation a visitor signs in through (``public_endpoints``' rules, and the
    site's sign-in installation now); ClientFault otherwise, or when ``location`` is not an
    address of its site."""
    target = installation_endpoint_target(installation_id)
    site = target.installation.site if target.installation.site_id else None
    if site is None or _sign_in_installation(site) is None:
        raise ClientFault("not_found", "this installation does not sign a site's visitors in")
    if not location.startswith(site_url(site)):
        raise ClientFault("invalid_location", f"location must be an address under {site_url(site)}")
    return target


def visitor_authentication_call(
    target: EndpointTarget, *, location: str, method: str, full_path: str, headers, body: bytes
) -> RuntimeAnswer:
    """Relay the visitor's request to the ``visitor_authentication`` handler (logged as a
    ``fetch``); its answer, or RuntimeFailure."""
    event = visitor_authentication_event(
        target.installation,
        location=location,
        method=method,
        url=settings.INTEGRATIONS_URL + full_path,
        headers=relayed_request_headers(headers),
    )
    return call_runtime(
        event,
        version=target.version,
        installation=target.installation,
        fetch_body=body,
        kind=IntegrationLog.Kind.FETCH,
    )


# --- Claims at a session's start ------------------------------------------------------------


def _claims_read(answer: RuntimeAnswer) -> dict:
    try:
        body = answer.json()
    except ValueError as error:
        raise IntegrationFault("invalid_answer", "visitor_claims answered no JSON") from error
    claims = body.get("claims", {}) if isinstance(body, dict) else None
    if answer.status != 200 or not isinstance(claims, dict):
        raise IntegrationFault("invalid_answer", "visitor_claims must return an object")
    return claims


def visitor_claims_collect(site: Site, claims: dict) -> dict:
    """``claims`` with what the site's ``site:adaptive:write`` installations add (see the
    module's docstring)."""
    calls = []
    for installation in _site_installations(site):
        if not installation_has_scope(installation, ADAPTIVE_WRITE_SCOPE):
            continue
        if not is_receiving(installation):
            continue
        loaded = installation_for_call(installation.pk)
        version = runnable_version(loaded.integration, loaded) if loaded else None
        if version is None:
            continue
        event = visitor_claims_event(loaded, claims)
        calls.append(RuntimeCall(event, version=version, installation=loaded))
    if not calls:
        return dict(claims)
    deadline = settings.VISITOR_CLAIMS_DEADLINE
    futures = {_claims_pool.submit(call.send): call for call in calls}
    done, _ = wait(futures, timeout=deadline)
    merged = dict(claims)
    for future, call in futures.items():
        if future not in done:
            call.abandon(IntegrationFault("timeout", f"no claims within {deadline:g} s"))
            continue
        try:
            merged.update(call.finish(_claims_read))
        except RuntimeFailure:
            continue  # logged by the call; the session starts without its claims
    return merged


def installation_reads_visitor_claims(installation_id: str) -> bool:
    """Whether the installation is granted ``site:visitor:claims`` now."""
    installation = (
        Installation.objects.select_related("integration").filter(pk=installation_id).first()
    )
    return installation is not None and installation_has_scope(installation, CLAIMS_READ_SCOPE)
