"""The reader's comment forms (``/s/<space>/-/comments...``): post a comment or a reply,
resolve or reopen a thread, delete one's own comment; each goes back to the page. Thin: the
services write, the access module decides who may."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse

from ...access import Action, refusal
from ...spaces.views import PermissionDeniedPage, SpaceView
from ..changes import selectors as change_selectors
from . import selectors, services

#: How a form's anchor is named in an error, as the person sees the form.
FIELD_NAMES = {"page_path": "page", "reply_to": "reply", "anchor.heading": "heading"}


class CommentView(SpaceView):
    """A comment form's view: the organization's people only (404 for anyone else). With
    ``number`` in the URL, the comments are a change request's, and it goes back there."""

    def back_to(self, page_path: str, fragment: str = "comments"):
        change_request = self.change_request()
        if change_request is not None:
            address = reverse("docs:change-request", args=[self.space.pk, change_request.number])
        else:
            address = reverse("docs:page", args=[self.space.pk, page_path])
        return redirect(f"{address}#{fragment}")

    def require_person(self) -> None:
        if self.role is None:
            raise Http404("No such comment.")

    def change_request(self):
        if "number" not in self.kwargs:
            return None
        if not hasattr(self, "_change_request"):
            number = self.kwargs["number"]
            self._change_request = change_selectors.change_request_of(self.space, number)
        return self._change_request

    def comment(self, comment_id):
        return selectors.comment_in(self.space, comment_id, change_request=self.change_request())


class CommentCreateView(CommentView):
    """POST: a new thread (``anchor``: empty, ``heading:<slug>`` or ``lines`` with ``from``
    and ``to``) or a reply (``reply_to``)."""

    def post(self, request, number=None):
        self.require_person()
        if not selectors.may_comment(request.user, self.space):
            raise PermissionDeniedPage(refusal(Action.COMMENT))
        page_path = request.POST.get("page", "")
        try:
            comment = services.comment_create(
                space=self.space,
                page_path=page_path,
                anchor=_anchor_from(request.POST),
                body=request.POST.get("body", ""),
                reply_to_id=request.POST.get("reply_to") or None,
                author=request.user,
                change_request=self.change_request(),
            )
        except ValidationError as error:
            if "page_path" in error.message_dict and self.change_request() is None:
                raise Http404("No such page.") from error
            for field, problems in error.message_dict.items():
                messages.error(request, f"{FIELD_NAMES.get(field, field)}: {'; '.join(problems)}")
            return self.back_to(page_path)
        return self.back_to(page_path, f"comment-{comment.pk}")


class CommentResolveView(CommentView):
    """POST ``resolved=1`` resolves the comment's thread, ``resolved=0`` reopens it."""

    def post(self, request, comment_id, number=None):
        self.require_person()
        comment = self.comment(comment_id)
        try:
            thread = services.comment_resolve_set(
                comment=comment, resolved=request.POST.get("resolved") == "1", actor=request.user
            )
        except PermissionDenied as refusal:
            raise PermissionDeniedPage(str(refusal)) from refusal
        return self.back_to(thread.page_path, f"thread-{thread.pk}")


class CommentDeleteView(CommentView):
    """POST: delete one's own comment (a thread's first comment takes its replies)."""

    def post(self, request, comment_id, number=None):
        self.require_person()
        comment = self.comment(comment_id)
        try:
            services.comment_delete(comment=comment, actor=request.user)
        except PermissionDenied as refusal:
            raise PermissionDeniedPage(str(refusal)) from refusal
        messages.success(request, "Comment deleted.")
        return self.back_to(comment.page_path)


def _anchor_from(form) -> dict | None:
    """The anchor the form chose; ValidationError naming ``anchor.lines`` for lines that are
    not numbers (the service checks the rest)."""
    choice = form.get("anchor", "")
    if choice.startswith("heading:"):
        return {"heading": choice.removeprefix("heading:")}
    if choice != "lines":
        return None
    try:
        first = int(form.get("from", ""))
        last = int(form.get("to") or first)
    except ValueError:
        raise ValidationError({"anchor.lines": ["give the first and last lines"]}) from None
    return {"lines": [first, last]}
