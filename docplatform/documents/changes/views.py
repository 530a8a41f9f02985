"""The change requests' pages (``/s/<space>/~cr/...``): the space's list with a form to open
one, a change request with its diff against the space's content, reviewers, reviews and the
Merge button (disabled with the unmet rule named), updating it from the space (overlaps
resolved here, never in the space), and editing its pages with the space's editor."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse

from ...spaces.views import PermissionDeniedPage, SpaceView
from ..comments.panel import change_request_comments_panel as comments_panel
from ..editor_views import EditorMixin, PageForm
from . import selectors, services
from .models import ChangeRequest, Review


def _messages(error: ValidationError) -> str:
    return " ".join(problem for problems in error.message_dict.values() for problem in problems)


class ChangeRequestsView(SpaceView):
    """The space's change requests, newest first; POST opens one (admins and members)."""

    tab = "changes"

    def get(self, request):
        self.require_member()
        return self._list({}, {})

    def post(self, request):
        self.require_editor()
        given = {key: request.POST.get(key, "") for key in ("subject", "description")}
        try:
            opened = services.change_request_open(space=self.space, actor=request.user, **given)
        except ValidationError as error:
            return self._list(given, error.message_dict, status=400)
        messages.success(request, f"Change request #{opened.number} opened.")
        return redirect(_address(opened))

    def _list(self, given, errors, status=200):
        status_wanted = self.request.GET.get("status", ChangeRequest.Status.OPEN)
        found = selectors.change_requests_of(self.space, status=status_wanted)
        context = {
            "change_requests": found,
            "statuses": ChangeRequest.Status.choices,
            "status_wanted": status_wanted,
            "given": given,
            "errors": errors,
        }
        return self.page("docs/change_requests.html", context, status=status)


class ChangeRequestMixin:
    tab = "changes"

    def change_request(self, number) -> ChangeRequest:
        self.require_member()
        return selectors.change_request_of(self.space, number)


class ChangeRequestView(ChangeRequestMixin, SpaceView):
    """A change request: what it changes against the space's content now, its reviewers and
    reviews, and what its merge waits for."""

    def get(self, request, number, *, conflict=None, status=200):
        change_request = self.change_request(number)
        head = selectors.head_of(change_request)
        context = {
            "change_request": change_request,
            "head": head,
            "changes": selectors.change_request_changes(change_request),
            "reviews": selectors.reviews_of(change_request),
            "reviewers": change_request.reviewers.order_by("username"),
            "approvers": selectors.approvers(change_request),
            "blockers": selectors.merge_blockers(change_request),
            "verdicts": Review.Verdict.choices,
            "is_author": request.user.pk == change_request.author_id,
            "conflict": _proposals(conflict, head) if conflict else None,
            "update_needed": change_request.base_revision_id != self.space.current_revision_id,
            "comments": comments_panel(
                request, space=self.space, change_request=change_request, pages=head.pages
            ),
        }
        return self.page("docs/change_request.html", context, status=status)


class ChangeRequestActionView(ChangeRequestMixin, SpaceView):
    """POST one of the change request page's forms (``action``): review, reviewers, close,
    reopen, merge, update from the space. Back to the change request, with what happened."""

    action = ""

    def post(self, request, number):
        change_request = self.change_request(number)
        self.require_editor()
        try:
            done = getattr(self, f"_{self.action}")(change_request)
        except ValidationError as error:
            messages.error(request, _messages(error))
        except services.ChangeRequestRefused as refusal:
            messages.error(request, f"{refusal}.")
        except services.ChangeRequestConflict as conflict:
            messages.error(request, "Some changes overlap: resolve each below.")
            return ChangeRequestView.get(self, request, number, conflict=conflict, status=409)
        else:
            messages.success(request, done)
        return redirect(_address(change_request))

    def _review(self, change_request) -> str:
        services.change_request_review(
            change_request=change_request,
            reviewer=self.request.user,
            status=self.request.POST.get("status", ""),
            comment=self.request.POST.get("comment", ""),
        )
        return "Review saved."

    def _reviewers(self, change_request) -> str:
        names = [name.strip() for name in self.request.POST.get("reviewers", "").split(",")]
        services.change_request_update(
            change_request=change_request,
            actor=self.request.user,
            reviewers=[name for name in names if name],
        )
        return "Reviewers saved."

    def _status(self, change_request) -> str:
        status = self.request.POST.get("status", "")
        services.change_request_update(
            change_request=change_request, actor=self.request.user, status=status
        )
        return f"Change request {'closed' if status == 'closed' else 'reopened'}."

    def _merge(self, change_request) -> str:
        revision = services.change_request_merge(
            change_request=change_request, actor=self.request.user
        )
        return f"Merged as revision {revision.pk[:8]}."

    def _update(self, change_request) -> str:
        """Update from the space; the form of a conflict sends each overlapping page as the
        person resolved it (``clash-N-path``, ``-title``, ``-body``, or ``-remove``)."""
        post, resolved = self.request.POST, {}
        for index in range(int(post.get("clashes", 0) or 0)):
            path = post.get(f"clash-{index}-path", "")
            if post.get(f"clash-{index}-remove"):
                resolved[path] = None
            elif path:
                body = post.get(f"clash-{index}-body", "")
                resolved[path] = {
                    "title": post.get(f"clash-{index}-title", ""),
                    "condition": post.get(f"clash-{index}-condition", ""),
                    "body": body,
                }
        services.change_request_update_from_space(
            change_request=change_request, actor=self.request.user, resolved=resolved
        )
        return "Updated from the space: it is made from the space's current revision now."


