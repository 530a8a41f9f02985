"""The webhook integration's REST API routes, under ``/api/v1/`` (the root URLconf includes
them in the ``api`` namespace)."""

from django.urls import path

from . import api as webhooks_api

urlpatterns = [
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
        "installations/<id:installation_id>/webhook/endpoint/",
        webhooks_api.WebhookEndpointApi.as_view(),
        name="installation-webhook-endpoint",
    ),
    path(
        "installations/<id:installation_id>/webhook/endpoint/reenable/",
        webhooks_api.WebhookEndpointReenableApi.as_view(),
        name="installation-webhook-endpoint-reenable",
    ),
    path(
        "installations/<id:installation_id>/webhook/replays/",
        webhooks_api.WebhookReplaysApi.as_view(),
        name="installation-webhook-replays",
    ),
    path(
        "installations/<id:installation_id>/webhook/replays/<int:replay_id>/",
        webhooks_api.WebhookReplayApi.as_view(),
        name="installation-webhook-replay",
    ),
    path(
        "installations/<id:installation_id>/webhook/replays/<int:replay_id>/cancel/",
        webhooks_api.WebhookReplayCancelApi.as_view(),
        name="installation-webhook-replay-cancel",
    ),
]
