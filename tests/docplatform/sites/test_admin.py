"""What operators see of sites in the admin: each site's published address, the visitors'
ratings and the Git syncs, read only."""

import pytest

from docplatform.gitsync.models import GitSync
from docplatform.models import Revision, Site
from docplatform.sites.models import PageFeedback
from tests.factories import OrganizationFactory, SpaceFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


@pytest.mark.slow
def test_a_sites_published_address_feedback_and_syncs_in_the_admin(operator, settings):
    settings.SITES_URL = "https://docs.example.net"
    space = SpaceFactory(organization=OrganizationFactory(subdomain="acme"))
    site = Site.objects.create(organization=space.organization, title="Acme docs")
    site.spaces.add(space)
    PageFeedback.objects.create(
        site=site, space=space, page_path="intro", visitor="anon:x", rating="bad",
        comment="<b>unclear</b>",
    )  # fmt: skip
    sync = GitSync.objects.create(
        space=space, direction="export", status="failed", url="/srv/git/docs", branch="main",
        reason="the repository is unreachable",
    )  # fmt: skip

    sites = operator.get("/admin/docplatform/site/").content.decode()
    assert f'href="https://docs.example.net/{site.pk}/"' in sites
    feedback = operator.get("/admin/docplatform/pagefeedback/").content.decode()
    assert "&lt;b&gt;unclear&lt;/b&gt;" in feedback and "<b>unclear</b>" not in feedback
    assert operator.get("/admin/docplatform/pagefeedback/add/").status_code == 403
    syncs = operator.get("/admin/docplatform/gitsync/").content.decode()
    assert "the repository is unreachable" in syncs
    assert operator.post(f"/admin/docplatform/gitsync/{sync.pk}/change/", {}).status_code == 403
    assert Revision.objects.count() == 0
