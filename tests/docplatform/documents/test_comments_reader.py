"""Comments on the reader's pages (``/s/<space>/<page>``): the panel shown to the
organization's people only, its forms (comment, reply, resolve, delete), escaping, and a
cached page that never carries one person's view of the comments to another."""

import pytest

from docplatform.documents.comments.models import Comment
from docplatform.documents.comments.services import comment_create

pytestmark = pytest.mark.django_db

INSTALL = "# Install\n\n## Requirements\n\nPython 3.12.\n\n## Steps\n\nRun it.\n"


@pytest.fixture
def space_spec(org_admin):
    return {
        "title": "Handbook",
        "visibility": "public",
        "pages": [{"path": "install", "title": "Install", "body": INSTALL}],
        "author": org_admin,
    }


def page(client, user, space) -> str:
    if user is not None:
        client.force_login(user)
    response = client.get(f"/s/{space.pk}/install")
    assert response.status_code == 200
    return response.content.decode()


def comment(space, author, body, **kwargs) -> Comment:
    return comment_create(space=space, page_path="install", body=body, author=author, **kwargs)


def test_threads_show_their_heading_or_lines_with_their_replies(
    client, space, org_member, org_admin
):
    thread = comment(space, org_member, "Is 3.11 enough?", anchor={"heading": "requirements"})
    comment(space, org_admin, "Yes.", reply_to_id=thread.pk)
    comment(space, org_admin, "Typo.", anchor={"lines": [3, 5]})
    html = page(client, org_member, space)
    assert 'On <a href="#requirements">Requirements</a>' in html
    assert "On lines 3 to 5" in html
    assert "Is 3.11 enough?" in html and "<p>Yes.</p>" in html
    assert 'id="comments"' in html and 'name="reply_to"' in html


def test_a_member_comments_on_a_heading_replies_and_resolves_through_the_forms(
    client, space, org_member
):
    client.force_login(org_member)
    made = client.post(
        f"/s/{space.pk}/-/comments",
        {"page": "install", "anchor": "heading:steps", "body": "Which order?"},
    )
    thread = Comment.objects.get()
    assert made.status_code == 302
    assert made["Location"] == f"/s/{space.pk}/install#comment-{thread.pk}"
    assert thread.anchor == {"heading": "steps"}
    client.post(
        f"/s/{space.pk}/-/comments",
        {"page": "install", "anchor": "lines", "from": "3", "to": "5", "body": "Lines."},
    )
    assert Comment.objects.get(body="Lines.").anchor == {"lines": [3, 5]}
    client.post(
        f"/s/{space.pk}/-/comments", {"page": "install", "reply_to": thread.pk, "body": "Top down."}
    )
    assert Comment.objects.get(body="Top down.").reply_to == thread
    client.post(f"/s/{space.pk}/-/comments/{thread.pk}/resolve", {"resolved": "1"})
    thread.refresh_from_db()
    assert thread.resolved and thread.resolved_by == org_member
    assert "Reopen" in page(client, None, space)


def test_a_bad_comment_from_the_form_says_why_and_writes_nothing(client, space, org_member):
    client.force_login(org_member)
    made = client.post(
        f"/s/{space.pk}/-/comments",
        {"page": "install", "anchor": "lines", "from": "1", "to": "99", "body": "x"},
        follow=True,
    )
    assert "the page&#x27;s line count" in made.content.decode()
    assert not Comment.objects.exists()


def test_a_script_in_a_comment_shows_as_text(client, space, org_member):
    comment(space, org_member, '<script>alert("x")</script> and <img src=x onerror=alert(1)>')
    html = page(client, org_member, space)
    panel = html[html.index('id="comments"') :].split("</section>")[0]
    assert "<script" not in panel and "<img" not in panel
    assert "&lt;img src=x onerror=alert(1)&gt;" in panel  # shown as text


def test_anonymous_visitors_and_outsiders_see_no_comments(client, space, org_member, people):
    comment(space, org_member, "Internal remark.")
    assert "Internal remark." not in page(client, None, space)  # the space is public
    outsider_view = page(client, people["outsider"], space)
    assert "Internal remark." not in outsider_view and 'id="comments"' not in outsider_view
    client.logout()
    refused = client.post(f"/s/{space.pk}/-/comments", {"page": "install", "body": "Hi"})
    assert refused.status_code == 404
    assert Comment.objects.count() == 1


def test_readers_read_threads_and_comment_only_where_allowed(client, space, org_reader):
    html = page(client, org_reader, space)
    assert "Only the organization's admins and members may comment here" in html
    refused = client.post(f"/s/{space.pk}/-/comments", {"page": "install", "body": "Hi"})
    assert refused.status_code == 403 and not Comment.objects.exists()
    space.readers_may_comment = True
    space.save()
    assert 'name="body"' in page(client, org_reader, space)
    client.post(f"/s/{space.pk}/-/comments", {"page": "install", "body": "Hi"})
    assert Comment.objects.get().author == org_reader


def test_the_admin_lets_readers_comment_in_the_space_settings(client, space, org_admin):
    client.force_login(org_admin)
    client.post(
        f"/s/{space.pk}/settings",
        {"title": "Handbook", "visibility": "public", "readers_may_comment": "1"},
    )
    space.refresh_from_db()
    assert space.readers_may_comment is True


def test_a_cached_page_never_shows_one_persons_view_of_the_comments_to_another(
    client, space, org_member, org_admin, org_reader
):
    """The page's shell is kept per person; its comments panel is rendered at every read."""
    first = page(client, org_member, space)
    assert "No comments on this page yet." in first
    mine = comment(space, org_member, "Mine to delete.")
    again = page(client, org_member, space)  # the same person's shell, from the cache
    assert "Mine to delete." in again and f"/-/comments/{mine.pk}/delete" in again
    admins = page(client, org_admin, space)
    assert "Mine to delete." in admins
    assert f"/-/comments/{mine.pk}/delete" not in admins  # only its author deletes it
    readers = page(client, org_reader, space)
    assert f"/-/comments/{mine.pk}/resolve" not in readers  # nor a reader who did not start it
    client.force_login(org_member)
    client.post(f"/s/{space.pk}/-/comments/{mine.pk}/delete")
    assert "Mine to delete." not in page(client, org_member, space)
