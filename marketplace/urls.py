from django.contrib.auth import views as auth_views
from django.urls import include, path, reverse_lazy

from . import (
    catalogue_views,
    component_views,
    delivery_views,
    install_views,
    installation_views,
    log_views,
    token_views,
    views,
)

app_name = "marketplace"

organization_pages = [
    path("", catalogue_views.CatalogueView.as_view(), name="catalogue"),
    path(
        "integrations/<slug:name>/",
        catalogue_views.IntegrationView.as_view(),
        name="integration",
    ),
    path(
        "integrations/<slug:name>/install/",
        install_views.InstallView.as_view(),
        name="install",
    ),
    path(
        "integrations/<slug:name>/versions/<int:number>/release/",
        catalogue_views.VersionReleaseView.as_view(),
        name="integration-version-release",
    ),
    path(
        "integrations/<slug:name>/logs/",
        log_views.IntegrationLogsView.as_view(),
        name="integration-logs",
    ),
    path("installations/", installation_views.InstallationListView.as_view(), name="installations"),
    path(
        "installations/<slug:installation_id>/logs/",
        log_views.InstallationLogsView.as_view(),
        name="installation-logs",
    ),
    path(
        "installations/<slug:installation_id>/",
        installation_views.InstallationView.as_view(),
        name="installation",
    ),
    path(
        "installations/<slug:installation_id>/spaces/",
        installation_views.InstallationSpacesView.as_view(),
        name="installation-spaces",
    ),
    path(
        "installations/<slug:installation_id>/pause/",
        installation_views.InstallationStatusView.as_view(),
        {"action": "pause"},
        name="installation-pause",
    ),
    path(
        "installations/<slug:installation_id>/resume/",
        installation_views.InstallationStatusView.as_view(),
        {"action": "resume"},
        name="installation-resume",
    ),
    path(
        "installations/<slug:installation_id>/connect/",
        installation_views.InstallationConnectView.as_view(),
        name="installation-connect",
    ),
    path(
        "installations/<slug:installation_id>/disconnect/",
        installation_views.InstallationDisconnectView.as_view(),
        name="installation-disconnect",
    ),
    path(
        "installations/<slug:installation_id>/approve-scopes/",
        installation_views.InstallationScopesApproveView.as_view(),
        name="installation-approve-scopes",
    ),
    path(
        "installations/<slug:installation_id>/uninstall/",
        installation_views.InstallationUninstallView.as_view(),
        name="installation-uninstall",
    ),
    path(
        "installations/<slug:installation_id>/webhook/ping/",
        installation_views.WebhookPingView.as_view(),
        name="webhook-ping",
    ),
    path(
        "installations/<slug:installation_id>/webhook/rotate-secret/",
        installation_views.WebhookSecretRotateView.as_view(),
        name="webhook-rotate-secret",
    ),
    path(  # ``deliveryid`` (at most 18 digits) is registered by docplatform.urls
        "installations/<slug:installation_id>/deliveries/<deliveryid:delivery_id>/redeliver/",
        installation_views.DeliveryRedeliverView.as_view(),
        name="delivery-redeliver",
    ),
    path(
        "installations/<slug:installation_id>/deliveries/",
        delivery_views.DeliveryListView.as_view(),
        name="deliveries",
    ),
    path(
        "installations/<slug:installation_id>/deliveries/<deliveryid:delivery_id>/",
        delivery_views.DeliveryDetailView.as_view(),
        name="delivery",
    ),
    path(
        "installations/<slug:installation_id>/deliveries/<deliveryid:delivery_id>/resend/",
        delivery_views.DeliveryResendView.as_view(),
        name="delivery-resend",
    ),
    path(
        "installations/<slug:installation_id>/deliveries-test-event/",
        delivery_views.TestEventView.as_view(),
        name="delivery-test-event",
    ),
    path(
        "installations/<slug:installation_id>/deliveries-test-event/sample/",
        delivery_views.TestEventSampleView.as_view(),
        name="delivery-test-event-sample",
    ),
    path(
        "installations/<slug:installation_id>/deliveries-resend-failed/",
        delivery_views.ResendFailedView.as_view(),
        name="delivery-resend-failed",
    ),
    path(
        "installations/<slug:installation_id>/deliveries-resend-failed/progress/",
        delivery_views.ResendProgressView.as_view(),
        name="delivery-resend-progress",
    ),
    path(
        "installations/<slug:installation_id>/deliveries-replays/",
        delivery_views.ReplayView.as_view(),
        name="delivery-replay",
    ),
    path(
        "installations/<slug:installation_id>/deliveries-replays/<int:replay_id>/cancel/",
        delivery_views.ReplayCancelView.as_view(),
        name="delivery-replay-cancel",
    ),
    path(
        "installations/<slug:installation_id>/webhook/reenable/",
        delivery_views.EndpointReenableView.as_view(),
        name="webhook-reenable",
    ),
    path(  # a componentId is any text without spaces, slashes included
        "installations/<slug:installation_id>/components/<path:component_id>/actions/",
        component_views.ComponentActionView.as_view(),
        name="component-actions",
    ),
    path(
        "installations/<slug:installation_id>/components/<path:component_id>/insert/",
        component_views.BlockInsertView.as_view(),
        name="block-insert",
    ),
    path(
        "installations/<slug:installation_id>/components/<path:component_id>/remove/",
        component_views.BlockRemoveView.as_view(),
        name="block-remove",
    ),
]

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="marketplace/login.html",
            redirect_authenticated_user=True,
            next_page=reverse_lazy("marketplace:home"),
        ),
        name="login",
    ),
    path(
        "logout/",
        auth_views.LogoutView.as_view(next_page=reverse_lazy("marketplace:login")),
        name="logout",
    ),
    path(
        "settings/developer/",
        token_views.DeveloperSettingsView.as_view(),
        name="developer-settings",
    ),
    path(  # ``tokenid`` (at most 18 digits) is registered by docplatform.urls
        "settings/developer/tokens/<tokenid:token_id>/revoke/",
        token_views.TokenRevokeView.as_view(),
        name="token-revoke",
    ),
    path("install/<slug:name>/", catalogue_views.InstallLinkView.as_view(), name="install-link"),
    path("assets/<int:asset_id>/", catalogue_views.AssetView.as_view(), name="asset"),
    path("orgs/<slug:organization>/", include(organization_pages)),
]
