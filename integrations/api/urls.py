"""The integrations app's REST API routes, under ``/api/v1/`` (the root URLconf includes them
in the ``api`` namespace)."""

from django.urls import include, path

from . import (
    catalogue,
    completion,
    components,
    deliveries,
    installations,
    installing,
    logs,
    oauth,
    own_installation,
    own_integration,
    reviews,
    triggered_events,
    versions,
)

_installation_routes = [
    # The component API first: the busiest. A componentId is any text without spaces,
    # slashes included.
    path(
        "components/<path:component_id>/render/",
        components.ComponentRenderApi.as_view(),
        name="installation-component-render",
    ),
    path(
        "",
        installations.InstallationDetailApi.as_view(),
        name="installation-detail",
    ),
    path(
        "configuration/",
        installations.InstallationConfigurationApi.as_view(),
        name="installation-configuration",
    ),
    path(
        "configuration/<str:property_name>/options/",
        completion.CompletionOptionsApi.as_view(),
        name="installation-completion-options",
    ),
    path(
        "space-selection/",
        installations.InstallationSpaceSelectionApi.as_view(),
        name="installation-space-selection",
    ),
    path(
        "pause/",
        installations.InstallationPauseApi.as_view(),
        name="installation-pause",
    ),
    path(
        "resume/",
        installations.InstallationResumeApi.as_view(),
        name="installation-resume",
    ),
    path(
        "development/",
        versions.InstallationDevelopmentApi.as_view(),
        name="installation-development",
    ),
    path(
        "approve-scopes/",
        installations.InstallationScopesApproveApi.as_view(),
        name="installation-approve-scopes",
    ),
    path(
        "deliveries/",
        deliveries.InstallationDeliveriesApi.as_view(),
        name="installation-deliveries",
    ),
    path(
        "test-events/",
        triggered_events.InstallationTriggerApi.as_view(),
        name="installation-test-events",
    ),
    path(
        "logs/",
        logs.InstallationLogsApi.as_view(),
        name="installation-logs",
    ),
    path(
        "oauth/connect/",
        oauth.OAuthConnectApi.as_view(),
        name="installation-oauth-connect",
    ),
    path(
        "oauth/disconnect/",
        oauth.OAuthDisconnectApi.as_view(),
        name="installation-oauth-disconnect",
    ),
]

urlpatterns = [
    # One match of the installation's prefix for all its routes, not one per route; first, as
    # the busiest (no other route matches under installations/<id>/).
    path("installations/<id:installation_id>/", include(_installation_routes)),
    path(
        "orgs/<orgref:org>/installations/",
        installing.OrganizationInstallationsApi.as_view(),
        name="organization-installations",
    ),
    path(
        "spaces/<id:space_id>/installations/",
        installing.SpaceInstallationsApi.as_view(),
        name="space-installations",
    ),
    path(
        "sites/<id:site_id>/installations/",
        installing.SiteInstallationsApi.as_view(),
        name="site-installations",
    ),
    path("integrations/", catalogue.IntegrationListApi.as_view(), name="integrations"),
    path("integrations/<name:name>/", catalogue.IntegrationDetailApi.as_view(), name="integration"),
    path(
        "integrations/<name:name>/versions/",
        catalogue.IntegrationVersionListApi.as_view(),
        name="integration-versions",
    ),
    path(
        "integrations/<name:name>/versions/<int:number>/",
        versions.IntegrationVersionApi.as_view(),
        name="integration-version",
    ),
    path(
        "integrations/<name:name>/versions/<int:number>/release/",
        versions.IntegrationVersionReleaseApi.as_view(),
        name="integration-version-release",
    ),
    path(
        "integrations/<name:name>/logs/", logs.IntegrationLogsApi.as_view(), name="integration-logs"
    ),
    path(
        "integrations/<name:name>/review/",
        reviews.IntegrationReviewApi.as_view(),
        name="integration-review",
    ),
    path(
        "integrations/<name:name>/install-link/",
        catalogue.InstallLinkApi.as_view(),
        name="integration-install-link",
    ),
    path(
        "integrations/<name:name>/install-link/rotate/",
        catalogue.InstallLinkRotateApi.as_view(),
        name="integration-install-link-rotate",
    ),
    path(
        "deliveries/<deliveryid:delivery_id>/",
        deliveries.DeliveryDetailApi.as_view(),
        name="delivery",
    ),
    path(
        "deliveries/<deliveryid:delivery_id>/redeliver/",
        deliveries.DeliveryRedeliverApi.as_view(),
        name="delivery-redeliver",
    ),
    path("installation/", own_installation.OwnInstallationApi.as_view(), name="own-installation"),
    path(
        "integration/installations/",
        own_integration.OwnIntegrationInstallationsApi.as_view(),
        name="own-integration-installations",
    ),
    path("installation/oauth/check", oauth.OAuthStateCheckApi.as_view(), name="oauth-check"),
    path("installation/oauth/complete", oauth.OAuthCompleteApi.as_view(), name="oauth-complete"),
]
