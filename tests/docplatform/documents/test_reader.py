"""The reader, the editor's saves, the history and the space settings, through the pages a
person uses (the Django test client); browser tests are in ``test_documents_browser``."""

import pytest
from django.test import Client

from docplatform.events.models import Event
from docplatform.models import Membership, Space
from tests.factories import MembershipFactory, OrganizationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec(org_admin):
    return {
        "title": "Handbook",
        "pages": [
            {"path": "intro", "title": "Intro", "body": "# Welcome\n\nHello *world*.\n"},
            {"path": "guide", "title": "Guide", "body": "Read **this**."},
            {"path": "guide/install", "title": "Install", "body": "Run it."},
        ],
        "author": org_admin,
    }


def signed_in(client, user):
    client.force_login(user)
    return client


def test_a_member_reads_the_first_page_with_its_navigation(client, space, org_member):
    response = signed_in(client, org_member).get(f"/s/{space.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<em>world</em>" in html
    assert f'href="/s/{space.pk}/guide/install"' in html
    assert 'aria-label="Previous and next pages"' in html


def test_opening_the_reader_fires_one_space_view_per_visitor_and_five_minutes(
    client, space, org_member
):
    signed_in(client, org_member)
    client.get(f"/s/{space.pk}/")
    client.get(f"/s/{space.pk}/guide")
    views = Event.objects.filter(type="space_view")
    assert views.count() == 1
    assert views.get().payload["visitor"]["userId"] == str(org_member.pk)


def test_a_private_space_is_unknown_to_another_organization(client, space):
    outsider = MembershipFactory(organization=OrganizationFactory(subdomain="globex")).user
    signed_in(client, outsider)
    for address in ["", "intro", "intro/edit", "history", "settings", "new"]:
        assert client.get(f"/s/{space.pk}/{address}").status_code == 404, address


def test_saving_in_the_editor_makes_a_revision_and_fires_content_updated(client, space, org_member):
    signed_in(client, org_member)
    base = space.current_revision_id
    response = client.post(
        f"/s/{space.pk}/intro/edit",
        {"title": "Intro", "path": "intro", "body": "Changed.", "message": "m", "based_on": base},
    )
    assert response.status_code == 302
    space.refresh_from_db()
    assert space.current_revision_id != base
    assert Event.objects.filter(type="space_content_updated").count() == 2


def test_a_stale_save_of_a_changed_page_shows_the_conflict_and_writes_nothing(
    client, space, org_member, org_admin
):
    base = space.current_revision_id
    signed_in(client, org_admin).post(
        f"/s/{space.pk}/intro/edit",
        {"title": "Intro", "path": "intro", "body": "Theirs.", "based_on": base},
    )
    space.refresh_from_db()
    theirs = space.current_revision_id
    response = signed_in(client, org_member).post(
        f"/s/{space.pk}/intro/edit",
        {"title": "Intro", "path": "intro", "body": "Mine.", "based_on": base},
    )
    assert response.status_code == 409
    assert "Someone else changed this page" in response.content.decode()
    space.refresh_from_db()
    assert space.current_revision_id == theirs


def test_bad_input_is_named_beside_the_field(client, space, org_member):
    signed_in(client, org_member)
    base = space.current_revision_id
    response = client.post(
        f"/s/{space.pk}/intro/edit",
        {"title": " ", "path": "guide", "body": "x" * (2 * 1024 * 1024), "based_on": base},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="title-errors"' in html
    assert 'id="path-errors"' in html
    space.refresh_from_db()
    assert space.current_revision_id == base


def test_a_reader_may_read_but_not_edit(client, space, organization):
    reader = MembershipFactory(organization=organization, role=Membership.Role.READER).user
    signed_in(client, reader)
    assert client.get(f"/s/{space.pk}/intro").status_code == 200
    assert client.get(f"/s/{space.pk}/intro/edit").status_code == 403


def test_history_diff_and_restore(client, space, org_member):
    signed_in(client, org_member)
    first = space.current_revision_id
    client.post(
        f"/s/{space.pk}/intro/edit",
        {"title": "Intro", "path": "intro", "body": "New text.", "based_on": first},
    )
    space.refresh_from_db()
    history = client.get(f"/s/{space.pk}/history").content.decode()
    assert first[:8] in history and space.current_revision_id[:8] in history
    diff = client.get(f"/s/{space.pk}/history/{space.current_revision_id}/diff").content.decode()
    assert "New text." in diff and "Hello *world*." in diff
    client.post(f"/s/{space.pk}/history/{first}/restore")
    space.refresh_from_db()
    assert space.current_revision.pages.get(path="intro").body.startswith("# Welcome")


def test_only_admins_change_the_settings_and_visibility_fires(client, space, org_member, org_admin):
    assert signed_in(client, org_member).get(f"/s/{space.pk}/settings").status_code == 403
    response = signed_in(client, org_admin).post(
        f"/s/{space.pk}/settings", {"title": "Handbook 2", "visibility": "public"}
    )
    assert response.status_code == 302
    assert Space.objects.get(pk=space.pk).visibility == "public"
    assert Event.objects.filter(type="space_visibility_updated").count() == 1


def test_anonymous_readers_of_a_public_space_fire_once_even_without_cookies(space):
    from django.test import Client

    space.visibility = "public"
    space.save()
    for _ in range(3):  # a client that keeps no cookie: a new anonymous id each time
        response = Client().get(f"/s/{space.pk}/intro", HTTP_USER_AGENT="bot/1.0")
        assert response.status_code == 200
    assert (
        f'href="/marketplace/login/?next=/s/{space.pk}/intro">Sign in' in response.content.decode()
    )
    view = Event.objects.get(type="space_view")
    assert "userId" not in view.payload["visitor"]
    assert view.payload["visitor"]["userAgent"] == "bot/1.0"
    assert Client().get(f"/s/{space.pk}/intro/edit").status_code == 302  # sign in first


def test_the_history_of_a_public_space_is_the_organizations(client, space):
    space.visibility = "public"
    space.save()
    revision = space.current_revision_id
    assert client.get(f"/s/{space.pk}/intro").status_code == 200
    for address in ["history", f"history/{revision}/", f"history/{revision}/diff"]:
        assert client.get(f"/s/{space.pk}/{address}").status_code == 404, address


def test_pages_of_spaces_show_https_images_and_the_marketplace_none(client, space, org_member):
    signed_in(client, org_member)
    for address in [f"/s/{space.pk}/intro", f"/s/{space.pk}/intro/edit", f"/s/{space.pk}/history"]:
        assert "img-src 'self' https:" in client.get(address)["Content-Security-Policy"], address
    assert "https:" not in client.get("/marketplace/login/")["Content-Security-Policy"]


def test_a_changed_role_or_visibility_is_seen_at_the_next_read(client, space, org_member):
    """The page around a page's content is kept in the shared cache per person and role: a
    member made a reader loses the editor's buttons at once, as a public space made private
    is unknown to anyone outside at once."""
    address = f"/s/{space.pk}/guide"
    signed_in(client, org_member)
    assert f'href="/s/{space.pk}/guide/edit"' in client.get(address).content.decode()
    Membership.objects.filter(user=org_member).update(role="reader")
    html = client.get(address).content.decode()
    assert "<strong>this</strong>" in html
    assert f'href="/s/{space.pk}/guide/edit"' not in html

    Space.objects.filter(pk=space.pk).update(visibility="public")
    anonymous = Client()
    assert anonymous.get(address).status_code == 200
    Space.objects.filter(pk=space.pk).update(visibility="private")
    assert anonymous.get(address).status_code in (302, 404)


def test_the_navigation_marks_the_page_read_on_every_page(client, space, org_member):
    signed_in(client, org_member)
    paths = ("intro", "guide", "guide/install")
    for path in paths:
        html = client.get(f"/s/{space.pk}/{path}").content.decode()
        for other in paths:
            marked = f'href="/s/{space.pk}/{other}" aria-current="page"' in html
            assert marked == (other == path), (path, other)
