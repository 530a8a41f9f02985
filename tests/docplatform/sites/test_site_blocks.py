"""Integration blocks on a site's page, rendered by the real runtime host: read-only unless the
block's manifest entry says ``visitors: true``; then visitors press its buttons on the site's
own origin (no session, no CSRF token), as often as ``SITE_BLOCK_PRESS_RATE`` lets an address."""

import json
import shutil

import pytest

from docplatform.revisions import space_content_update
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.docplatform.documents.test_documents_browser import assert_inert
from tests.marketplace.test_page_blocks import EXAMPLE, counter

pytestmark = pytest.mark.slow


@pytest.fixture
def with_counter(runtime, org_admin, organization, site, handbook):
    integration = integration_publish_folder(path=EXAMPLE, publisher=org_admin).version.integration
    installation_create(
        user=org_admin, integration=integration, organization=organization, space=handbook
    )
    space_content_update(
        space=handbook,
        pages=[{"path": "intro", "title": "Intro", "body": f"Count it.\n\n{counter('one')}"}],
    )
    return f"/{site.pk}/{handbook.pk}"


def press(visitor, space_address: str, space_id: str):
    return visitor.post(
        f"{space_address}/-/blocks",
        {
            "page": "intro",
            "key": "one",
            "instance": f"{space_id}-one",
            "press": json.dumps({"action": "increment"}),
        },
        HTTP_X_REQUESTED_WITH="fetch",
    )


def make_counter_for_visitors(tmp_path, publisher) -> None:
    """Publish a version of the counter whose block says ``visitors: true``."""
    folder = tmp_path / "counter"
    shutil.copytree(EXAMPLE, folder)
    manifest = folder / "service-manifest.yaml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace("    title: Counter\n", "    title: Counter\n    visitors: true\n")
    )
    integration_publish_folder(path=folder, publisher=publisher)


def test_a_block_is_read_only_on_the_site_unless_made_for_visitors(
    visitor, with_counter, handbook, tmp_path, org_admin, settings
):
    page = visitor.get(f"{with_counter}/intro").content.decode()
    assert "Count: 0" in page
    assert "<fieldset disabled" in page and "data-block-form" not in page
    assert_inert(page)
    refused = press(visitor, with_counter, handbook.pk)
    assert refused.status_code == 200
    assert "do not work here" in refused.content.decode()

    make_counter_for_visitors(tmp_path, org_admin)
    page = visitor.get(f"{with_counter}/intro").content.decode()
    assert f'<form method="post" action="{with_counter}/-/blocks"' in page
    assert "csrfmiddlewaretoken" not in page
    pressed = press(visitor, with_counter, handbook.pk)
    assert pressed.status_code == 200
    assert "Count: 1" in pressed.content.decode()
    assert set(pressed.cookies) <= {"dp_visitor"}

    settings.SITE_RATES = {**settings.SITE_RATES, "blocks": "3/minute"}  # two pressed already
    assert press(visitor, with_counter, handbook.pk).status_code == 200
    throttled = press(visitor, with_counter, handbook.pk)
    assert throttled.status_code == 429
    assert "Count: 2" in visitor.get(f"{with_counter}/intro").content.decode()


def test_a_press_of_a_block_not_on_the_page_is_a_404(visitor, with_counter, handbook):
    missing = visitor.post(f"{with_counter}/-/blocks", {"page": "intro", "key": "nope"})
    assert missing.status_code == 404
    nowhere = visitor.post(f"{with_counter}/-/blocks", {"page": "no-page", "key": "one"})
    assert nowhere.status_code == 404
