"""Each space's visibility as a badge where spaces are listed and on the reader: a private
space says so as the unlisted and public ones do."""

import pytest

from docplatform.models import Space
from docplatform.revisions import space_content_update
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("visibility", "badge"),
    [
        (Space.Visibility.PRIVATE, "Private (members only)"),
        (Space.Visibility.UNLISTED, "Unlisted (anyone with the link)"),
        (Space.Visibility.PUBLIC, "Public"),
    ],
)
def test_the_reader_and_the_spaces_list_show_the_visibility(
    client, organization, org_member, visibility, badge
):
    space = SpaceFactory(organization=organization, title="Handbook", visibility=visibility)
    space_content_update(space=space, pages=[{"path": "intro", "title": "Intro", "body": "Hi"}])
    client.force_login(org_member)
    tag = f'<span class="tag visibility-{visibility}">{badge}</span>'
    assert tag in client.get(f"/s/{space.pk}/intro").content.decode()
    assert tag in client.get("/s/").content.decode()
