"""Who else has a page open in the editor (presence, polled): shown before anyone saves, gone
once they stop polling; only for people who may edit."""

from datetime import timedelta

import pytest

from docplatform.documents.models import PagePresence

pytestmark = pytest.mark.django_db


@pytest.fixture
def space_spec():
    return {"pages": [{"path": "intro", "title": "Intro", "body": "Hi"}]}


def poll(client, person, space, path="intro"):
    client.force_login(person)
    return client.post(f"/s/{space.pk}/-/presence", {"path": path})


def test_two_editors_see_each_other_and_one_who_left_is_gone(space, org_admin, org_member, client):
    assert poll(client, org_admin, space).json() == {"others": []}
    assert poll(client, org_member, space).json() == {"others": [org_admin.username]}
    assert poll(client, org_admin, space).json() == {"others": [org_member.username]}
    assert poll(client, org_admin, space, "other").json() == {"others": []}

    PagePresence.objects.filter(user=org_member).update(
        seen_at=PagePresence.objects.get(user=org_member).seen_at - timedelta(seconds=31)
    )
    assert poll(client, org_admin, space).json() == {"others": []}


def test_the_editor_polls_and_readers_and_strangers_are_refused(
    space, org_reader, outsider, client
):
    client.force_login(org_reader)
    assert client.post(f"/s/{space.pk}/-/presence", {"path": "intro"}).status_code == 403
    client.force_login(outsider)
    assert client.post(f"/s/{space.pk}/-/presence", {"path": "intro"}).status_code == 404
    assert not PagePresence.objects.exists()


def test_the_editor_page_names_where_it_polls(space, org_member, client):
    client.force_login(org_member)
    page = client.get(f"/s/{space.pk}/intro/edit").content.decode()
    assert f'data-presence-url="/s/{space.pk}/-/presence"' in page
    assert poll(client, org_member, space, "../x").status_code == 400
