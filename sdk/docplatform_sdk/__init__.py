"""The SDK integration code imports, and the runtime host that runs it. Pure Python: nothing
here imports Django or the platform.

    from docplatform_sdk import create_integration, create_component, Response, block, button
"""

from .context import Context, Environment, PlatformAPI, PlatformAPIError
from .definition import Component, Integration, create_component, create_integration
from .errors import ExposableError
from .http_messages import Request, Response
from .markup import block, button, link, select, switch, text, text_input
from .oauth import (
    CredentialsError,
    OAuthHandler,
    OAuthSetupError,
    TokenResponse,
    create_oauth_handler,
)
from .visitors import VisitorSigningError, sign_visitor_token, visitor_return_url

__all__ = [
    "Component",
    "Context",
    "CredentialsError",
    "Environment",
    "ExposableError",
    "Integration",
    "OAuthHandler",
    "OAuthSetupError",
    "PlatformAPI",
    "PlatformAPIError",
    "Request",
    "Response",
    "TokenResponse",
    "VisitorSigningError",
    "block",
    "button",
    "create_component",
    "create_integration",
    "create_oauth_handler",
    "link",
    "select",
    "sign_visitor_token",
    "switch",
    "text",
    "text_input",
    "visitor_return_url",
]
