import io

import pytest
from PIL import Image


def png_bytes(width: int = 64, height: int = 64) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def minimal_manifest(**overrides) -> dict:
    manifest = {
        "name": "hello",
        "title": "Hello",
        "description": "Says hello.",
        "organization": "acme",
        "visibility": "public",
        "scopes": ["space:content:read"],
    }
    manifest.update(overrides)
    return {key: value for key, value in manifest.items() if value is not None}


def with_code(manifest: dict) -> tuple[dict, dict[str, str]]:
    """``manifest`` and the files to publish with it. A manifest that needs code (a block or a
    configuration component, a button or a completion URL) and names no script gets one that
    has it: publish loads the code and refuses such a manifest without it."""
    if not isinstance(manifest, dict) or "script" in manifest:
        return manifest, {}
    configurations = manifest.get("configurations")
    levels = [c for c in (configurations or {}).values() if isinstance(c, dict)]
    if not isinstance(configurations, dict):
        levels = []
    components = [block["id"] for block in manifest.get("blocks") or () if "id" in block]
    components += [level["componentId"] for level in levels if "componentId" in level]
    properties = [p for level in levels for p in (level.get("properties") or {}).values()]
    paths = any("completion_url" in p or "callback_url" in p for p in properties)
    if not components and not paths:
        return manifest, {}
    script = (
        "from docplatform_sdk import Response, block, create_component, create_integration\n\n"
        "integration = create_integration(\n"
        "    fetch=lambda request, context: Response.json({}),\n"
        "    components=[\n"
        "        create_component(name, render=lambda element, context: block())\n"
        f"        for name in {components!r}\n"
        "    ],\n"
        ")\n"
    )
    return {**manifest, "script": "main.py"}, {"main.py": script}


@pytest.fixture
def world(organization, webhook_settings, receiver):
    """Every door's world: people of each role, installations, deliveries (doors.py)."""
    from tests.integrations.doors import world_make

    return world_make(organization, webhook_settings, receiver)


@pytest.fixture
def publish(write_integration):
    """Publish an integration through the real publish service; returns the Integration.

    ``publisher`` must be an admin of the manifest's organization.
    """
    from integrations.services import integration_publish_folder

    def publish_(publisher, folder=None, approved=False, **manifest_fields):
        """``approved``: then an operator approves the public listing (``listing_approve``)."""
        name = manifest_fields.get("name", "hello")
        manifest, files = with_code(minimal_manifest(**manifest_fields))
        root = write_integration(manifest, files, folder=folder or name)
        integration = integration_publish_folder(path=root, publisher=publisher).version.integration
        return listing_approve(integration) if approved else integration

    return publish_


def listing_approve(integration):
    """An operator approves the public version of ``integration`` waiting for review (the
    review service, as the admin's action, the command and the API do); returns it."""
    from integrations.operators import OPERATOR
    from integrations.services.reviews import listing_review_decide, pending_review_of

    review = pending_review_of(integration)
    assert review is not None, f"no version of {integration.name} waits for review"
    listing_review_decide(user=OPERATOR, review=review, decision="approve")
    integration.refresh_from_db()
    return integration
