"""The built-in webhook integration is published from the platform's own folder at every
start (after migrate): unchanged, nothing happens; deployed back to an older release's
manifest, that version is released again rather than start-up refused."""

import shutil

import pytest
from django.contrib.auth import get_user_model

from integrations.models import Integration
from integrations.services import integration_publish_folder
from webhooks.rules import WEBHOOK_INTEGRATION
from webhooks.services.publication import (
    MANIFEST_FOLDER,
    PLATFORM_PUBLISHER,
    webhook_integration_publish,
)

pytestmark = pytest.mark.django_db


def released_number() -> int:
    return Integration.objects.get(name=WEBHOOK_INTEGRATION).released_version.number


def test_a_deploy_back_to_an_older_manifest_releases_that_version_again(tmp_path):
    first = released_number()
    webhook_integration_publish()
    assert released_number() == first  # unchanged: no new version

    newer = tmp_path / "integration"
    shutil.copytree(MANIFEST_FOLDER, newer)
    manifest = newer / "service-manifest.yaml"
    manifest.write_text(manifest.read_text().replace("description: ", "description: New. ", 1))
    publisher = get_user_model().objects.get(username=PLATFORM_PUBLISHER)
    newer_version = integration_publish_folder(path=newer, publisher=publisher, env={}).version
    assert released_number() == newer_version.number != first

    webhook_integration_publish()  # the platform's folder holds the first version's manifest
    assert released_number() == first
