"""Writes of change requests (DESIGN.md, "Content"). A change request is a branch of a
space's content: its base revision plus its own revisions. It is edited like the space
(stale edits merged three-way inside it), reviewed, and merged onto the space's current
revision with the same merge as concurrent saves, as one revision through
``revisions.space_content_update`` (so ``space_content_updated`` fires once). Overlaps are
never resolved in the space: the merge refuses, and the person resolves them in the change
request (``change_request_update_from_space``), which then merges cleanly.
"""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from ... import access, content, revisions
from ...audit.services import audit_record
from ...merging import merge_page, merge_pages, placed_after
from ...models import Space
from ..services import check_page_edit
from . import selectors
from .models import ChangeRequest, ChangeRequestRevision, Review

MAX_SUBJECT_LENGTH = ChangeRequest._meta.get_field("subject").max_length
MAX_DESCRIPTION_LENGTH = 20_000


class ChangeRequestRefused(Exception):
    """The change request cannot do that now: ``blockers`` (``selectors.Blocker``) say why,
    each naming its rule."""

    def __init__(self, blockers: list):
        super().__init__("; ".join(blocker.detail for blocker in blockers))
        self.blockers = blockers


class ChangeRequestConflict(Exception):
    """Changes overlap: ``clashes`` (``merging.PageClash``), against the space's revision
    ``current`` (a merge, an update from the space) or the change request's latest revision
    (an edit made from an older one of its revisions)."""

    def __init__(self, *, clashes: list, current=None, head=None):
        super().__init__("changes overlap")
        self.clashes, self.current, self.head = clashes, current, head


@transaction.atomic
def change_request_open(
    *, space: Space, subject: str, description: str = "", actor, based_on: str | None = None
) -> ChangeRequest:
    """A change request of the space, made from its revision ``based_on`` (default: the
    current one; the editor's "Save to a change request" gives the one the page was opened
    at), numbered next in the space; its first revision holds the space's pages then."""
    subject, description = _checked_text(subject=subject, description=description)
    locked = Space.objects.select_for_update(no_key=True).get(
        pk=space.pk
    )  # numbers are given in turn
    base = locked.current_revision_id if based_on is None else based_on
    if base is not None and not locked.revisions.filter(pk=base).exists():
        raise ValidationError({"based_on": ["is not a revision of this space"]})
    number = (locked.change_requests.aggregate(last=Max("number"))["last"] or 0) + 1
    change_request = ChangeRequest.objects.create(
        space=space,
        number=number,
        subject=subject,
        description=description,
        author=actor,
        base_revision_id=base,
    )
    ChangeRequestRevision.objects.create(
        change_request=change_request,
        pages=selectors.base_pages(change_request),
        message="Opened",
        author=actor,
    )
    audit_record(
        action="change_request.opened",
        actor=actor,
        target=change_request,
        organization=space.organization_id,
        details={"space": space.pk, "number": number, "subject": subject},
    )
    return change_request


def change_request_propose(
    *, space: Space, subject: str, description: str, actor, based_on, pages: list[dict], message
) -> ChangeRequest:
    """A change request made from ``based_on`` holding ``pages`` (``hooks.pages_propose``: how
    Git sync puts the branch's side of a conflict before the space's people)."""
    change_request = change_request_open(
        space=space, subject=subject, description=description, actor=actor, based_on=based_on
    )
    change_request_pages_write(
        change_request=change_request, pages=pages, actor=actor, message=message
    )
    return change_request


def change_request_pages_write(
    *,
    change_request: ChangeRequest,
    pages: list[dict],
    actor,
    message: str = "",
    based_on=None,
    space_revision: str | None = None,
) -> ChangeRequestRevision:
    """A new revision of the change request holding ``pages``, made from its revision
    ``based_on`` (None: on top of its latest): when another revision was written since, the
    pages are merged with it, ChangeRequestConflict when they overlap. ``space_revision``
    re-bases the change request on that revision of the space: the pages are the person's
    resolution of what changed there since its base."""
    _require_open(change_request)
    content.check_pages(pages)
    base_revision = change_request.base_revision_id
    if space_revision is not None:
        if not change_request.space.revisions.filter(pk=space_revision).exists():
            raise ValidationError({"spaceRevision": ["is not a revision of this space"]})
        base_revision = space_revision
    with transaction.atomic():
        head = _locked_head(change_request)
        written = [_page(page) for page in pages]
        if based_on is not None and str(based_on) != str(head.pk):
            then = selectors.change_request_revision_of(change_request, based_on)
            if then is None:
                raise ValidationError({"basedOn": ["is not a revision of this change request"]})
            written, clashes = merge_pages(then.pages, head.pages, written)
            if clashes:
                raise ChangeRequestConflict(clashes=clashes, head=head)
        return _write(change_request, written, actor, message, base_revision=base_revision)


