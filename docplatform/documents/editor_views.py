"""The editor: a page's title, path and Markdown beside a live preview, new pages, deleting
and reordering, and the quick insert menu's entries. Every save names the revision it was
edited from, so nothing another person saved meanwhile is overwritten (``services``)."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from .. import content
from ..merging import CHOICES, merge_page, merge_text
from ..reading import navigation
from ..reading.adaptive import claims_from_text, for_visitor, page_shown
from ..reading.blocks import provider
from ..reading.document import shown_html
from ..rendering import document_from_json
from ..spaces.views import SpaceView
from . import selectors, services
from .changes import selectors as selectors_of_changes
from .changes import services as change_services


class PageForm(forms.Form):
    """What the editor posts; the services check the content itself (one home)."""

    title = forms.CharField(required=False, strip=False)
    path = forms.CharField(required=False)
    body = forms.CharField(required=False, strip=False, widget=forms.Textarea)
    condition = forms.CharField(required=False)
    message = forms.CharField(required=False, max_length=content.MAX_MESSAGE_LENGTH)
    based_on = forms.CharField(required=False, max_length=32)

    def clean_body(self) -> str:
        """Lines end in ``\n`` as stored, whatever the browser sent (a textarea sends
        ``\r\n``): a merge then compares lines, not line endings."""
        return self.cleaned_data["body"].replace("\r\n", "\n")

    def add_service_errors(self, error: ValidationError) -> None:
        for field, problems in error.message_dict.items():
            target = field if field in self.fields else None
            for problem in problems:
                self.add_error(target, problem)


class EditorMixin:
    def editor(self, form, *, page_path=None, conflict=None, status=200, **extra):
        """The editor page; ``extra``: a change request's editor adds ``change_request``,
        ``cancel_url`` and its own ``draft_key``."""
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
                "direct_save": self.may_save_directly,
                **extra,
            },
            status=status,
        )


class PageEditView(EditorMixin, SpaceView):
    def get(self, request, page_path):
        self.require_editor()
        page = navigation.page_in(self.space.current_revision_id, page_path)
        if page is None:
            raise Http404("No such page.")
        form = PageForm(
            initial={
                "title": page.title,
                "path": page.path,
                "body": page.body,
                "condition": page.condition,
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
        if request.POST.get("to_change_request"):
            return self._to_change_request(form, page_path)
        self.require_direct_save()
        if request.POST.get("resolve_base"):
            return self._resolve(form, page_path)
        try:
            if request.POST.get("keep_mine") and not self._exists(page_path):
                # Theirs removed the page: keeping mine adds it back.
                revision = services.page_create(
                    space=self.space,
                    path=data["path"],
                    title=data["title"],
                    body=data["body"],
                    condition=data["condition"],
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
                    condition=data["condition"],
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

    def _to_change_request(self, form, page_path):
        """ "Save to a change request": a new one, made from the revision the page was opened
        at, holding this edit; the space is not touched."""
        data = form.cleaned_data
        try:
            with transaction.atomic():
                opened = change_services.change_request_open(
                    space=self.space,
                    subject=data["message"] or f"Edit {data['title'].strip()[:190]}",
                    actor=self.request.user,
                    based_on=data["based_on"] or None,
                )
                change_services.change_request_page_save(
                    change_request=opened,
                    path=page_path,
                    new_path=data["path"],
                    title=data["title"],
                    body=data["body"],
                    condition=data["condition"],
                    message=data["message"],
                    actor=self.request.user,
                    based_on=selectors_of_changes.head_of(opened).pk,
                )
        except ValidationError as error:
            form.add_service_errors(error)
            return self.editor(form, page_path=page_path, status=400)
        messages.success(self.request, f"Saved to the new change request #{opened.number}.")
        return redirect(reverse("docs:change-request", args=[self.space.pk, opened.number]))

    def _exists(self, path) -> bool:
        return navigation.page_in(self.space.current_revision_id, path) is not None

    def _conflict(self, form, page_path, conflict, *, resolve_base=None, error=""):
        """The editor again, with each change of theirs that overlaps mine to resolve (theirs,
        mine, both, or my own text); mine stays in the editor, unsaved. The form now builds
        on the current revision, and names the revision both started from."""
        data = {**form.cleaned_data, "based_on": conflict.current.pk if conflict.current else ""}
        author = conflict.current.author if conflict.current else None
        author_name = conflict.current.author_label if conflict.current else ""
        clash = conflict.clash
        return self.editor(
            PageForm(initial=data),
            page_path=page_path,
            conflict={
                "theirs": conflict.theirs,
                "author": author.get_username() if author else author_name or "an integration",
                "title": clash.title if clash else None,
                "condition": clash.condition if clash else None,
                "hunks": list(enumerate(clash.body.hunks)) if clash and clash.body else [],
                "resolve_base": resolve_base or form.cleaned_data["based_on"],
                "error": error,
            },
            status=409,
        )

    def _resolve(self, form, page_path):
        """Mine, with the person's choice for each hunk that overlapped theirs, saved on top
        of theirs (merged again if someone saved since)."""
        data = form.cleaned_data
        base = navigation.page_in(self.request.POST["resolve_base"], page_path)
        theirs = navigation.page_in(data["based_on"], page_path)
        if (
            base is None
            or theirs is None
            or not (base.space_id == theirs.space_id == self.space.pk)
        ):
            raise Http404("No such page in those revisions.")
        mine = {
            "path": data["path"],
            "title": data["title"],
            "body": data["body"],
            "condition": data["condition"],
        }
        merged, clash = merge_page(_as_dict(base), _as_dict(theirs), mine)
        if clash is not None:
            try:
                body = (
                    clash.body.text(self._chosen_hunks(clash))
                    if clash.body
                    else merge_text(base.body, theirs.body, mine["body"]).text()
                )
                merged = {
                    **mine,
                    "title": self._chosen(clash.title, mine["title"], "title"),
                    "condition": self._chosen(clash.condition, mine["condition"], "condition"),
                    "body": body,
                }
            except ValueError as problem:
                conflict = services.PageConflict(
                    current=selectors.revision_of(self.space, data["based_on"]),
                    theirs=_as_dict(theirs),
                    clash=clash,
                )
                return self._conflict(
                    form,
                    page_path,
                    conflict,
                    resolve_base=self.request.POST["resolve_base"],
                    error=str(problem),
                )
        try:
            revision = services.page_save(
                space=self.space,
                path=page_path,
                new_path=merged["path"],
                title=merged["title"],
                body=merged["body"],
                condition=merged.get("condition", ""),
                message=data["message"],
                author=self.request.user,
                based_on=data["based_on"],
            )
        except ValidationError as error:
            form.add_service_errors(error)
            return self.editor(form, page_path=page_path, status=400)
        except services.PageConflict as conflict:
            return self._conflict(form, page_path, conflict)
        messages.success(self.request, f"Merged and saved as revision {revision.pk[:8]}.")
        return redirect(reverse("docs:page", args=[self.space.pk, merged["path"]]) + "?saved=1")

    def _chosen(self, hunk, mine: str, field: str) -> str:
        """The title or condition the person chose where both sides changed it."""
        if hunk is None:
            return mine
        choice = self.request.POST.get(f"{field}-choice", "")
        if choice not in ("theirs", "mine"):
            raise ValueError(f"choose which {field} to keep")
        return hunk.theirs if choice == "theirs" else hunk.mine

    def _chosen_hunks(self, clash) -> list[tuple[str, str]]:
        chosen = []
        for index, _hunk in enumerate(clash.body.hunks):
            choice = self.request.POST.get(f"hunk-{index}", "")
            if choice not in CHOICES:
                raise ValueError("choose theirs, mine, both or your own text for each change")
            text = self.request.POST.get(f"hunk-{index}-text", "").replace("\r\n", "\n")
            chosen.append((choice, text if not text or text.endswith("\n") else text + "\n"))
        return chosen


def _as_dict(page) -> dict:
    return {"path": page.path, "title": page.title, "body": page.body, "condition": page.condition}


class PageNewView(EditorMixin, SpaceView):
    def get(self, request):
        self.require_direct_save()
        parent = request.GET.get("parent", "")
        form = PageForm(initial={"path": f"{parent}/" if parent else "", "title": ""})
        return self.editor(form)

    def post(self, request):
        self.require_direct_save()
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
                condition=data["condition"],
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
    """POST the editor's Markdown: its HTML as the reader shows it (blocks read-only), every
    adaptive section marked with its condition; with ``claims`` (JSON), as a published site's
    visitor with these claims sees it: only the sections whose conditions hold, or a notice
    that the page's ``condition`` hides the page from them."""

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
        claims_text = request.POST.get("claims", "").strip()
        if claims_text:
            try:
                claims = claims_from_text(claims_text)
            except ValueError as problem:
                return _preview_error("claims", str(problem))
            condition = request.POST.get("condition", "").strip()
            problem = content.page_condition_problem(condition)
            if problem:
                return _preview_error("condition", problem)
            if not page_shown(condition, claims):
                return HttpResponse(
                    format_html(
                        '<p class="adaptive-hidden">A visitor with these claims does not see '
                        "this page: its condition <code>{}</code> does not hold for them (on a "
                        "site it answers 404).</p>",
                        condition,
                    )
                )
            document = for_visitor(document, claims)
        place = self.block_place(request.POST.get("page", ""), interactive=False)
        return HttpResponse(shown_html(document, lambda: place))


