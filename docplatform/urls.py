from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path, register_converter
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from integrations.api import catalogue, completion, components, installations, oauth
from webhooks import api as webhooks_api

from . import api, api_tokens
from .api_inputs import (
    DeliveryIdConverter,
    IntegrationNameConverter,
    ObjectIdConverter,
    OrganizationRefConverter,
)

register_converter(ObjectIdConverter, "id")
register_converter(OrganizationRefConverter, "orgref")
register_converter(IntegrationNameConverter, "name")
register_converter(DeliveryIdConverter, "deliveryid")
register_converter(DeliveryIdConverter, "tokenid")  # a row id: at most 18 digits

api_v1 = [
    path("me/", api.MeApi.as_view(), name="me"),
    path("me/tokens/", api_tokens.MyTokensApi.as_view(), name="my-tokens"),
    path("me/tokens/<tokenid:token_id>/", api_tokens.MyTokenApi.as_view(), name="my-token"),
    path("orgs/", api.OrganizationListApi.as_view(), name="organizations"),
    path("orgs/<orgref:org>/", api.OrganizationDetailApi.as_view(), name="organization"),
    path("orgs/<orgref:org>/spaces/", api.SpaceListApi.as_view(), name="organization-spaces"),
    path("orgs/<orgref:org>/sites/", api.SiteListApi.as_view(), name="organization-sites"),
    path("orgs/<orgref:org>/events/", api.EventListApi.as_view(), name="organization-events"),
    path(
        "orgs/<orgref:org>/installations/",
        installations.OrganizationInstallationsApi.as_view(),
        name="organization-installations",
    ),
    path("spaces/<id:space_id>/", api.SpaceDetailApi.as_view(), name="space"),
    path(
        "spaces/<id:space_id>/revisions/", api.SpaceRevisionsApi.as_view(), name="space-revisions"
    ),
    path("spaces/<id:space_id>/pages/", api.SpacePagesApi.as_view(), name="space-pages"),
    path(
        "spaces/<id:space_id>/gitsync/start/",
        api.GitSyncStartApi.as_view(),
        name="space-gitsync-start",
    ),
    path(
        "spaces/<id:space_id>/gitsync/complete/",
        api.GitSyncCompleteApi.as_view(),
        name="space-gitsync-complete",
    ),
    path("spaces/<id:space_id>/views/", api.SpaceViewApi.as_view(), name="space-views"),
    path(
        "spaces/<id:space_id>/installations/",
        installations.SpaceInstallationsApi.as_view(),
        name="space-installations",
    ),
    path(
        "revisions/<id:revision_id>/pages/", api.RevisionPagesApi.as_view(), name="revision-pages"
    ),
    path("sites/<id:site_id>/", api.SiteDetailApi.as_view(), name="site"),
    path(
        "sites/<id:site_id>/installations/",
        installations.SiteInstallationsApi.as_view(),
        name="site-installations",
    ),
    path(
        "beacon/sites/<id:site_id>/views/",
        api.BeaconSiteViewApi.as_view(),
        name="beacon-site-views",
    ),
    path(
        "beacon/sites/<id:site_id>/feedback/",
        api.BeaconPageFeedbackApi.as_view(),
        name="beacon-page-feedback",
    ),
    path("integrations/", catalogue.IntegrationListApi.as_view(), name="integrations"),
    path("integrations/<name:name>/", catalogue.IntegrationDetailApi.as_view(), name="integration"),
    path(
        "integrations/<name:name>/versions/",
        catalogue.IntegrationVersionListApi.as_view(),
        name="integration-versions",
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
        "installations/<id:installation_id>/",
        installations.InstallationDetailApi.as_view(),
        name="installation-detail",
    ),
    path(
        "installations/<id:installation_id>/configuration/",
        installations.InstallationConfigurationApi.as_view(),
        name="installation-configuration",
    ),
    path(
        "installations/<id:installation_id>/configuration/<str:property_name>/options/",
        completion.CompletionOptionsApi.as_view(),
        name="installation-completion-options",
    ),
    path(
        "installations/<id:installation_id>/space-selection/",
        installations.InstallationSpaceSelectionApi.as_view(),
        name="installation-space-selection",
    ),
    path(
        "installations/<id:installation_id>/pause/",
        installations.InstallationPauseApi.as_view(),
        name="installation-pause",
    ),
    path(
        "installations/<id:installation_id>/resume/",
        installations.InstallationResumeApi.as_view(),
        name="installation-resume",
    ),
    path(
        "installations/<id:installation_id>/approve-scopes/",
        installations.InstallationScopesApproveApi.as_view(),
        name="installation-approve-scopes",
    ),
    path(
        "installations/<id:installation_id>/deliveries/",
        installations.InstallationDeliveriesApi.as_view(),
        name="installation-deliveries",
    ),
    path(
        "installations/<id:installation_id>/webhook/ping/",
        webhooks_api.WebhookPingApi.as_view(),
        name="installation-webhook-ping",
    ),
    path(
        "installations/<id:installation_id>/webhook/secret/",
        webhooks_api.WebhookSecretApi.as_view(),
        name="installation-webhook-secret",
    ),
    path(
        "installations/<id:installation_id>/webhook/secret/rotate/",
        webhooks_api.WebhookSecretRotateApi.as_view(),
        name="installation-webhook-secret-rotate",
    ),
    path(
        "installations/<id:installation_id>/oauth/connect/",
        oauth.OAuthConnectApi.as_view(),
        name="installation-oauth-connect",
    ),
    path(
        "installations/<id:installation_id>/oauth/disconnect/",
        oauth.OAuthDisconnectApi.as_view(),
        name="installation-oauth-disconnect",
    ),
    path(  # a componentId is any text without spaces, slashes included
        "installations/<id:installation_id>/components/<path:component_id>/render/",
        components.ComponentRenderApi.as_view(),
        name="installation-component-render",
    ),
    path(
        "deliveries/<deliveryid:delivery_id>/",
        installations.DeliveryDetailApi.as_view(),
        name="delivery",
    ),
    path(
        "deliveries/<deliveryid:delivery_id>/redeliver/",
        installations.DeliveryRedeliverApi.as_view(),
        name="delivery-redeliver",
    ),
    path("installation/", installations.OwnInstallationApi.as_view(), name="own-installation"),
    path("installation/oauth/check", oauth.OAuthStateCheckApi.as_view(), name="oauth-check"),
    path("installation/oauth/complete", oauth.OAuthCompleteApi.as_view(), name="oauth-complete"),
]

urlpatterns = [
    path("", RedirectView.as_view(url="/marketplace/", permanent=False)),
    path("admin/", admin.site.urls),
    path("marketplace/", include("marketplace.urls")),
    path("api/v1/", include((api_v1, "api"))),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path(  # its script comes from its own URL (CSP); Swagger UI needs its inline styles
        "api/docs/",
        csp_update({"style-src": ["'unsafe-inline'"], "img-src": ["data:"]})(
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="api-docs",
    ),
]

handler404 = "docplatform.api_errors.not_found"
handler500 = "docplatform.api_errors.server_error"