class ChangeRequestPageEditView(ChangeRequestMixin, EditorMixin, SpaceView):
    """One page of the change request in the space's editor; a save writes a revision of the
    change request, never of the space."""

    def get(self, request, number, page_path):
        change_request = self.change_request(number)
        self.require_editor()
        head = selectors.head_of(change_request)
        page = next((page for page in head.pages if page["path"] == page_path), None)
        if page is None:
            raise Http404("No such page in this change request.")
        form = PageForm(initial={**page, "based_on": head.pk})
        return self._editor(change_request, form, page_path)

    def post(self, request, number, page_path):
        change_request = self.change_request(number)
        self.require_editor()
        form = PageForm(request.POST)
        if not form.is_valid():
            return self._editor(change_request, form, page_path, status=400)
        data = form.cleaned_data
        try:
            services.change_request_page_save(
                change_request=change_request,
                path=page_path,
                new_path=data["path"],
                title=data["title"],
                body=data["body"],
                condition=data["condition"],
                message=data["message"],
                actor=request.user,
                based_on=data["based_on"],
            )
        except ValidationError as error:
            form.add_service_errors(error)
            return self._editor(change_request, form, page_path, status=400)
        except services.ChangeRequestRefused as refusal:
            raise PermissionDeniedPage(f"{refusal}.") from None
        except services.ChangeRequestConflict as conflict:
            # Mine stays in the editor, now made from the change request's latest revision.
            form = PageForm({**data, "based_on": conflict.head.pk})
            form.is_valid()
            form.add_error(None, _conflict_message(conflict))
            return self._editor(change_request, form, page_path, status=409)
        messages.success(request, "Saved to the change request.")
        return redirect(_address(change_request))

    def _editor(self, change_request, form, page_path, *, status=200):
        return self.editor(
            form,
            page_path=page_path,
            status=status,
            change_request=change_request,
            cancel_url=_address(change_request),
            draft_key=f"{self.space.pk}:~cr{change_request.number}:{page_path}",
        )


def _proposals(conflict, head) -> list[dict]:
    """Each overlapping page with a first proposal to edit: both sides of every hunk (the
    space's first), or the side that kept a page the other removed."""
    titles = {page["path"]: page["title"] for page in head.pages}
    conditions = {page["path"]: page.get("condition", "") for page in head.pages}
    proposals = []
    for clash in conflict.clashes:
        hunk = clash.body.hunks[0] if clash.deleted_by else None
        if hunk is not None:
            body = hunk.mine if clash.deleted_by == "theirs" else hunk.theirs
        elif clash.body is not None:
            body = clash.body.text([("both", "")] * len(clash.body.hunks))
        else:
            body = next(page["body"] for page in head.pages if page["path"] == clash.path)
        title = clash.title.mine if clash.title else titles.get(clash.path, clash.path)
        condition = clash.condition.mine if clash.condition else conditions.get(clash.path, "")
        proposals.append({"clash": clash, "title": title, "condition": condition, "body": body})
    return proposals


def _conflict_message(conflict) -> str:
    pages = ", ".join(clash.path for clash in conflict.clashes) or "this page"
    return (
        f"Someone saved {pages} in this change request since you opened it, changing the same "
        "lines. Your text is still here: compare it with the change request's and save again."
    )


def _address(change_request) -> str:
    return reverse("docs:change-request", args=[change_request.space_id, change_request.number])
