"""Reads of comments: a page's threads, one comment of a space, who may resolve a thread and
what an anchor points at. The thread functions take any queryset of comments, so another
place that holds comments (a change request) reads its threads the same way."""

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from ... import access
from ...access import Action
from ...models import Space
from ...rendering import Heading
from .models import Comment


def page_comments(space: Space, page_path: str) -> QuerySet:
    """Every comment on the page (threads and replies), none of a change request's."""
    return Comment.objects.filter(space=space, page_path=page_path, change_request__isnull=True)


def change_request_comments(change_request) -> QuerySet:
    """Every comment on the change request (threads and replies), on any of its pages or
    on it as a whole."""
    return Comment.objects.filter(space_id=change_request.space_id, change_request=change_request)


def threads_of(comments: QuerySet) -> QuerySet:
    """The threads among ``comments``: their roots, newest first, each with its replies
    (oldest first) and the people who wrote and resolved them, in three queries."""
    replies = Comment.objects.select_related("author").order_by("created_at", "pk")
    return (
        comments.filter(reply_to=None)
        .select_related("author", "resolved_by")
        .prefetch_related(Prefetch("replies", queryset=replies))
        .order_by("-created_at", "-pk")
    )


def comment_in(space: Space, comment_id: str, change_request=None) -> Comment:
    """A comment on the space's pages, or on ``change_request`` when given; Http404 for any
    other (another space's, a change request's among the pages' and the reverse)."""
    found = Comment.objects.filter(space=space, pk=comment_id, change_request=change_request)
    comment = found.first()
    if comment is None:
        raise Http404("No such comment.")
    comment.space = space  # the caller's, with its organization: no query to read it again
    return comment


def may_comment(actor, space: Space) -> bool:
    return access.may(actor, Action.COMMENT, space)


def may_resolve(actor, thread: Comment) -> bool:
    """Resolve or reopen a thread: the organization's admins and members, and the person
    who started it as long as they may comment there."""
    role = access.role_of(actor, thread.space)
    if access.role_may(role, Action.COMMENT):
        return True
    return thread.author_id == actor.pk and may_comment(actor, thread.space)


RESOLVE_REFUSAL = (
    "Only the organization's admins and members, and the person who started a thread, may "
    "resolve or reopen it."
)


@dataclass(frozen=True)
class AnchorLabel:
    """What a thread's anchor points at, as the reader shows it: ``text`` to read and the
    heading's ``fragment`` to link to (empty: no link)."""

    text: str
    fragment: str = ""


def anchor_label(anchor: dict | None, headings: list[Heading]) -> AnchorLabel:
    """Where on the page (its ``headings``) a thread sits; a heading renamed or removed since
    is named by the slug it had."""
    if not anchor:
        return AnchorLabel("the whole page")
    if "lines" in anchor:
        first, last = anchor["lines"]
        return AnchorLabel(f"line {first}" if first == last else f"lines {first} to {last}")
    slug = anchor.get("heading", "")
    for heading in headings:
        if heading.anchor == slug:
            return AnchorLabel(heading.text, slug)
    return AnchorLabel(f"{slug} (a heading no longer on the page)")
