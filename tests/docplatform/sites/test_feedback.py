"""'Was this page helpful?': a visitor's rating of a site's page (with an optional comment) fires
``page_feedback``; one rating per visitor and page; refused input names its field and writes
nothing; the space's admins see the ratings and comments per page, newest first."""

import json

import pytest
from django.conf import settings as django_settings

from docplatform.events.models import Event
from docplatform.sites.models import PageFeedback
from tests.docplatform.documents.test_documents_browser import assert_inert
from tests.factories import MembershipFactory

from .conftest import BROWSER

pytestmark = pytest.mark.django_db


@pytest.fixture
def rate(visitor, site, handbook, sites_host):
    """Rate a page as the page's script does (JSON), after opening it (the visitor's cookie)."""
    visitor.get(f"/{site.pk}/{handbook.pk}/intro")

    def send(body, **headers):
        return visitor.post(
            f"/{site.pk}/{handbook.pk}/-/feedback",
            json.dumps(body),
            content_type="application/json",
            **{"HTTP_ACCEPT": "application/json", "HTTP_ORIGIN": f"http://{sites_host}", **headers},
        )

    return send


def fired() -> list[dict]:
    return [e.payload for e in Event.objects.filter(type="page_feedback").order_by("created_at")]


def test_a_rating_with_a_comment_fires_page_feedback_about_the_page(rate, visitor, site, handbook):
    answer = rate(
        {
            "page": "intro",
            "rating": "bad",
            "comment": "Too short.",
            "referrer": "https://www.example.org/",
        }
    )
    assert answer.status_code == 200
    assert answer.json() == {"page": "intro", "rating": "bad", "comment": "Too short."}
    page = handbook.current_revision.pages.get(path="intro")
    [payload] = fired()
    assert payload == {
        "siteId": site.pk,
        "spaceId": handbook.pk,
        "pageId": page.pk,
        "feedback": {"rating": "bad", "comment": "Too short."},
        "url": f"{django_settings.SITES_URL}/{site.pk}/{handbook.pk}/intro",
        "referrer": "https://www.example.org/",
        "visitor": {
            "anonymousId": visitor.cookies["dp_visitor"].value,
            "userAgent": BROWSER["HTTP_USER_AGENT"],
            "ip": BROWSER["REMOTE_ADDR"],
            "cookies": {},
        },
    }
    row = PageFeedback.objects.get()
    assert (row.site, row.space, row.page_path, row.page) == (site, handbook, "intro", page)


def test_a_second_rating_changes_the_first_and_fires_again(rate):
    assert rate({"page": "intro", "rating": "bad", "comment": "Too short."}).status_code == 200
    assert rate({"page": "intro", "rating": "good"}).status_code == 200
    row = PageFeedback.objects.get()
    assert (row.rating, row.comment) == ("good", "")
    assert [payload["feedback"] for payload in fired()] == [
        {"rating": "bad", "comment": "Too short."},
        {"rating": "good", "comment": ""},
    ]
    assert rate({"page": "guide", "rating": "ok"}).status_code == 200
    assert PageFeedback.objects.count() == 2


def test_without_a_script_the_form_posts_and_goes_back_to_the_page(visitor, site, handbook):
    visitor.get(f"/{site.pk}/{handbook.pk}/guide/install")
    sent = visitor.post(
        f"/{site.pk}/{handbook.pk}/-/feedback",
        {"page": "guide/install", "rating": "ok", "comment": "Fine."},
    )
    assert sent.status_code == 303
    assert sent["Location"] == f"/{site.pk}/{handbook.pk}/guide/install?feedback=ok#feedback"
    back = visitor.get(sent["Location"])
    assert "Thank you: your rating was recorded." in back.content.decode()
    assert [payload["feedback"] for payload in fired()] == [{"rating": "ok", "comment": "Fine."}]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"page": "intro", "rating": "good", "comment": "x" * 1001}, "comment"),
        ({"page": "intro", "rating": "great"}, "rating"),
        ({"page": "intro"}, "rating"),
        ({"page": "intro", "rating": "ok", "comment": ["a list"]}, "comment"),
        ({"page": "intro", "rating": "ok", "comment": "nul \x00"}, "comment"),
        ({"page": "no-such-page", "rating": "ok"}, "page"),
        ({"page": "../../x\x00", "rating": "ok"}, "page"),
        ({"rating": "ok"}, "page"),
        ({"page": "intro", "rating": "ok", "referrer": "javascript:alert(1)"}, "referrer"),
        ([1, 2], "body"),
    ],
)
def test_bad_feedback_is_refused_naming_the_field_and_nothing_is_written(rate, body, field):
    answer = rate(body)
    assert answer.status_code == 400
    assert list(answer.json()["errors"]) == [field]
    assert not PageFeedback.objects.exists()
    assert not fired()


