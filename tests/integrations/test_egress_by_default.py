"""Egress by default, through the real platform (live server, runtime host, integration log):
code whose manifest declares no ``network.fetch`` reaches the platform's API, any other host is
refused with how to declare it, and the refusal is in the call's log line."""

import pytest
import requests

from integrations.environment import installation_public_endpoint
from integrations.models import IntegrationLog
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.conftest import wait_until
from tests.integrations.conftest import minimal_manifest

SCRIPT = """
from docplatform_sdk import Response, create_integration


def fetch(request, context):
    elsewhere = context.fetch("https://api.example.com/v1/items")
    installation = context.api.installation()
    return Response.json({
        "elsewhere": elsewhere.status,
        "why": elsewhere.json()["message"],
        "installation": installation["id"],
    })


integration = create_integration(fetch=fetch)
"""
REASON = (
    "api.example.com is not in the manifest's network.fetch; add it: "
    'network.fetch: ["api.example.com"] (or ["*"] for any public host)'
)


@pytest.mark.django_db(transaction=True)
def test_without_network_fetch_only_the_platform_api_answers(
    runtime, write_integration, org_admin, organization
):
    root = write_integration(minimal_manifest(script="main.py"), files={"main.py": SCRIPT})
    published = integration_publish_folder(path=root, publisher=org_admin)
    assert [str(warning) for warning in published.warnings] == [
        "network.fetch: not declared, so the code may call only this platform's API; to call "
        'other hosts, declare them: network.fetch: ["api.example.com"] (or ["*"] for any public '
        "host); network.fetch: [] says it calls none"
    ]
    installation = installation_create(
        user=org_admin, integration=published.version.integration, organization=organization
    )
    answer = requests.get(installation_public_endpoint(installation) + "/", timeout=20)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"elsewhere": 403, "why": REASON, "installation": installation.pk}
    lines = IntegrationLog.objects.filter(installation=installation, kind="fetch")
    wait_until(lines.exists)  # written once the answer is sent
    line = lines.get()
    assert line.output == f"[fetch refused: {REASON}]\n"
