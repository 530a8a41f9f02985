"""No input reaches a 500: every endpoint, every method, odd bodies, as a member and as an
installation token."""

import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import URLResolver, resolve, reverse
from django.utils import timezone

from docplatform.conversations.models import Conversation
from docplatform.documents.comments.models import Comment
from docplatform.events.models import Delivery
from docplatform.gitsync.models import GitSync
from docplatform.services import api_token_create
from docplatform.teams.models import Invitation
from docplatform.urls import api_v1
from integrations.services.installations import installation_create
from tests.api_helpers import api_client
from tests.factories import PageFactory, RevisionFactory, SiteFactory, SpaceFactory
from webhooks.models import Replay

pytestmark = pytest.mark.django_db

ODD_VALUES = [None, 5, -1.5e308, True, "", "x" * 10_000, "\u2028\ufeff", [], [None], {}, {"a": []}]
FIELDS = [
    "integration",
    "configuration",
    "installToken",
    "spaceSelection",
    "selectedSpaces",
    "externalIds",
    "pages",
    "message",
    "visibility",
    "status",
    "url",
    "referrer",
    "pageId",
    "rating",
    "comment",
    "bundle",
    "tracking_id",
    "instance",
    "props",
    "action",
    "name",
    "expiresAt",
    "scopes",
]
BODIES = [
    b"{",
    b"[]",
    b'"text"',
    b"null",
    b"{}",
    *(json.dumps(dict.fromkeys(FIELDS, value)).encode() for value in ODD_VALUES),
    json.dumps({"pages": [{"path": ["a"], "title": {"b": 1}, "body": None}] * 3}).encode(),
]


@pytest.fixture(autouse=True)
def fresh_throttles():
    yield
    cache.clear()


@pytest.fixture
def world(publish, org_admin, org_member, organization):
    space = SpaceFactory(organization=organization)
    revision = RevisionFactory(space=space)
    page = PageFactory(revision=revision)
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    integration = publish(
        org_admin,
        name="tool",
        scopes=["space:content:read", "space:content:write", "space:metadata:write"],
        configurations={
            "account": {
                "properties": {"tracking_id": {"type": "string", "title": "T", "description": "d"}}
            }
        },
    )
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    return {
        "org": organization.subdomain,
        "space_id": space.id,
        "site_id": site.id,
        "revision_id": revision.id,
        "installation_id": installation.id,
        "delivery_id": Delivery.objects.filter(installation=installation).first().id,
        "name": integration.name,
        "number": integration.latest_version.number,
        "page": page,
        "page_path": page.path,
        "token": installation.api_token,
        "property_name": "tracking_id",
        "component_id": "settings",
        "token_id": api_token_create(user=org_member, name="world")[0].pk,
        "username": org_member.username,
        "invitation_id": Invitation.objects.create(
            organization=organization,
            email="erin@example.com",
            role="member",
            token_hash=Invitation.hash_token(Invitation.generate_token()),
            expires_at=timezone.now() + timedelta(days=7),
        ).pk,
        "comment_id": Comment.objects.create(
            space=space, page_path="intro", body="A comment", author=org_member
        ).pk,
        "event_type": "page_feedback",
        "sync_id": GitSync.objects.create(
            space=space, direction="export", url="/srv/git/docs", branch="main"
        ).pk,
        "conversation_id": Conversation.objects.create(
            organization=organization, installation=installation, external_id="t-1", subject="S"
        ).pk,
        "version": "latest",
        "replay_id": Replay.objects.create(
            installation=installation,
            since=timezone.now() - timedelta(hours=1),
            until=timezone.now(),
        ).pk,
    }


def routes(patterns, outer=()):
    """Every route of the API, through the apps' includes, with the names of the values its
    path takes (an include's prefix may take some: an installation's routes)."""
    for pattern in patterns:
        names = (*outer, *pattern.pattern.converters)
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, names)
        else:
            yield pattern, names


def urls(world) -> list[str]:
    result = []
    for pattern, names in routes(api_v1):
        kwargs = {name: world[name] for name in names}
        result.append(reverse(f"api:{pattern.name}", kwargs=kwargs))
    return result


def test_each_route_is_reached_by_its_own_url(world):
    """Django tries the routes in order, and the API's come first among the root's, the
    integrations' first among the API's: no route before one takes its URLs."""
    for pattern, names in routes(api_v1):
        url = reverse(f"api:{pattern.name}", kwargs={name: world[name] for name in names})
        assert resolve(url).url_name == pattern.name, url


@pytest.mark.parametrize("as_installation", [False, True], ids=["member", "installation"])
def test_no_endpoint_answers_500_to_any_body(world, org_member, as_installation):
    client = api_client(token=world["token"]) if as_installation else api_client(org_member)
    client.raise_request_exception = True
    for url in urls(world):
        cache.clear()  # the throttles' counts: each endpoint gets the whole budget
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            if method == "DELETE" and "installations/" in url:
                continue  # deleting works, and would leave the rest nothing to call
            for body in BODIES if method != "GET" else [b""]:
                response = client.generic(method, url, body, content_type="application/json")
                assert response.status_code < 500, (method, url, body[:80], response.content)
                assert response.status_code != 429
                if response.status_code != 204:
                    assert response["Content-Type"] == "application/json", (method, url)
