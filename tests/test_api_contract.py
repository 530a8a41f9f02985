"""The API contract holds: schemathesis generates requests from ``/api/schema/`` for every
operation, valid ones and ones that break the schema, sends them with a personal token, and
checks that no answer is a server error or differs from what the schema declares (status,
content type, body), and that what breaks the schema is refused.

A bounded run (``API_CONTRACT_EXAMPLES`` examples per operation and mode, 10 by default)
keeps it within the normal test run; the README says how to run it longer.
"""

import os

import pytest
import schemathesis
from django.core import signals
from django.core.cache import cache
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis import checks as contract

from docplatform.events.models import Delivery
from docplatform.services import api_token_create
from integrations.services.installations import installation_create
from tests.api_helpers import publish_integration
from tests.factories import PageFactory, RevisionFactory, SiteFactory, SpaceFactory

EXAMPLES = int(os.environ.get("API_CONTRACT_EXAMPLES", "10"))
SCHEMA = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]
#: What every answer must satisfy, and what an answer to a request that breaks the schema
#: must also satisfy (it is refused with a 4xx).
CHECKS = [
    contract.not_a_server_error,
    contract.status_code_conformance,
    contract.content_type_conformance,
    contract.response_schema_conformance,
]
NEGATIVE_CHECKS = [*CHECKS, contract.negative_data_rejection]
#: Operations only an installation token may call: they run with one.
INSTALLATION_ONLY = "/api/v1/installation/"
#: Operations a person may not call and an installation with a scope may: they run with one.
INSTALLATION_OPERATIONS = {("POST", "/api/v1/orgs/{org}/conversations/")}

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def connections_kept_open():
    """The WSGI app closes the database connection after each request, as a server should;
    the test's transaction needs it kept (Django's test client does the same)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(tmp_path, org_admin, organization):
    """acme's objects, so generated requests reach real rows as well as missing ones."""
    space = SpaceFactory(organization=organization)
    revision = RevisionFactory(space=space)
    PageFactory(revision=revision)
    space.current_revision = revision
    space.save()
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    integration = publish_integration(
        tmp_path / "tool",
        org_admin,
        name="tool",
        scopes=[
            "space:content:read",
            "space:metadata:read",
            "site:metadata:read",
            "conversations:ingest",
        ],
        configurations={
            "account": {
                "properties": {"tracking_id": {"type": "string", "title": "T", "description": "d"}}
            }
        },
    )
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    delivery = Delivery.objects.filter(installation=installation).first()
    _, personal_token = api_token_create(user=org_admin, name="contract")
    return {
        "path": {
            "org": organization.subdomain,
            "space_id": space.pk,
            "site_id": site.pk,
            "revision_id": revision.pk,
            "installation_id": installation.pk,
            "delivery_id": delivery.pk if delivery else 1,
            "name": integration.name,
            "property_name": "tracking_id",
            "component_id": "settings",
        },
        "personal_token": personal_token,
        "installation_token": installation.api_token,
    }


def cases(operation, mode: GenerationMode, known: dict):
    """Requests for ``operation``: with the path naming acme's objects, or anything."""
    names = {parameter.name for parameter in operation.path_parameters}
    fixed = {name: value for name, value in known.items() if name in names}
    if not fixed:
        return operation.as_strategy(generation_mode=mode)
    return st.one_of(
        operation.as_strategy(generation_mode=mode, path_parameters=fixed),
        operation.as_strategy(generation_mode=mode),
    )


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.label)
def test_the_api_keeps_its_contract(operation, mode, world):
    token = world["personal_token"]
    if (
        operation.path.startswith(INSTALLATION_ONLY)
        or (operation.method.upper(), operation.path) in INSTALLATION_OPERATIONS
    ):
        token = world["installation_token"]
    headers = {"Authorization": f"Bearer {token}"}
    checks = NEGATIVE_CHECKS if mode is GenerationMode.NEGATIVE else CHECKS

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases(operation, mode, world["path"]))
    def run(case):
        cache.clear()  # the API throttles count per minute: every example gets the budget
        case.call_and_validate(headers=headers, checks=checks)

    run()
