"""A published site's pages on its own origin (SITES_URL): what anonymous visitors may read and
find, the 404s, and that nothing of the platform (its cookies, its session, its pages) is there."""

import pytest
from django.test import Client

from docplatform.markdown import block_fence
from docplatform.revisions import space_content_update
from tests.docplatform.documents.test_documents_browser import HOSTILE_MARKDOWN, assert_inert
from tests.factories import SiteFactory, SpaceFactory

from .conftest import HANDBOOK

pytestmark = pytest.mark.django_db


def text_of(response) -> str:
    return response.content.decode()


def test_the_site_lists_its_public_spaces_and_opens_their_pages(visitor, site, handbook):
    home = visitor.get(f"/{site.pk}/")
    assert home.status_code == 200
    html = text_of(home)
    assert "<title>Home · Acme docs</title>" in html
    assert f'href="/{site.pk}/{handbook.pk}/">Handbook</a>' in html
    assert "Unlisted notes" not in html and "Internal" not in html

    first = visitor.get(f"/{site.pk}/{handbook.pk}/")
    assert first.status_code == 200
    assert '<h1 class="doc-title">Introduction</h1>' in text_of(first)

    page = text_of(visitor.get(f"/{site.pk}/{handbook.pk}/guide/install"))
    assert '<h1 class="doc-title">Install</h1>' in page
    assert "<p>Run the installer.</p>" in page
    # The site's navigation, its pager and the feedback form; nothing of the platform.
    nav = f'href="/{site.pk}/{handbook.pk}/guide/install" aria-current="page">Install</a>'
    assert nav in page
    assert f'class="doc-pager-prev" href="/{site.pk}/{handbook.pk}/guide"' in page
    assert "Was this page helpful?" in page
    assert f'action="/{site.pk}/{handbook.pk}/-/feedback"' in page
    canonical = f"http://127.0.0.2:8000/{site.pk}/{handbook.pk}/guide/install"
    assert f'<link rel="canonical" href="{canonical}">' in page
    for platform in ("/marketplace/", "Sign in", "/s/", "Edit", "History", "csrfmiddlewaretoken"):
        assert platform not in page, platform


def test_an_unlisted_space_opens_by_its_address_only(visitor, site, unlisted):
    page = visitor.get(f"/{site.pk}/{unlisted.pk}/notes")
    assert page.status_code == 200
    assert "Secret handshake." in text_of(page)
    assert "Release notes" not in text_of(visitor.get(f"/{site.pk}/"))
    assert "Release notes" not in text_of(visitor.get(f"/{site.pk}/search", {"q": "handshake"}))


@pytest.mark.parametrize(
    "address",
    [
        "/{site}/{private}/",
        "/{site}/{private}/plans",
        "/{site}/{elsewhere}/",
        "/{site}/{handbook}/no/such/page",
        "/{site}/{handbook}/intro/edit",
        "/nosuchsite/",
        "/nosuchsite/{handbook}/intro",
        "/{other_site}/{handbook}/intro",
        "/",
        "/marketplace/",
        "/admin/",
        "/api/v1/orgs/",
        "/s/{handbook}/intro",
    ],
)
def test_what_a_visitor_may_not_read_is_the_sites_404(
    visitor, organization, site, handbook, private, address
):
    names = {
        "site": site.pk,
        "handbook": handbook.pk,
        "private": private.pk,
        "elsewhere": SpaceFactory(organization=organization, visibility="public").pk,
        "other_site": SiteFactory(organization=organization).pk,
    }
    response = visitor.get(address.format(**names))
    assert response.status_code == 404
    html = text_of(response)
    assert "Page not found" in html
    assert "Internal roadmap" not in html and "Sign in" not in html
    assert response["Content-Security-Policy"]


def test_a_posted_form_to_a_private_space_is_a_404_too(visitor, site, private):
    for action in ("feedback", "blocks"):
        refused = visitor.post(f"/{site.pk}/{private.pk}/-/{action}", {"page": "plans"})
        assert refused.status_code == 404


def test_the_sites_pages_are_not_on_the_platforms_host(client, site, handbook):
    assert client.get(f"/{site.pk}/{handbook.pk}/intro").status_code == 404


