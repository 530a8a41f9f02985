"""The history of a space: its revisions (by a person, or by an integration's installation),
each readable as it was, compared with the one before it and restorable (a new revision with
its content); and the space's settings, where its admins also delete it."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse

from ..reading import navigation
from ..reading.document import page_document, shown_html, table_of_contents
from ..reading.nav_html import nav_html
from . import selectors, services
from .views import SpaceView


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
        page = navigation.page_in(revision.pk, page_path)
        if page is None and page_path is not None:
            raise Http404("No such page in this revision.")
        roots, ordered = navigation.navigation(revision.pk)
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
            now = navigation.page_in(self.space.current_revision_id, page.path)
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
