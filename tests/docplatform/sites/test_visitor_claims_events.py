"""``site:visitor:claims``: a signed-in visitor's claims are in the ``site_view`` and
``page_feedback`` an installation receives only when it is granted the scope; another
installation of the same site gets the same events without them, and so does the events API."""

import pytest

from docplatform.events import payload_for
from docplatform.events.models import Delivery, Event
from docplatform.sites import site_services
from integrations.models import Installation
from tests.api_helpers import API, api_client

from .visitor_support import SIGNER, install_on_site, publish_site_integration, token_for

READER = "from docplatform_sdk import create_integration\n\nintegration = create_integration()\n"
VISITS = ["site:views:read", "page:feedback:read"]


@pytest.fixture
def installations(tmp_path, org_admin, site):
    def installed(name, scopes, code=READER):
        integration = publish_site_integration(
            tmp_path / name, org_admin, name=name, scopes=scopes, code=code
        )
        return install_on_site(integration, org_admin, site)

    signer = installed("signer", ["site:visitor:auth"], SIGNER)
    site_services.site_update(
        site=site, actor=org_admin, audience="authenticated", auth_installation=signer.pk
    )
    site.refresh_from_db()
    return {
        "reader": installed("claims-reader", [*VISITS, "site:visitor:claims"]),
        "counter": installed("view-counter", VISITS),
    }


def bodies(event_type: str) -> dict:
    """Each installation's body of the last event of ``event_type``."""
    event = Event.objects.filter(type=event_type).latest("created_at")
    deliveries = Delivery.objects.filter(event=event).select_related("event")
    return {delivery.installation_id: payload_for(event, delivery) for delivery in deliveries}


@pytest.mark.slow
def test_only_an_installation_granted_site_visitor_claims_reads_the_claims(
    visitor, site, handbook, installations, people
):
    reader, counter = installations["reader"], installations["counter"]
    claims = {"sub": "v1", "plan": "pro"}
    visitor.get(f"/{site.pk}/", {"visitor_token": token_for(site, claims)})
    assert visitor.get(f"/{site.pk}/{handbook.pk}/intro").status_code == 200
    views = bodies("site_view")
    assert views[reader.pk]["visitor"]["claims"] == claims
    assert "claims" not in views[counter.pk]["visitor"]
    assert views[counter.pk]["visitor"]["anonymousId"] == views[reader.pk]["visitor"]["anonymousId"]

    rated = visitor.post(
        f"/{site.pk}/{handbook.pk}/-/feedback",
        {"page": "intro", "rating": "good"},
        content_type="application/json",
    )
    assert rated.status_code == 200, rated.content
    feedback = bodies("page_feedback")
    assert feedback[reader.pk]["visitor"]["claims"] == claims
    assert "claims" not in feedback[counter.pk]["visitor"]

    # The events API shows the events, never the claims.
    listed = api_client(people["admin"]).get(f"{API}/orgs/acme/events/").json()["results"]
    shown = [event for event in listed if event["type"] in ("site_view", "page_feedback")]
    assert shown and all("claims" not in event["payload"]["visitor"] for event in shown)


def test_a_withdrawn_scope_withholds_the_claims_from_then_on(
    visitor, site, handbook, installations
):
    reader = installations["reader"]
    visitor.get(f"/{site.pk}/", {"visitor_token": token_for(site, {"plan": "pro"})})
    visitor.get(f"/{site.pk}/{handbook.pk}/intro")
    Installation.objects.filter(pk=reader.pk).update(granted_scopes=VISITS)
    # Routed while it held the scope, sent after: without the claims.
    assert "claims" not in bodies("site_view")[reader.pk]["visitor"]


def test_a_public_sites_events_carry_no_claims(visitor, site, handbook, tmp_path, org_admin):
    integration = publish_site_integration(
        tmp_path / "reader",
        org_admin,
        name="claims-reader",
        scopes=[*VISITS, "site:visitor:claims"],
        code=READER,
    )
    reader = install_on_site(integration, org_admin, site)
    visitor.get(f"/{site.pk}/{handbook.pk}/intro", {"visitor_token": token_for(site, {"a": 1})})
    assert "claims" not in bodies("site_view")[reader.pk]["visitor"]
