"""Writes of comments: starting a thread or replying to one, resolving and reopening a
thread, deleting one's own comment. Who may comment is the access module's (``COMMENT``);
the doors (the REST API, the reader's forms) ask it before calling these.

``@username`` in a new comment mails the organization's people it names, after the commit:
a mail server that fails loses no comment (it is logged), and a name that is not one of the
organization's people is plain text.
"""

import logging
import re
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from ... import access
from ...models import Page, Space
from ...reading.document import page_document
from ...reading.navigation import page_in
from ..changes import selectors as change_selectors
from ..changes.models import ChangeRequest
from . import selectors
from .models import BODY_MAX_LENGTH, Comment

logger = logging.getLogger(__name__)

#: ``@name`` not preceded by a word character (``bob@acme.test`` mentions nobody); Django's
#: usernames are letters, digits and ``@.+-_``.
MENTION = re.compile(r"(?<![\w@.+-])@([\w.@+-]{1,150})")


def comment_create(
    *,
    space: Space,
    page_path: str,
    body: str,
    author,
    anchor: dict | None = None,
    reply_to_id: str | None = None,
    change_request: ChangeRequest | None = None,
) -> Comment:
    """A new thread on a page of the space's current revision (``reply_to_id`` None), or a
    reply to a thread of the same page (a reply to a reply joins that reply's thread, and
    takes its anchor: give none). With ``change_request`` (of the space), the same on it:
    ``page_path`` "" for the change request as a whole or one of its current pages, anchored
    to lines of that page or nowhere. ValidationError naming ``page_path``, ``anchor``,
    ``anchor.heading``, ``anchor.lines``, ``body`` or ``reply_to``, with nothing written."""
    target = _target_of(space, page_path, change_request)
    errors = {}
    if problem := _body_problem(body):
        errors["body"] = [problem]
    thread = None
    if reply_to_id is not None:
        thread = _thread_of(target.comments, reply_to_id)
        if thread is None:
            errors["reply_to"] = [f"no comment of this {target.noun} has this id"]
        if anchor is not None:
            errors["anchor"] = ["a reply takes its thread's anchor: give null"]
    elif anchor is not None:
        errors.update(_anchor_problems(anchor, target))
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        comment = Comment.objects.create(
            space=space,
            change_request=change_request,
            page_path=page_path,
            anchor=None if thread else anchor,
            body=body,
            author=author,
            reply_to=thread,
        )
        mentioned = _mentioned_people(space, body, author)
        if mentioned:
            transaction.on_commit(lambda: _mention_mails_send(comment, target, mentioned))
    return comment


@dataclass
class _Target:
    """What a comment is on: a page of the space, or a change request (as a whole when
    ``body`` is None) or one of its pages. ``comments`` are those a reply may join."""

    comments: QuerySet
    noun: str
    title: str
    address: str
    body: str | None = None
    page: Page | None = None


def _target_of(space: Space, page_path: str, change_request) -> _Target:
    if change_request is None:
        page = page_in(space.current_revision_id, page_path) if page_path else None
        if page is None:
            raise ValidationError({"page_path": ["no page of the space's current revision has it"]})
        return _Target(
            comments=selectors.page_comments(space, page_path),
            noun="page",
            title=page.title,
            address=reverse("docs:page", args=[space.pk, page_path]),
            body=page.body,
            page=page,
        )
    if change_request.space_id != space.pk:
        raise ValidationError({"change_request": ["is not a change request of this space"]})
    body = None
    if page_path:
        pages = {page["path"]: page for page in change_selectors.head_of(change_request).pages}
        if page_path not in pages:
            raise ValidationError({"page_path": ["no page of the change request has it"]})
        body = pages[page_path]["body"]
    return _Target(
        comments=selectors.change_request_comments(change_request).filter(page_path=page_path),
        noun="change request" if not page_path else "change request's page",
        title=f"#{change_request.number} {change_request.subject}",
        address=reverse("docs:change-request", args=[space.pk, change_request.number]),
        body=body,
    )


