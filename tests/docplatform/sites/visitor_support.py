"""Integrations that sign a site's visitors in (``site:visitor:auth``) or add claims
(``site:adaptive:write``), published for real (their code checked by the runtime host), and
visitor tokens signed as integrations sign them (the SDK's ``sign_visitor_token``)."""

import time
import uuid
from pathlib import Path

import jwt
import yaml
from docplatform_sdk import Context, sign_visitor_token

from docplatform.sites.addresses import site_url
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create

SIGNER = """
from docplatform_sdk import Response, create_integration


def visitor_authentication(request, context):
    location = request.query.get("location", "")
    return Response.redirect("https://idp.example/authorize?back=" + location)


integration = create_integration(visitor_authentication=visitor_authentication)
"""

ADDER = """
import time

from docplatform_sdk import create_integration


def visitor_claims(event, context):
    if event.claims.get("slow"):
        time.sleep(2)
    return {"plan": "pro", "team": "docs", "seen": dict(event.claims)}


integration = create_integration(visitor_claims=visitor_claims)
"""


def publish_site_integration(folder: Path, publisher, *, name: str, scopes: list, code: str):
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": name,
        "title": name.replace("-", " ").title(),
        "description": "Signs visitors in, or adds their claims.",
        "organization": "acme",
        "visibility": "private",
        "target": "site",
        "scopes": scopes,
        "script": "main.py",
    }
    (folder / "service-manifest.yaml").write_text(yaml.safe_dump(manifest))
    (folder / "main.py").write_text(code)
    return integration_publish_folder(path=folder, publisher=publisher).version.integration


def install_on_site(integration, admin, site):
    return installation_create(
        user=admin, integration=integration, organization=site.organization, site=site
    )


def token_for(site, claims: dict, /, **changes) -> str:
    """A visitor token for ``site`` as the SDK signs it; ``changes`` alter its payload
    (``key=`` signs with another key)."""
    key = changes.pop("key", site.visitor_signing_key)
    environment = {"site": {"id": site.pk, "url": site_url(site), "visitorSigningKey": key}}
    if not changes:
        return sign_visitor_token(claims, Context(environment))
    now = int(time.time())
    payload = {"aud": site.pk, "iat": now, "exp": now + 60, "jti": uuid.uuid4().hex}
    payload |= {"claims": claims, **changes}
    payload = {name: value for name, value in payload.items() if value is not None}
    return jwt.encode(payload, key.encode(), algorithm="HS256")


def home(site) -> str:
    return f"/{site.pk}/"
