"""An organization's Sites page (``/orgs/<subdomain>/sites/``): every member sees its sites,
its admins create them with their spaces in order, publish and unpublish them and delete them
after typing the title; members and readers are refused with nothing written."""

import pytest

from docplatform.audit.models import AuditEntry
from docplatform.models import Site
from docplatform.sites.models import SiteSpace
from tests.factories import MembershipFactory, SpaceFactory

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


@pytest.fixture
def admin(client, org_admin):
    client.force_login(org_admin)
    return client


@pytest.fixture
def reader(organization):
    return MembershipFactory(organization=organization, role="reader").user


def test_the_top_bar_leads_to_the_sites_and_every_member_reads_them(client, site, handbook, reader):
    client.force_login(reader)
    page = text(client.get("/orgs/acme/sites/"))
    assert 'href="/orgs/acme/sites/" aria-current="page">Sites</a>' in page
    assert "Acme docs" in page
    assert f'href="http://127.0.0.2:8000/{site.pk}/"' in page
    assert "Private: not shown" in page  # the site lists a private space
    for admin_only in ("New site", "Unpublish", "Delete", f"/orgs/acme/sites/{site.pk}/"):
        assert admin_only not in page


def test_an_admin_creates_a_site_with_its_spaces_in_the_order_given(
    admin, organization, handbook, unlisted, visitor
):
    runbooks = SpaceFactory(organization=organization, title="Runbooks", visibility="public")
    form = text(admin.get("/orgs/acme/sites/new/"))
    assert f'name="position-{runbooks.pk}"' in form
    created = admin.post(
        "/orgs/acme/sites/new/",
        {
            "title": "Help center",
            "spaces": [handbook.pk, runbooks.pk, unlisted.pk],
            f"position-{handbook.pk}": "2",
            f"position-{runbooks.pk}": "1",
            f"position-{unlisted.pk}": "",  # no position: last
            "published": "on",
        },
    )
    assert created.status_code == 302
    site = Site.objects.get(title="Help center")
    assert site.published
    assert list(SiteSpace.objects.filter(site=site).values_list("space_id", flat=True)) == [
        runbooks.pk,
        handbook.pk,
        unlisted.pk,
    ]
    home = text(visitor.get(f"/{site.pk}/"))
    assert home.index("Runbooks") < home.index("Handbook")
    assert [row.action for row in AuditEntry.objects.all()] == ["site.created"]


def test_a_refused_site_is_shown_with_its_error(admin, handbook):
    response = admin.post("/orgs/acme/sites/new/", {"title": "", "spaces": [handbook.pk]})
    assert response.status_code == 400
    assert 'id="title-errors"' in text(response)
    assert f'value="{handbook.pk}" checked' in text(response)  # the choices are kept
    assert not Site.objects.exists()


def test_an_admin_reorders_unpublishes_and_publishes_a_site(admin, site, handbook, unlisted):
    edited = admin.post(
        f"/orgs/acme/sites/{site.pk}/",
        {
            "title": "Acme help",
            "spaces": [handbook.pk, unlisted.pk],
            f"position-{handbook.pk}": "2",
            f"position-{unlisted.pk}": "1",
        },
    )
    assert edited.status_code == 302
    site.refresh_from_db()
    assert site.title == "Acme help"
    assert list(site.placements.values_list("space_id", flat=True)) == [unlisted.pk, handbook.pk]

    admin.post(f"/orgs/acme/sites/{site.pk}/publish/", {})
    site.refresh_from_db()
    assert not site.published
    assert "Not published" in text(admin.get("/orgs/acme/sites/"))
    admin.post(f"/orgs/acme/sites/{site.pk}/publish/", {"published": "on"})
    site.refresh_from_db()
    assert site.published
    assert [row.action for row in AuditEntry.objects.order_by("id")] == [
        "site.changed",
        "site.unpublished",
        "site.published",
    ]


def test_an_admin_deletes_a_site_after_typing_its_title(admin, site):
    confirm = text(admin.get(f"/orgs/acme/sites/{site.pk}/delete/"))
    assert "Type <strong>Acme docs</strong> to confirm" in confirm
    assert admin.post(f"/orgs/acme/sites/{site.pk}/delete/", {"confirm": "acme"}).status_code == 400
    assert Site.objects.filter(pk=site.pk).exists()
    deleted = admin.post(f"/orgs/acme/sites/{site.pk}/delete/", {"confirm": "Acme docs"})
    assert deleted["Location"] == "/orgs/acme/sites/"
    assert not Site.objects.exists()
    assert AuditEntry.objects.get().action == "site.deleted"


@pytest.mark.parametrize("role", ["member", "reader"])
@pytest.mark.parametrize(
    ("address", "data"),
    [
        ("/orgs/acme/sites/new/", {"title": "Mine", "published": "on"}),
        ("/orgs/acme/sites/{site}/", {"title": "Mine"}),
        ("/orgs/acme/sites/{site}/publish/", {}),
        ("/orgs/acme/sites/{site}/delete/", {"confirm": "Acme docs"}),
    ],
)
def test_members_and_readers_change_no_site(client, organization, site, role, address, data):
    client.force_login(MembershipFactory(organization=organization, role=role).user)
    response = client.post(address.format(site=site.pk), data)
    assert response.status_code == 403
    assert "admins" in text(response)
    site.refresh_from_db()
    assert (site.title, site.published, Site.objects.count()) == ("Acme docs", True, 1)
    assert not AuditEntry.objects.exists()


def test_another_organizations_site_is_not_found(admin, site):
    other = Site.objects.create(
        organization=MembershipFactory().organization, title="Theirs", published=True
    )
    for address in ("", "publish/", "delete/"):
        assert admin.post(f"/orgs/acme/sites/{other.pk}/{address}", {}).status_code == 404
    other.refresh_from_db()
    assert other.published
    assert not AuditEntry.objects.exists()