def change_request_page_save(
    *,
    change_request: ChangeRequest,
    path: str,
    title: str,
    body: str,
    new_path: str | None = None,
    condition: str | None = None,
    actor,
    message: str = "",
    based_on,
) -> ChangeRequestRevision:
    """One page of the change request edited (the editor's save), from its revision
    ``based_on``; merged line by line with a change of that page saved since, or
    ChangeRequestConflict. ``condition``: None keeps the page's. ValidationError naming
    ``title``, ``path``, ``condition`` or ``body``."""
    _require_open(change_request)
    then = selectors.change_request_revision_of(change_request, based_on)
    if then is None:
        raise ValidationError({"based_on": ["is not a revision of this change request"]})
    mine = next((page for page in then.pages if page["path"] == path), None)
    if mine is None:
        raise ValidationError({"path": ["no page has this path in the change request"]})
    edited = {"path": path if new_path is None else new_path, "title": title, "body": body}
    edited["condition"] = mine.get("condition", "") if condition is None else condition
    edited = _page(edited)
    with transaction.atomic():
        head = _locked_head(change_request)
        if head.pk != then.pk:
            theirs = next((page for page in head.pages if page["path"] == path), None)
            if theirs is None:
                raise ValidationError({"path": ["the page was removed from the change request"]})
            merged, clash = merge_page(mine, theirs, edited)
            if clash is not None:
                raise ChangeRequestConflict(clashes=[clash], head=head)
            edited = merged
        pages = check_page_edit(head.pages, path, edited)
        message = message or f"Edit {edited['title'].strip()[:200]}"
        return _write(change_request, pages, actor, message)


def change_request_update_from_space(
    *, change_request: ChangeRequest, actor, resolved: dict[str, dict] | None = None
) -> ChangeRequestRevision:
    """Bring the space's changes made since the change request's base into it (three-way,
    page by page), and make the space's current revision its base. Pages where both changed
    the same lines raise ChangeRequestConflict unless ``resolved`` (path -> the page as the
    person resolved it, None to leave it out) gives them."""
    _require_open(change_request)
    space = change_request.space
    space.refresh_from_db(fields=["current_revision"])
    resolved = resolved or {}
    head = selectors.head_of(change_request)
    current = selectors.space_pages(space)
    pages, clashes = merge_pages(selectors.base_pages(change_request), current, head.pages)
    unresolved = [clash for clash in clashes if clash.path not in resolved]
    if unresolved:
        raise ChangeRequestConflict(clashes=unresolved, current=space.current_revision)
    for clash in clashes:
        if resolved[clash.path] is not None:
            pages = placed_after(
                pages, head.pages, _page({**resolved[clash.path], "path": clash.path})
            )
    with transaction.atomic():
        _locked_head(change_request, expected=head)
        return _write(
            change_request,
            pages,
            actor,
            "Updated from the space",
            base_revision=space.current_revision_id,
        )


def change_request_update(
    *,
    change_request: ChangeRequest,
    actor,
    subject: str | None = None,
    description: str | None = None,
    reviewers: list[str] | None = None,
    status: str | None = None,
) -> ChangeRequest:
    """Change its subject and description, ask for ``reviewers`` (usernames: editors of the
    organization other than its author), close or reopen it (``status``). None leaves a
    field as it is. ValidationError naming the field, with nothing written."""
    errors, fields = {}, []
    try:
        subject, description = _checked_text(subject=subject, description=description)
    except ValidationError as error:
        errors.update(error.message_dict)
    people = _reviewers(change_request, reviewers, errors) if reviewers is not None else None
    if status is not None and status != change_request.status:
        if change_request.status == ChangeRequest.Status.MERGED:
            errors["status"] = ["a merged change request stays merged"]
        elif status not in (ChangeRequest.Status.OPEN, ChangeRequest.Status.CLOSED):
            errors["status"] = ["must be open or closed"]
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        for name, value in (("subject", subject), ("description", description)):
            if value is not None and value != getattr(change_request, name):
                setattr(change_request, name, value)
                fields.append(name)
        if status is not None and status != change_request.status:
            change_request.status = status
            fields.append("status")
            audit_record(
                action=f"change_request.{'closed' if status == 'closed' else 'reopened'}",
                actor=actor,
                target=change_request,
                organization=change_request.space.organization_id,
                details={"space": change_request.space_id, "number": change_request.number},
            )
        if fields:
            change_request.save(update_fields=[*fields, "updated_at"])
        if people is not None:
            change_request.reviewers.set(people)
    return change_request


def change_request_review(
    *, change_request: ChangeRequest, reviewer, status: str, comment: str = ""
) -> Review:
    """``reviewer`` approves it or requests changes. Never its author, and only an editor of
    its organization (the access module's REVIEW_CHANGE_REQUEST)."""
    _require_open(change_request)
    if status not in Review.Verdict.values:
        raise ValidationError({"status": [f"must be one of {', '.join(Review.Verdict.values)}"]})
    if reviewer.pk == change_request.author_id:
        raise ValidationError({"status": ["the author of a change request cannot review it"]})
    if len(comment) > MAX_DESCRIPTION_LENGTH:
        raise ValidationError({"comment": [f"at most {MAX_DESCRIPTION_LENGTH} characters"]})
    access.require(reviewer, access.Action.REVIEW_CHANGE_REQUEST, change_request.space)
    return Review.objects.create(
        change_request=change_request, reviewer=reviewer, status=status, comment=comment
    )