def _preview_error(field: str, problem: str) -> HttpResponse:
    return HttpResponse(format_html('<p class="errors">{}: {}</p>', field, problem), status=400)


class PagePresenceView(SpaceView):
    """The editor's poll (every 10 s): this person has ``path`` open; who else has."""

    def post(self, request):
        self.require_editor()
        path = request.POST.get("path", "")
        if content.page_path_problem(path):
            return JsonResponse({"others": []}, status=400)
        others = services.page_presence_mark(space=self.space, path=path, user=request.user)
        return JsonResponse({"others": others})


class PageDeleteView(SpaceView):
    def post(self, request):
        self.require_direct_save()
        path = request.POST.get("path", "")
        try:
            deleted = services.page_delete(
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
        restore_from = reverse("docs:revision-page", args=[self.space.pk, deleted.parent_id, path])
        messages.success(
            request,
            format_html(
                'Page deleted. The history keeps it: <a href="{}">restore it</a> alone, the '
                "other pages staying as they are.",
                restore_from,
            ),
        )
        return redirect(reverse("docs:space", args=[self.space.pk]))


class PageMoveView(SpaceView):
    def post(self, request):
        self.require_direct_save()
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
    if navigation.page_in(space.current_revision_id, path) is not None:
        return reverse("docs:page", args=[space.pk, path])
    return reverse("docs:space", args=[space.pk])