def test_a_comment_of_exactly_1000_characters_is_kept(rate):
    assert rate({"page": "intro", "rating": "ok", "comment": "é" * 1000}).status_code == 200
    assert len(PageFeedback.objects.get().comment) == 1000


def test_a_form_refused_says_why_on_a_page(visitor, site, handbook):
    refused = visitor.post(
        f"/{site.pk}/{handbook.pk}/-/feedback",
        {"page": "intro", "rating": "good", "comment": "<script>x</script>" + "y" * 1000},
    )
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "comment: at most 1,000 characters (1,018 given)" in html
    assert f'href="/{site.pk}/{handbook.pk}/"' in html
    assert_inert(html)


def test_json_that_is_not_json_is_a_400(visitor, site, handbook):
    answer = visitor.post(
        f"/{site.pk}/{handbook.pk}/-/feedback", "{nope", content_type="application/json"
    )
    assert answer.status_code == 400
    assert list(answer.json()["errors"]) == ["body"]


def test_feedback_is_rate_limited_per_address(rate, settings):
    settings.SITE_RATES = {**settings.SITE_RATES, "feedback": "3/minute"}
    sent = [rate({"page": "intro", "rating": "ok"}).status_code for _ in range(3)]
    assert sent == [200, 200, 200]
    refused = rate({"page": "intro", "rating": "bad"})
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 60
    assert "too many requests from your address" in refused.json()["errors"]["rate"][0]
    assert PageFeedback.objects.get().rating == "ok"
    assert len(fired()) == 3
    elsewhere = rate({"page": "intro", "rating": "bad"}, REMOTE_ADDR="198.51.100.200")
    assert elsewhere.status_code == 200


@pytest.mark.slow
def test_a_form_sent_from_another_site_is_refused(rate):
    answer = rate({"page": "intro", "rating": "bad"}, HTTP_ORIGIN="https://evil.example")
    assert answer.status_code == 403
    assert list(answer.json()["errors"]) == ["origin"]
    assert not fired()


def test_admins_see_the_ratings_and_comments_per_page_newest_first(
    rate, client, org_admin, organization, site, handbook
):
    rate({"page": "intro", "rating": "bad", "comment": "<script>alert(1)</script>Too short."})
    rate({"page": "guide", "rating": "good", "comment": "Line one\nline two"})
    client.force_login(org_admin)
    settings_page = client.get(f"/s/{handbook.pk}/settings")
    assert settings_page.status_code == 200
    html = settings_page.content.decode()
    assert "Visitors' feedback" in html
    assert html.index('data-feedback-page="guide"') < html.index('data-feedback-page="intro"')
    assert "&lt;script&gt;alert(1)&lt;/script&gt;Too short." in html
    assert "Line one<br>line two" in html
    assert '<span class="tag feedback-bad">Bad: 1</span>' in html
    assert '<span class="tag feedback-good">Good: 0</span>' in html  # on the intro page
    assert f'href="{django_settings.SITES_URL}/{site.pk}/{handbook.pk}/">Acme docs</a>' in html
    assert_inert(html)

    member = MembershipFactory(organization=organization, role="member").user
    client.force_login(member)
    assert client.get(f"/s/{handbook.pk}/settings").status_code == 403
