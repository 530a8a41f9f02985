"""The Logs tab: an integration's log as its owners see it (every installation), and an
installation's as its organization's admins see it. The same lines, filters and cursor as
the REST API (``integrations.api.logs``), whose answers the page's follow mode polls.

An integration of another organization, or an installation of another, is 404; a member who
is no admin gets 403.
"""

from django.conf import settings
from django.http import Http404
from django.urls import reverse

from docplatform.access import Action
from integrations.api.logs import IntegrationLogFilter, LogFilter
from integrations.models import IntegrationLog
from integrations.policies import act_check
from integrations.selectors import (
    installation_logs,
    integration_installation,
    integration_logs,
    latest_installations,
    log_page,
    organization_integration,
)

from .installation_views import InstallationPageMixin
from .views import OrganizationView

FILTERS = ("kind", "outcome", "since", "installation")
INSTALLATION_CHOICES = 200


class LogPageMixin:
    def log_page(self, lines, query, *, title, api_url, context) -> dict:
        """The page: the lines the filters select (the latest 100), or the filters' errors."""
        status, page = 200, None
        if query.is_valid():
            data = query.validated_data
            page = log_page(
                lines,
                since=data.get("since"),
                kind=data.get("kind"),
                outcome=data.get("outcome"),
                limit=data["limit"],
            )
        else:
            status = 400
        filters = {name: self.request.GET.get(name, "") for name in FILTERS}
        follow = {name: value for name, value in filters.items() if value and name != "since"}
        return self.page(
            "marketplace/logs.html",
            {
                "title": title,
                "lines": page.lines if page else [],
                "next": page.next if page else "",
                "errors": query.errors if status == 400 else {},
                "filters": filters,
                "follow_query": follow,
                "kinds": IntegrationLog.Kind.choices,
                "outcomes": IntegrationLog.Outcome.choices,
                "api_url": api_url,
                "retention_days": settings.INTEGRATION_LOG_RETENTION_DAYS,
                **context,
            },
            status=status,
        )


class InstallationLogsView(LogPageMixin, InstallationPageMixin, OrganizationView):
    """GET: an installation's log, for the admins of its organization."""

    def get(self, request, installation_id):
        installation = self.installation(installation_id, Action.READ_LOGS)
        return self.log_page(
            installation_logs(installation),
            LogFilter(data=request.GET),
            title=installation.integration.title,
            api_url=reverse("api:installation-logs", args=[installation.pk]),
            context={"installation": installation, "integration": installation.integration},
        )


class IntegrationLogsView(LogPageMixin, OrganizationView):
    """GET: an integration's log, every installation, for the admins of its organization."""

    nav = "catalogue"

    def get(self, request, name):
        integration = organization_integration(self.organization, name)
        if integration is None:
            raise Http404("No such integration of this organization.")
        act_check(request.user, Action.READ_LOGS, integration)
        query = IntegrationLogFilter(data=request.GET)
        installation = None
        if query.is_valid() and "installation" in query.validated_data:
            installation = integration_installation(
                integration, query.validated_data["installation"]
            )
            if installation is None:
                raise Http404("No such installation of this integration.")
        # The latest installations to pick from (the one chosen among them); any other is
        # narrowed to by its id, as the API's.
        choices = latest_installations(integration, INSTALLATION_CHOICES)
        if installation is not None and installation not in choices:
            choices.insert(0, installation)
        return self.log_page(
            integration_logs(integration, installation),
            query,
            title=integration.title,
            api_url=reverse("api:integration-logs", args=[integration.name]),
            context={
                "integration": integration,
                "installations": choices,
                "owner_view": True,
            },
        )
