"""Calling the REST API in tests: clients, the error shape, and publishing integrations."""

import yaml
from rest_framework.test import APIClient

from docplatform.events.models import Delivery, Event
from docplatform.models import Page, Revision
from integrations.models import Installation, Integration, IntegrationVersion
from integrations.services import integration_publish_folder
from tests.integrations.conftest import minimal_manifest, with_code

API = "/api/v1"
NOT_FOUND = {
    "type": "client_error",
    "errors": [{"code": "not_found", "detail": "Not found.", "attr": None}],
}


def api_client(user=None, *, token: str | None = None) -> APIClient:
    """A JSON client: signed in as ``user`` (session), or presenting ``token``, or anonymous."""
    client = APIClient()
    client.default_format = "json"
    if user is not None:
        client.force_login(user)
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def error_attrs(response) -> list:
    body = response.json()
    assert body["type"] == "validation_error", body
    return sorted(error["attr"] for error in body["errors"])


def row_counts() -> dict:
    models = (Installation, Event, Delivery, Revision, Page, Integration, IntegrationVersion)
    return {model.__name__: model.objects.count() for model in models}


def publish_integration(folder, publisher, **manifest_fields) -> Integration:
    """Publish through the publish service from ``folder`` (a tmp_path subfolder)."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest, files = with_code(minimal_manifest(**manifest_fields))
    (folder / "service-manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    for name, content in files.items():
        (folder / name).write_text(content)
    return integration_publish_folder(path=folder, publisher=publisher).version.integration
