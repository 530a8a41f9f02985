"""What integration code is told about itself: ``context.environment`` (spec and DESIGN.md)."""

import functools
import hashlib
import hmac

from django.conf import settings
from django.urls import reverse

from docplatform.crypto import key_from_setting
from docplatform.sites.addresses import site_url

from .endpoint_selectors import selected_spaces_of
from .middleware import URLCONF as PUBLIC_URLCONF
from .models import Installation, Integration, IntegrationVersion
from .policies import installation_has_scope
from .runtime.protocol import BUNDLE_HASH


def runtime_signing_key() -> str:
    """The platform-to-runtime key: the setting, or in development one derived from
    SECRET_KEY."""
    return key_from_setting(
        "RUNTIME_SIGNING_KEY",
        settings.RUNTIME_SIGNING_KEY,
        lambda: hmac.new(
            settings.SECRET_KEY.encode(), b"runtime-signing-key", hashlib.sha256
        ).hexdigest(),
    )


def integration_public_endpoint(integration: Integration) -> str:
    """The world-facing URL of the integration's own endpoint, on the integrations origin."""
    return settings.INTEGRATIONS_URL + _endpoint_path("integration-endpoint", integration.name)


def installation_public_endpoint(installation: Installation) -> str:
    """The world-facing URL of an installation, on the integrations origin; requests there are
    relayed to the integration's ``fetch``."""
    return settings.INTEGRATIONS_URL + _endpoint_path("installation-endpoint", installation.id)


@functools.lru_cache(maxsize=4096)
def _endpoint_path(route: str, key: str) -> str:
    """An endpoint's path, reversed once: every runtime call's environment names two or three."""
    return reverse(route, urlconf=PUBLIC_URLCONF, args=[key, ""])


def _installation_part(installation: Installation) -> dict:
    return {
        "id": installation.id,
        "status": installation.status,
        "configuration": installation.effective_configuration,
        "externalIds": list(installation.external_ids),
        "urls": {"publicEndpoint": installation_public_endpoint(installation)},
    }


def environment_for(version: IntegrationVersion, installation: Installation | None = None) -> dict:
    """The environment of one call: the integration's, and its installation's when there is one.

    For a space or site installation, ``installation`` is its organization installation and
    ``spaceInstallation``/``siteInstallation`` the local one; a site installation's calls
    also say which site (``site``: ``_site_part``).

    ``apiTokens.integration`` is the running version's integration token (``dpn_…``), in every
    call, with an installation or without (the integration's public endpoint): it acts for
    the integration on every installation of it, each within its granted scopes
    (``authentication.IntegrationPrincipal``), and works while that version runs.
    ``apiTokens.installation`` is the installation's own token, when there is one.
    """
    integration = version.integration
    environment = {
        "apiEndpoint": settings.PLATFORM_URL + "/api/v1",
        "apiTokens": {"integration": version.api_token or None},
        "integration": {
            "name": integration.name,
            "version": version.number,
            "contentHash": version.content_hash,
            BUNDLE_HASH: version.bundle_hash,
            "configurations": integration.configurations,
            "urls": {"publicEndpoint": integration_public_endpoint(integration)},
        },
        "secrets": dict(version.secrets or {}),
    }
    if version.network_fetch is not None:
        environment["integration"]["network"] = {"fetch": version.network_fetch}
    if installation is None:
        return environment
    environment["apiTokens"]["installation"] = installation.api_token
    organization_installation = installation.parent or installation
    environment["installation"] = {
        **_installation_part(organization_installation),
        "space_selection": {
            "type": organization_installation.space_selection,
            "spaces": selected_spaces_of(installation),
        },
        "target": integration.target,
    }
    if installation.level == Installation.Level.SPACE:
        environment["spaceInstallation"] = {
            "space": installation.space_id,
            **_installation_part(installation),
        }
    elif installation.level == Installation.Level.SITE:
        environment["siteInstallation"] = {
            "site": installation.site_id,
            **_installation_part(installation),
        }
        environment["site"] = _site_part(installation)
    return environment


#: The scope whose holders sign the site's visitors in, and receive its visitor key.
VISITOR_AUTH_SCOPE = "site:visitor:auth"


def _site_part(installation: Installation) -> dict:
    """``environment.site`` of a site installation's calls: the site's id and address, and
    its visitor key only for an installation holding ``site:visitor:auth`` (README, "Visitor
    authentication")."""
    site = installation.site
    part = {"id": site.pk, "url": site_url(site)}
    if installation_has_scope(installation, VISITOR_AUTH_SCOPE):
        part["visitorSigningKey"] = site.visitor_signing_key
    return part
