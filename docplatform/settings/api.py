"""The REST API: Django REST framework (authentication, permissions, parsers, pagination,
throttles), the one error shape (drf-standardized-errors) and the OpenAPI schema
(drf-spectacular), with how many trusted proxies append to X-Forwarded-For."""

from .environment import env, env_number

# How many reverse proxies in front of the platform append to X-Forwarded-For. With 0 (the
# default) the header is ignored and the client address is REMOTE_ADDR, so nobody can forge
# the address the beacon records or the throttles count.
TRUSTED_PROXY_COUNT = env_number(int, "TRUSTED_PROXY_COUNT", 0)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Plug-in apps' own tokens first; a bearer token none of them takes is refused by
        # the personal-token authentication.
        "integrations.authentication.InstallationTokenAuthentication",
        "docplatform.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["docplatform.api.permissions.IsPerson"],
    "DEFAULT_PARSER_CLASSES": ["docplatform.api.inputs.SafeJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "docplatform.api.inputs.BoundedLimitOffsetPagination",
    "PAGE_SIZE": 50,
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_THROTTLE_CLASSES": [
        "docplatform.api.throttles.AnonRateThrottle",
        "docplatform.api.throttles.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="120/minute"),
        "user": env.str("API_THROTTLE_USER", default="1200/minute"),
    },
    "DEFAULT_SCHEMA_CLASS": "docplatform.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "drf_standardized_errors.handler.exception_handler",
}
DRF_STANDARDIZED_ERRORS = {
    "ENABLE_IN_DEBUG_FOR_UNHANDLED_EXCEPTIONS": True,
    "EXCEPTION_HANDLER_CLASS": "docplatform.api.errors.ApiExceptionHandler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Documentation platform API",
    "DESCRIPTION": "Organizations, spaces, sites, integrations, installations and events.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's files come from the sidecar package, not from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Stable names for the error shapes' enums (drf-standardized-errors' recommendation).
    "ENUM_NAME_OVERRIDES": {
        name: f"drf_standardized_errors.openapi_serializers.{name}.choices"
        for name in [
            "ValidationErrorEnum",
            "ClientErrorEnum",
            "ServerErrorEnum",
            *(f"ErrorCode{code}Enum" for code in (401, 403, 404, 405, 406, 415, 429, 500)),
        ]
    }
    | {
        "SpaceVisibilityEnum": "docplatform.models.Space.Visibility",
        "IntegrationVisibilityEnum": "integrations.models.Integration.Visibility",
        "InstallationStatusEnum": "integrations.models.Installation.Status",
        "DeliveryStatusEnum": "docplatform.events.models.Delivery.Status",
        "ApiTokenStatusEnum": "docplatform.api.tokens.TOKEN_STATUSES",
        "EventTypeWhereEnum": "docplatform.api.event_types.WHERE",
        "ChangeRequestStatusEnum": "docplatform.documents.changes.models.ChangeRequest.Status",
        "ReviewVerdictEnum": "docplatform.documents.changes.models.Review.Verdict",
        "GitSyncStatusEnum": "docplatform.gitsync.models.GitSync.Status",
        "ListingReviewStatusEnum": "integrations.review_model.ListingReview.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_standardized_errors.openapi_hooks.postprocess_schema_enums",
        "docplatform.api.schema.postprocess_error_attrs",
        "docplatform.api.schema.postprocess_tags",
        "docplatform.api.event_types.postprocess_event_schemas",
    ],
}
