"""The history of a space: its revisions (by a person, or by an integration's installation),
each readable as it was, compared with the one before it and restorable (a new revision with
its content); and the space's settings, where its admins also delete it."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse

from ..gitsync import selectors as gitsync_selectors
from ..models import Space
from ..search_index import search_languages
from ..sites import selectors as sites_selectors
from . import selectors, services, space_services
from .nav_html import nav_html
from .reading import page_document, shown_html, table_of_contents
from .views import PermissionDeniedPage, SpaceView


class HistoryView(SpaceView):
    tab = "history"

    def get(self, request):
        self.require_member()
        entries, older = selectors.history(self.space, before=request.GET.get("before"))
        return self.page("docs/history.html", {"entries": entries, "older": older})


class RevisionView(SpaceView):
    """A revision read as it was: its navigation and one of its pages."""

    tab = "history"

    def get(self, request, revision_id, page_path=None):
        self.require_member()
        revision = selectors.revision_of(self.space, revision_id)
        page = selectors.page_in(revision.pk, page_path)
        if page is None and page_path is not None:
            raise Http404("No such page in this revision.")
        roots, ordered = selectors.navigation(revision.pk)
        context = {
            "revision": revision,
            "nav_tree": nav_html(
                revision.pk,
                roots,
                ordered,
                prefix=reverse("docs:revision", args=[self.space.pk, revision.pk]),
                current_path=page and page.path,
            ),
        }
        if page is not None:
            document = page_document(page)
            place = self.block_place(page.path, interactive=False)
            now = selectors.page_in(self.space.current_revision_id, page.path)
            context |= {
                "page_obj": page,
                "content": shown_html(document, lambda: place),
                "toc": table_of_contents(document),
                "show_condition": True,
                "restorable": self.may_edit
                and (
                    now is None
                    or (now.title, now.body, now.condition)
                    != (page.title, page.body, page.condition)
                ),
                "deleted_since": now is None,
            }
        return self.page("docs/revision.html", context)


class PageRestoreView(SpaceView):
    """One page as it was in a revision, restored alone (``services.page_restore``)."""

    def post(self, request, revision_id):
        self.require_direct_save()
        revision = selectors.revision_of(self.space, revision_id)
        path = request.POST.get("path", "")
        try:
            services.page_restore(
                space=self.space, path=path, revision=revision, author=request.user
            )
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
            return redirect(reverse("docs:revision-page", args=[self.space.pk, revision.pk, path]))
        messages.success(request, f"Page restored as it was in revision {revision.pk[:8]}.")
        return redirect(reverse("docs:page", args=[self.space.pk, path]))


class RevisionDiffView(SpaceView):
    tab = "history"

    def get(self, request, revision_id):
        self.require_member()
        revision = selectors.revision_of(self.space, revision_id)
        changes = selectors.revision_diff(revision)
        return self.page("docs/diff.html", {"revision": revision, "changes": changes})


class RevisionRestoreView(SpaceView):
    def post(self, request, revision_id):
        self.require_direct_save()
        revision = selectors.revision_of(self.space, revision_id)
        restored = services.revision_restore(
            space=self.space, revision=revision, author=request.user
        )
        messages.success(
            request,
            f"Revision {revision.pk[:8]} restored as the new revision {restored.pk[:8]}.",
        )
        return redirect(reverse("docs:history", args=[self.space.pk]))


class SpaceAdminView(SpaceView):
    """A page of the space's settings: for the organization's admins."""

    tab = "settings"

    def require_admin(self):
        if self.role is None:
            raise Http404("No such space.")
        if not selectors.access.may_administer(self.role):
            raise PermissionDeniedPage(
                "Only the organization's admins may change a space's settings."
            )


class SpaceSettingsView(SpaceAdminView):
    """The space's title, visibility and whether readers may comment (and the way to delete
    it)."""

    def get(self, request):
        self.require_admin()
        space = self.space
        return self._form(space.title, space.visibility, space.readers_may_comment, {})

    def post(self, request):
        self.require_admin()
        title = request.POST.get("title", "")
        visibility = request.POST.get("visibility", "")
        readers_may_comment = request.POST.get("readers_may_comment") == "1"
        search_language = request.POST.get("search_language")  # absent: not offered (SQLite)
        try:
            space_services.space_update(
                space=self.space,
                actor=request.user,
                title=title,
                visibility=visibility,
                readers_may_comment=readers_may_comment,
                search_language=search_language,
            )
        except ValidationError as error:
            errors = error.message_dict
            return self._form(
                title, visibility, readers_may_comment, errors, status=400, language=search_language
            )
        messages.success(request, "Settings saved.")
        return redirect(reverse("docs:settings", args=[self.space.pk]))

    def _form(self, title, visibility, readers_may_comment, errors, status=200, language=None):
        """The form with the values given (``language``: the space's search language when
        None)."""
        return self.page(
            "docs/settings.html",
            {
                "title_value": title,
                "visibility_value": visibility,
                "readers_may_comment_value": readers_may_comment,
                "search_language_value": language or self.space.search_language,
                "search_languages": search_languages(),
                "visibilities": Space.Visibility.choices,
                "errors": errors,
                **gitsync_selectors.settings_context(self.space),
                **sites_selectors.feedback_context(self.space),
            },
            status=status,
        )


class SpaceDeleteView(SpaceAdminView):
    """Deleting the space, after a confirmation that names it and has the admin type its
    title: its pages, revisions and installations go with it."""

    def get(self, request):
        self.require_admin()
        return self.page("docs/space_delete.html", {"errors": {}})

    def post(self, request):
        self.require_admin()
        if request.POST.get("confirm", "").strip() != self.space.title:
            errors = {"confirm": [f"type the space's title, {self.space.title}, to delete it"]}
            return self.page("docs/space_delete.html", {"errors": errors}, status=400)
        title = self.space.title
        space_services.space_delete(space=self.space, actor=request.user)
        messages.success(request, f"The space {title} is deleted.")
        return redirect("docs:spaces")