def comment_resolve_set(*, comment: Comment, resolved: bool, actor) -> Comment:
    """Resolve or reopen the comment's thread (its root holds the state); PermissionDenied
    for someone who may not (``selectors.may_resolve``). Returns the thread's root."""
    thread = comment if comment.reply_to_id is None else comment.reply_to
    thread.space = comment.space
    if not selectors.may_resolve(actor, thread):
        raise PermissionDenied(selectors.RESOLVE_REFUSAL)
    if thread.resolved != resolved:
        thread.resolved_at = timezone.now() if resolved else None
        thread.resolved_by = actor if resolved else None
        thread.save(update_fields=["resolved_at", "resolved_by"])
    return thread


def comment_delete(*, comment: Comment, actor) -> None:
    """Delete one's own comment (a thread's root takes its replies with it)."""
    if comment.author_id is None or comment.author_id != actor.pk:
        raise PermissionDenied("Only the person who wrote a comment may delete it.")
    comment.delete()


def _body_problem(body) -> str | None:
    if not isinstance(body, str) or not body.strip():
        return "write the comment"
    if len(body) > BODY_MAX_LENGTH:
        return f"at most {BODY_MAX_LENGTH:,} characters"
    return None


def _thread_of(comments: QuerySet, comment_id) -> Comment | None:
    """The thread a reply to ``comment_id`` (one of ``comments``) joins: its root."""
    comment = comments.select_related("reply_to").filter(pk=str(comment_id)).first()
    if comment is None:
        return None
    return comment.reply_to or comment


def _anchor_problems(anchor, target: _Target) -> dict[str, list[str]]:
    """Why ``anchor`` is not a place on the target, by field: ``{"heading": "<slug>"}`` of
    one of a space's page's headings, or ``{"lines": [from, to]}`` within the page's lines
    (a change request as a whole has neither: null)."""
    if target.body is None:
        return {"anchor": ["the change request as a whole has no lines: give null"]}
    kinds = {"heading", "lines"} if target.page is not None else {"lines"}
    if not isinstance(anchor, dict) or len(anchor) != 1 or not kinds & set(anchor):
        if target.page is None:
            return {"anchor": ['give {"lines": [from, to]} or null']}
        return {"anchor": ['give {"heading": "<slug>"}, {"lines": [from, to]} or null']}
    if "heading" in anchor:
        slugs = {heading.anchor for heading in page_document(target.page).headings}
        if not isinstance(anchor["heading"], str) or anchor["heading"] not in slugs:
            return {"anchor.heading": ["no heading of the page has this anchor"]}
        return {}
    lines = anchor["lines"]
    count = len(target.body.splitlines())
    if not (isinstance(lines, list) and len(lines) == 2 and all(map(_is_line_number, lines))):
        return {"anchor.lines": ["give two line numbers: [from, to]"]}
    first, last = lines
    if not 1 <= first <= last <= count:
        return {"anchor.lines": [f"give 1 <= from <= to <= {count}, the page's line count"]}
    return {}


def _is_line_number(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _mentioned_people(space: Space, body: str, author) -> list:
    """The organization's people that ``body`` names with ``@username`` (not its author)."""
    names = set()
    for match in MENTION.finditer(body):
        names |= {match.group(1), match.group(1).rstrip(".")}
    if not names:
        return []
    people = get_user_model().objects.filter(
        username__in=names, pk__in=access.member_user_ids(space.organization_id)
    )
    return [person for person in people.exclude(pk=author.pk) if person.email]


def _mention_mails_send(comment: Comment, target: _Target, people: list) -> None:
    """One mail per person named; one that cannot be sent is logged, the others still go."""
    context = {
        "author": comment.author,
        "title": target.title,
        "space": comment.space,
        "body": comment.body,
        "url": f"{settings.PLATFORM_URL}{target.address}#comment-{comment.pk}",
    }
    subject = f"{comment.author.get_username()} mentioned you on {target.title}"
    text = render_to_string("docs/comment_mention_email.txt", context)
    for person in people:
        try:
            send_mail(subject, text, None, [person.email])
        except OSError:  # smtplib's errors, refused connections, timeouts, TLS failures
            logger.warning(
                "The mention mail to %s (comment %s) could not be sent",
                person.email,
                comment.pk,
                exc_info=True,
            )