def test_search_finds_the_current_pages_of_the_listed_spaces(
    visitor, site, handbook, private, unlisted
):
    space_content_update(
        space=handbook,
        pages=[
            *HANDBOOK,
            {"path": "faq", "title": "Questions", "body": "Where is the lighthouse?"},
        ],
    )
    found = visitor.get(f"/{site.pk}/search", {"q": "lighthouse"})
    assert found.status_code == 200
    html = text_of(found)
    assert "1 page found for “lighthouse”." in html
    assert f'href="/{site.pk}/{handbook.pk}/faq">Questions</a>' in html
    assert "<mark>lighthouse</mark>" in html

    titles = text_of(visitor.get(f"/{site.pk}/search", {"q": "install"}))
    assert f'href="/{site.pk}/{handbook.pk}/guide/install">Install</a>' in titles
    assert "2 pages found" in titles  # "Installing takes a minute." on the introduction too

    assert "No page holds “roadmap”." in text_of(visitor.get(f"/{site.pk}/search?q=roadmap"))
    space_content_update(space=handbook, pages=HANDBOOK)  # the lighthouse page is removed
    assert "No page holds" in text_of(visitor.get(f"/{site.pk}/search?q=lighthouse"))
    assert "Type words" in text_of(visitor.get(f"/{site.pk}/search"))


def test_search_never_finds_a_page_by_its_blocks_fence(visitor, site, handbook):
    fence = block_fence(
        integration="weather", block="forecast", key="k1", props={"city": "Zanzibar"}
    )
    pages = [*HANDBOOK, {"path": "trips", "title": "Trips", "body": f"Pack light.\n\n{fence}"}]
    space_content_update(space=handbook, pages=pages)
    assert "No page holds “zanzibar”." in text_of(visitor.get(f"/{site.pk}/search?q=zanzibar"))
    assert "No page holds" in text_of(visitor.get(f"/{site.pk}/search?q=forecast"))
    found = text_of(visitor.get(f"/{site.pk}/search?q=pack"))
    assert f'href="/{site.pk}/{handbook.pk}/trips">Trips</a>' in found


def test_a_search_too_long_is_refused_naming_q(visitor, site):
    response = visitor.get(f"/{site.pk}/search", {"q": "word " * 50})
    assert response.status_code == 400
    assert "The search (q) must be at most 200 characters." in text_of(response)


@pytest.mark.slow
def test_no_platform_cookie_is_set_or_read_on_the_sites_origin(
    visitor, site, handbook, org_admin, sites_host
):
    member = Client()
    member.force_login(org_admin)
    session = member.cookies["sessionid"].value
    visitor.cookies["sessionid"] = session  # as if the browser sent the platform's cookie
    visitor.cookies["csrftoken"] = "platform-csrf"
    pages = [f"/{site.pk}/", f"/{site.pk}/{handbook.pk}/intro", f"/{site.pk}/search?q=guide"]
    for address in pages:
        response = visitor.get(address)
        assert response.status_code == 200
        assert set(response.cookies) <= {"dp_visitor"}, address
        assert org_admin.username not in text_of(response)
        assert "Sign out" not in text_of(response)
    feedback = visitor.post(
        f"/{site.pk}/{handbook.pk}/-/feedback",
        {"page": "intro", "rating": "good"},
        HTTP_ORIGIN=f"http://{sites_host}",
    )
    assert feedback.status_code == 303  # no CSRF token: there is no session to ride on
    assert set(feedback.cookies) <= {"dp_visitor"}
    # The platform still knows the member.
    assert member.get("/s/").status_code == 200


def test_the_sites_origin_has_its_own_security_headers_and_static_files(visitor, site, handbook):
    page = visitor.get(f"/{site.pk}/{handbook.pk}/intro")
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "img-src 'self' https:" in policy
    assert page["X-Frame-Options"] == "DENY"
    assert page["X-Content-Type-Options"] == "nosniff"
    script = visitor.get("/static/sites/feedback.js")
    assert script.status_code == 200
    assert b"data-feedback-form" in b"".join(script.streaming_content)


def test_a_missing_slash_is_added(visitor, site):
    response = visitor.get(f"/{site.pk}")
    assert response.status_code == 301
    assert response["Location"] == f"/{site.pk}/"


def test_hostile_content_stays_inert_on_the_site(visitor, site, handbook):
    fence = block_fence(integration="evil-blocks", block="evil", key="evil1", props={})
    space_content_update(
        space=handbook,
        pages=[
            {
                "path": "intro",
                "title": "<b onmouseover=x>Intro</b><script>window.__pwned=1</script>",
                "body": HOSTILE_MARKDOWN + "\n" + fence,
            }
        ],
    )
    handbook.title = "<img src=x onerror=window.__pwned=1>"
    handbook.save()
    site.title = "<script>window.__pwned=1</script>"
    site.save()
    for address in (
        f"/{site.pk}/",
        f"/{site.pk}/{handbook.pk}/intro",
        f"/{site.pk}/search?q=hostile",
        f"/{site.pk}/search?q=<script>alert(1)</script>",
        f"/{site.pk}/{handbook.pk}/nothing-here",
    ):
        html = text_of(visitor.get(address))
        assert_inert(html)
    page = text_of(visitor.get(f"/{site.pk}/{handbook.pk}/intro"))
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page  # shown as text
    assert "is not installed on this space" in page  # the block's box, not a broken page
