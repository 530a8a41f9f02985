"""Integration code reads and publishes the organization's OpenAPI documents with its token,
through the real runtime host, as far as its scopes say: ``openapi:read`` reads,
``openapi:write`` publishes, and without them the platform answers 403."""

import textwrap

import pytest
import requests

from docplatform.openapi.models import OpenApiVersion
from docplatform.openapi.services import openapi_publish
from integrations.environment import installation_public_endpoint
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.integrations.conftest import minimal_manifest

from .samples import PETSTORE_30, PETSTORE_31

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = textwrap.dedent(
    """
    from docplatform_sdk import Response, create_integration
    from docplatform_sdk.context import PlatformAPIError

    def fetch(request, context):
        org = context.api.installation()["organization"]
        try:
            if request.route == "/read":
                version = context.api.get(f"orgs/{org}/openapi/pets/versions/latest/")
                return Response.json({"title": version["document"]["info"]["title"]})
            published = context.api.post(
                f"orgs/{org}/openapi/", {"name": "pets", "content": request.body.decode()}
            )
            return Response.json({"number": published["number"]}, status=201)
        except PlatformAPIError as refused:
            return Response.json({"refused": refused.status}, status=200)

    integration = create_integration(fetch=fetch)
    """
)


@pytest.fixture
def installed(runtime, write_integration, org_admin, organization):
    def installed_(name: str, scopes: list[str]) -> str:
        root = write_integration(
            minimal_manifest(name=name, script="main.py", scopes=scopes),
            files={"main.py": SCRIPT},
            folder=name,
        )
        integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
        installation = installation_create(
            user=org_admin, integration=integration, organization=organization
        )
        return installation_public_endpoint(installation)

    return installed_


@pytest.mark.slow
def test_integration_code_reads_and_publishes_only_with_the_scopes(
    installed, organization, org_admin
):
    openapi_publish(organization=organization, name="pets", content=PETSTORE_31, actor=org_admin)
    reader = installed("spec-reader", ["openapi:read"])
    assert requests.get(f"{reader}/read", timeout=30).json() == {"title": "Pet store"}
    refused = requests.post(f"{reader}/publish", data=PETSTORE_30, timeout=30)
    assert refused.json() == {"refused": 403}

    writer = installed("spec-writer", ["openapi:read", "openapi:write"])
    published = requests.post(f"{writer}/publish", data=PETSTORE_30, timeout=30)
    assert published.status_code == 201 and published.json() == {"number": 2}
    assert requests.get(f"{writer}/read", timeout=30).json() == {"title": "Pets 3.0"}

    without = installed("spec-none", [])
    assert requests.get(f"{without}/read", timeout=30).json() == {"refused": 403}
    assert OpenApiVersion.objects.count() == 2
