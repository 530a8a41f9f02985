"""The comments panel of the reader: rendered at every read of a page by one of the
organization's people, never kept in the reader's cached page shell (a shell is one person's;
comments change between two reads); and the same threads on a change request's page."""

from dataclasses import dataclass

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString

from ...markdown import render_markdown
from ...models import Page, Space
from ...reading.document import page_document
from . import selectors
from .models import BODY_MAX_LENGTH, Comment

#: A comment's headings sit below the panel's own (h2) and the thread's.
COMMENT_HEADING_OFFSET = 3


@dataclass
class ThreadShown:
    thread: Comment
    label: selectors.AnchorLabel
    comments: list[tuple[Comment, SafeString, str]]  # the root first, then the replies
    may_resolve: bool
    resolve_url: str


def comments_panel(request, *, space: Space, page: Page) -> str:
    """The page's threads, with the forms the person may use (comment, reply, resolve)."""
    user = request.user
    headings = page_document(page).headings
    threads = _threads_shown(
        user,
        space,
        selectors.page_comments(space, page.path),
        lambda thread: selectors.anchor_label(thread.anchor, headings),
        url=(url := _urls("docs:comment", space.pk)),
    )
    context = {
        "create_url": url("create"),
        "space": space,
        "page_obj": page,
        "threads": threads,
        "open_count": sum(not shown.thread.resolved for shown in threads),
        "may_comment": selectors.may_comment(user, space),
        "headings": headings,
        "line_count": len(page.body.splitlines()),
        "body_max_length": BODY_MAX_LENGTH,
    }
    return render_to_string("docs/_comments.html", context, request=request)


def change_request_comments_panel(request, *, space: Space, change_request, pages) -> str:
    """The change request's threads (on it as a whole and on its ``pages``), with the forms
    the person may use."""
    threads = _threads_shown(
        request.user,
        space,
        selectors.change_request_comments(change_request),
        _change_request_label,
        url=(url := _urls("docs:change-request-comment", space.pk, change_request.number)),
    )
    context = {
        "create_url": url("create"),
        "space": space,
        "cr": change_request,
        "threads": threads,
        "open_count": sum(not shown.thread.resolved for shown in threads),
        "may_comment": selectors.may_comment(request.user, space),
        "pages": pages,
        "body_max_length": BODY_MAX_LENGTH,
    }
    return render_to_string("docs/_change_request_comments.html", context, request=request)


def _change_request_label(thread: Comment) -> selectors.AnchorLabel:
    if not thread.page_path:
        return selectors.AnchorLabel("the change request")
    where = selectors.anchor_label(thread.anchor, [])
    return selectors.AnchorLabel(f"{thread.page_path}, {where.text}")


def _urls(prefix: str, *args):
    """The addresses of the comment forms: ``url(action, *more)`` reverses
    ``<prefix>-<action>`` (``docs:comment-…`` with the space's id, or
    ``docs:change-request-comment-…`` with the space's id and the change request's number)."""
    return lambda action, *more: reverse(f"{prefix}-{action}", args=[*args, *more])


def _threads_shown(user, space: Space, comments, label, *, url) -> list[ThreadShown]:
    shown = []
    for thread in selectors.threads_of(comments):
        thread.space = space  # read from it: asking who may resolve it reads nothing more
        comments_ = [thread, *thread.replies.all()]
        shown.append(
            ThreadShown(
                thread=thread,
                label=label(thread),
                comments=[
                    (comment, _shown_body(comment), url("delete", comment.pk))
                    for comment in comments_
                ],
                may_resolve=selectors.may_resolve(user, thread),
                resolve_url=url("resolve", thread.pk),
            )
        )
    return shown


def _shown_body(comment: Comment) -> SafeString:
    """The comment's Markdown rendered and sanitized (``docplatform.markdown``)."""
    return render_markdown(comment.body, heading_offset=COMMENT_HEADING_OFFSET)