def change_request_merge(*, change_request: ChangeRequest, actor):
    """Merge it onto the space: its changes since its base, three-way onto the space's
    current revision, as one revision. ChangeRequestRefused naming each unmet merge rule;
    ChangeRequestConflict when the space changed the same lines meanwhile (nothing is
    written: resolve them in the change request)."""
    for _attempt in range(3):
        with transaction.atomic():
            locked = ChangeRequest.objects.select_for_update(no_key=True).get(pk=change_request.pk)
            space = Space.objects.get(pk=locked.space_id)
            locked.space = space
            if blockers := selectors.merge_blockers(locked):
                raise ChangeRequestRefused(blockers)
            current = space.current_revision_id
            pages = selectors.head_of(locked).pages
            if current != locked.base_revision_id:
                theirs = selectors.space_pages(space)
                pages, clashes = merge_pages(selectors.base_pages(locked), theirs, pages)
                if clashes:
                    raise ChangeRequestConflict(clashes=clashes, current=space.current_revision)
            try:
                revision = revisions.space_content_update(
                    space=space,
                    pages=pages,
                    message=f"Merge change request #{locked.number}: {locked.subject}"[:500],
                    author=actor,
                    based_on=current,
                )
            except revisions.RevisionConflict:
                continue  # a save landed between our read and our write: merge again
            locked.status = ChangeRequest.Status.MERGED
            locked.merged_by, locked.merged_revision = actor, revision
            locked.save(update_fields=["status", "merged_by", "merged_revision", "updated_at"])
            audit_record(
                action="change_request.merged",
                actor=actor,
                target=locked,
                organization=space.organization_id,
                details={"space": space.pk, "number": locked.number, "revision": revision.pk},
            )
            change_request.refresh_from_db()
            return revision
    raise ChangeRequestConflict(clashes=[], current=change_request.space.current_revision)


# --- Helpers ---------------------------------------------------------------------------------


def _require_open(change_request: ChangeRequest) -> None:
    if change_request.status != ChangeRequest.Status.OPEN:
        detail = f"the change request is {change_request.status}"
        raise ChangeRequestRefused([selectors.Blocker("status", detail)])


def _locked_head(change_request: ChangeRequest, *, expected=None) -> ChangeRequestRevision:
    """Its latest revision, its row locked so two saves are written one after the other;
    ChangeRequestConflict when it is not ``expected`` any more."""
    ChangeRequest.objects.select_for_update(no_key=True).filter(pk=change_request.pk).first()
    head = selectors.head_of(change_request)
    if expected is not None and head.pk != expected.pk:
        raise ChangeRequestConflict(clashes=[], head=head)
    return head


def _write(change_request, pages, actor, message, *, base_revision=None) -> ChangeRequestRevision:
    content.check_pages(pages)
    if len(message) > content.MAX_MESSAGE_LENGTH:
        raise ValidationError({"message": [f"at most {content.MAX_MESSAGE_LENGTH} characters"]})
    if base_revision is not None and base_revision != change_request.base_revision_id:
        change_request.base_revision_id = base_revision
        change_request.save(update_fields=["base_revision", "updated_at"])
    return ChangeRequestRevision.objects.create(
        change_request=change_request, pages=pages, message=message, author=actor
    )


def _page(page: dict) -> dict:
    """A page as stored: its title stripped, its lines ending in ``\\n`` (as the space's)."""
    body = page.get("body", "").replace("\r\n", "\n")
    kept = {"path": page["path"], "title": page["title"].strip(), "body": body}
    condition = content.condition_of(page)
    return kept | ({"condition": condition} if condition else {})


def _checked_text(*, subject, description) -> tuple[str | None, str | None]:
    errors = {}
    if subject is not None:
        subject = subject.strip() if isinstance(subject, str) else ""
        if not subject:
            errors["subject"] = ["give it a subject"]
        elif len(subject) > MAX_SUBJECT_LENGTH:
            errors["subject"] = [f"at most {MAX_SUBJECT_LENGTH} characters"]
    if description is not None and len(description) > MAX_DESCRIPTION_LENGTH:
        errors["description"] = [f"at most {MAX_DESCRIPTION_LENGTH} characters"]
    if errors:
        raise ValidationError(errors)
    return subject, description


def _reviewers(change_request, usernames: list[str], errors: dict) -> list:
    people = list(get_user_model().objects.filter(username__in=usernames))
    found = {person.get_username(): person for person in people}
    space = change_request.space
    for name in usernames:
        person = found.get(name)
        if person is None or not access.may(person, access.Action.READ, space):
            errors.setdefault("reviewers", []).append(f"{name} is not in the organization")
        elif person.pk == change_request.author_id:
            errors.setdefault("reviewers", []).append(f"{name} is its author")
        elif not access.may(person, access.Action.REVIEW_CHANGE_REQUEST, space):
            errors.setdefault("reviewers", []).append(f"{name} may not review (a reader)")
    return people
