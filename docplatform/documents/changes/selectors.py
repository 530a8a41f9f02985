"""Reads of change requests: a space's list, one by its number, its pages, its approvals and
what stands between it and a merge (the space's merge rules)."""

from dataclasses import dataclass

from django.db.models import QuerySet
from django.http import Http404

from ...models import Space
from ...page_versions import page_dicts
from ..selectors import PageChange, pages_changes
from .models import ChangeRequest, ChangeRequestRevision, Review


def change_requests_of(space: Space, *, status: str | None = None) -> QuerySet:
    """The space's change requests, newest first."""
    found = ChangeRequest.objects.filter(space=space).select_related("author", "merged_by")
    if status:
        found = found.filter(status=status)
    return found.order_by("-number")


def change_request_of(space: Space, number: int) -> ChangeRequest:
    found = change_requests_of(space).filter(number=number).first()
    if found is None:
        raise Http404("No such change request.")
    return found


def head_of(change_request: ChangeRequest) -> ChangeRequestRevision:
    """The change request's latest revision (one is written when it is opened)."""
    return change_request.revisions.order_by("-pk").first()


def change_request_revision_of(
    change_request: ChangeRequest, revision_id
) -> ChangeRequestRevision | None:
    """One of its revisions; None when the id is not one of them."""
    if not str(revision_id).isdigit():
        return None
    return change_request.revisions.filter(pk=int(revision_id)).first()


def base_pages(change_request: ChangeRequest) -> list[dict]:
    """The space's pages as they were at the change request's base revision."""
    if change_request.base_revision_id is None:
        return []
    return page_dicts(change_request.base_revision_id)


def space_pages(space: Space) -> list[dict]:
    return page_dicts(space.current_revision_id) if space.current_revision_id else []


def change_request_changes(change_request: ChangeRequest) -> list[PageChange]:
    """The change request's pages against the space's current content, line by line."""
    return pages_changes(space_pages(change_request.space), head_of(change_request).pages)


def reviews_of(change_request: ChangeRequest) -> QuerySet:
    return Review.objects.filter(change_request=change_request).select_related("reviewer")


def approvers(change_request: ChangeRequest) -> list[str]:
    """Who approves it now: each reviewer's latest review counts, the author's never."""
    latest: dict[int, Review] = {}
    for review in reviews_of(change_request).order_by("created_at", "pk"):
        latest[review.reviewer_id] = review
    return sorted(
        review.reviewer.get_username()
        for reviewer_id, review in latest.items()
        if review.status == Review.Verdict.APPROVED and reviewer_id != change_request.author_id
    )


@dataclass(frozen=True)
class Blocker:
    """Why a change request cannot be merged now: ``rule`` names the rule as the API does."""

    rule: str
    detail: str


def merge_blockers(change_request: ChangeRequest) -> list[Blocker]:
    """What stands between the change request and a merge, by the space's merge rules;
    empty when it may be merged (a merge may still meet overlapping changes)."""
    space = change_request.space
    if change_request.status != ChangeRequest.Status.OPEN:
        return [Blocker("status", f"the change request is {change_request.status}")]
    blockers = []
    approved = len(approvers(change_request))
    if approved < space.required_approvals:
        blockers.append(
            Blocker(
                "requiredApprovals",
                f"it needs {space.required_approvals} approvals by reviewers other than its "
                f"author, and has {approved}",
            )
        )
    if space.require_up_to_date and change_request.base_revision_id != space.current_revision_id:
        blockers.append(
            Blocker(
                "upToDate",
                "it was made from an older revision of the space: update it from the space "
                "before merging",
            )
        )
    if head_of(change_request).pages == base_pages(change_request):
        blockers.append(Blocker("changes", "it changes nothing yet"))
    return blockers
