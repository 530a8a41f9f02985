"""A space of 10,000 pages (the default SPACE_MAX_PAGES) is written in one API request, read in
the reader and on its site, searched, synced to Git and back, and restored."""

import json

import pytest

from docplatform.documents.services import page_save, revision_restore
from docplatform.models import Page, Site
from docplatform.page_versions import page_dicts
from docplatform.sites.selectors import site_search
from tests.api_helpers import API, api_client
from tests.docplatform.gitsync.conftest import git

SIZE = 10_000

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec(org_admin):
    return {"visibility": "public", "revision": False}


def _pages(word: str) -> list[dict]:
    return [
        {
            "path": f"section-{n // 100:03d}/page-{n % 100:03d}",
            "title": f"Page {n}",
            "body": f"# Page {n}\n\nThe {word} of page {n}. " + "Lorem ipsum dolor sit amet. " * 30,
        }
        for n in range(SIZE)
    ]


@pytest.mark.slow
def test_a_space_of_ten_thousand_pages(settings, org_admin, space, connected, remote, run_sync):
    assert settings.SPACE_MAX_PAGES == SIZE
    admin = api_client(org_admin)
    payload = json.dumps({"message": "Everything", "pages": _pages("walrus")})
    assert len(payload) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    written = admin.post(
        f"{API}/spaces/{space.pk}/revisions/", payload, content_type="application/json"
    )
    assert written.status_code == 201, written.json()
    space.refresh_from_db()
    first = space.current_revision
    assert first.page_count == SIZE

    # read: in the reader, through the API, on the site
    reader = api_client(org_admin)
    page = reader.get(f"/s/{space.pk}/section-042/page-017")
    assert page.status_code == 200 and "The walrus of page 4217." in page.content.decode()
    assert reader.get(f"{API}/spaces/{space.pk}/pages/section-099/page-099").status_code == 200
    site = Site.objects.create(organization=space.organization, title="Docs", published=True)
    site.spaces.add(space)
    hits = site_search(site, "4217")
    assert [hit.page.path for hit in hits][:1] == ["section-042/page-017"]

    # a one-page save writes one row
    rows = Page.objects.filter(space=space).count()
    page_save(
        space=space,
        path="section-000/page-001",
        title="Page 1",
        body="Rewritten.\n",
        author=org_admin,
        based_on=first.pk,
    )
    assert Page.objects.filter(space=space).count() == rows + 1

    # synced to Git: every page a file of the branch
    sync = run_sync(space)
    assert sync.status == "success", sync.reason
    files = git("--git-dir", remote, "ls-tree", "-r", "--name-only", "main").split()
    assert len(files) == SIZE

    # restored: the first revision again, as it was
    restored = revision_restore(space=space, revision=first, author=org_admin)
    assert page_dicts(restored) == page_dicts(first)
    assert Page.objects.filter(space=space).count() == rows + 2
