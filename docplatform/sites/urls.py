"""The URLconf of the published sites' host (``SITES_URL``, see ``sites.middleware``): a site's
spaces, their pages, its search, and what visitors send (feedback, block presses). Page paths
never start with ``-`` (``content.page_path_problem``), so ``-/...`` never shadows a page."""

from django.urls import include, path

from . import views

pages = [
    path("<id:site_id>/", views.SiteHomeView.as_view(), name="home"),
    path("<id:site_id>/search", views.SiteSearchView.as_view(), name="search"),
    path("<id:site_id>/<id:space_id>/", views.SitePageView.as_view(), name="space"),
    path("<id:site_id>/<id:space_id>/-/feedback", views.FeedbackView.as_view(), name="feedback"),
    path("<id:site_id>/<id:space_id>/-/blocks", views.BlockPressView.as_view(), name="block-press"),
    path("<id:site_id>/<id:space_id>/<path:page_path>", views.SitePageView.as_view(), name="page"),
]

# Names under the ``sites`` namespace (``sites:page``), apart from the platform's own.
urlpatterns = [path("", include((pages, "sites")))]

handler404 = "docplatform.sites.views.not_found"
handler500 = "docplatform.sites.views.server_error"
