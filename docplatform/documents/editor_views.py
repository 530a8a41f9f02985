"""The editor: a page's title, path and Markdown beside a live preview, new pages, deleting
and reordering, and the quick insert menu's entries. Every save names the revision it was
edited from, so nothing another person saved meanwhile is overwritten (``services``)."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse

from .. import content
from ..markdown import document_from_json
from . import selectors, services
from .blocks import provider
from .reading import shown_html
from .selectors import line_diff
from .views import SpaceView


class PageForm(forms.Form):
    """What the editor posts; the services check the content itself (one home)."""

    title = forms.CharField(required=False, strip=False)
    path = forms.CharField(required=False)
    body = forms.CharField(required=False, strip=False, widget=forms.Textarea)
    message = forms.CharField(required=False, max_length=content.MAX_MESSAGE_LENGTH)
    based_on = forms.CharField(required=False, max_length=32)

    def add_service_errors(self, error: ValidationError) -> None:
        for field, problems in error.message_dict.items():
            target = field if field in self.fields else None
            for problem in problems:
                self.add_error(target, problem)


class EditorMixin:
    def editor(self, form, *, page_path=None, conflict=None, status=200):
        return self.page(
            "docs/editor.html",
            {
                "form": form,
                "page_path": page_path,
                "conflict": conflict,
                "block_choices": [
                    choice.__dict__ for choice in provider().choices(self.space, self.request.user)
                ],
                "preview_url": reverse("docs:preview", args=[self.space.pk]),
                "draft_key": f"{self.space.pk}:{page_path or ':new'}",
            },
            status=status,
        )


class PageEditView(EditorMixin, SpaceView):
    def get(self, request, page_path):
        self.require_editor()
        page = selectors.page_in(self.space.current_revision_id, page_path)
        if page is None:
            raise Http404("No such page.")
        form = PageForm(
            initial={
                "title": page.title,
                "path": page.path,
                "body": page.body,
                "based_on": self.space.current_revision_id,
            }
        )
        return self.editor(form, page_path=page_path)

    def post(self, request, page_path):
        self.require_editor()
        form = PageForm(request.POST)
        if not form.is_valid():
            return self.editor(form, page_path=page_path, status=400)
        data = form.cleaned_data
        try:
            if request.POST.get("keep_mine") and not self._exists(page_path):
                # Theirs removed the page: keeping mine adds it back.
                revision = services.page_create(
                    space=self.space,
                    path=data["path"],
                    title=data["title"],
                    body=data["body"],
                    message=data["message"],
                    author=request.user,
                )
            else:
                revision = services.page_save(
                    space=self.space,
                    path=page_path,
                    new_path=data["path"],
                    title=data["title"],
                    body=data["body"],
                    message=data["message"],
                    author=request.user,
                    based_on=data["based_on"],
                )
        except ValidationError as error:
            form.add_service_errors(error)
            return self.editor(form, page_path=page_path, status=400)
        except services.PageConflict as conflict:
            return self._conflict(form, page_path, conflict)
        messages.success(request, f"Saved as revision {revision.pk[:8]}.")
        return redirect(reverse("docs:page", args=[self.space.pk, data["path"]]) + "?saved=1")

    def _exists(self, path) -> bool:
        return selectors.page_in(self.space.current_revision_id, path) is not None

    def _conflict(self, form, page_path, conflict):
        """The editor again, with the other change beside mine; the form now builds on the
        current revision, so saving again keeps mine on top of theirs."""
        data = {**form.cleaned_data, "based_on": conflict.current.pk if conflict.current else ""}
        mine = {"title": data["title"], "body": data["body"]}
        theirs = conflict.theirs
        author = conflict.current.author if conflict.current else None
        return self.editor(
            PageForm(initial=data),
            page_path=page_path,
            conflict={
                "theirs": theirs,
                "author": author.get_username() if author else "an integration",
                "diff": line_diff(theirs, mine),
            },
            status=409,
        )


class PageNewView(EditorMixin, SpaceView):
    def get(self, request):
        self.require_editor()
        parent = request.GET.get("parent", "")
        form = PageForm(initial={"path": f"{parent}/" if parent else "", "title": ""})
        return self.editor(form)

    def post(self, request):
        self.require_editor()
        form = PageForm(request.POST)
        if not form.is_valid():
            return self.editor(form, status=400)
        data = form.cleaned_data
        try:
            services.page_create(
                space=self.space,
                path=data["path"].strip(),
                title=data["title"],
                body=data["body"],
                message=data["message"],
                author=request.user,
            )
        except ValidationError as error:
            form.add_service_errors(error)
            return self.editor(form, status=400)
        messages.success(request, "Page added.")
        return redirect(
            reverse("docs:page", args=[self.space.pk, data["path"].strip()]) + "?saved=1"
        )


class PagePreviewView(SpaceView):
    """POST the editor's Markdown: its HTML as the reader shows it (blocks read-only)."""

    def post(self, request):
        self.require_editor()
        body = request.POST.get("body", "")
        if len(body.encode("utf-8", "surrogatepass")) > content.MAX_PAGE_BYTES:
            limit = content.MAX_PAGE_BYTES // 1024
            return HttpResponse(
                f'<p class="errors">The page is over {limit} KiB of Markdown: it cannot be saved '
                "like this.</p>",
                status=413,
            )
        fields = content.rendered(body)  # as the page will be stored
        document = document_from_json(fields["html"], fields["outline"])
        place = self.block_place(request.POST.get("page", ""), interactive=False)
        return HttpResponse(shown_html(document, lambda: place))


class PageDeleteView(SpaceView):
    def post(self, request):
        self.require_editor()
        path = request.POST.get("path", "")
        try:
            services.page_delete(
                space=self.space,
                path=path,
                author=request.user,
                based_on=request.POST.get("based_on") or self.space.current_revision_id or "",
            )
        except ValidationError as error:
            messages.error(request, " ".join(_messages(error)))
            return redirect(_page_or_space(self.space, path))
        except services.PageConflict:
            messages.error(
                request, "The page changed since you opened it: read it again before deleting it."
            )
            return redirect(_page_or_space(self.space, path))
        messages.success(request, "Page deleted. The history keeps it: restore it from there.")
        return redirect(reverse("docs:space", args=[self.space.pk]))


class PageMoveView(SpaceView):
    def post(self, request):
        self.require_editor()
        path = request.POST.get("path", "")
        try:
            services.page_move(
                space=self.space,
                path=path,
                direction=request.POST.get("direction", ""),
                author=request.user,
            )
        except ValidationError as error:
            messages.error(request, " ".join(_messages(error)))
        return redirect(_page_or_space(self.space, path))


def _messages(error: ValidationError) -> list[str]:
    return [problem for problems in error.message_dict.values() for problem in problems]


def _page_or_space(space, path: str) -> str:
    if selectors.page_in(space.current_revision_id, path) is not None:
        return reverse("docs:page", args=[space.pk, path])
    return reverse("docs:space", args=[space.pk])
