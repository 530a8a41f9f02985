"""Hardened defaults: login throttling (django-axes), HTTPS (secure cookies, redirect, HSTS,
the proxies' scheme header) and the Content-Security-Policy of the platform's pages.

The secret and encryption keys are read with the base (``base``), before anything else.
"""

from datetime import timedelta

from .api import TRUSTED_PROXY_COUNT
from .environment import env_number, env_positive
from .hosts import PLATFORM_URL

# Login throttling (django-axes): failed sign-ins on the marketplace's and the admin's login
# pages are recorded in the database, so every web process counts the same failures. After
# LOGIN_FAILURE_LIMIT failures from one address, or for one username, further sign-ins from
# that address or for that username are refused for LOGIN_LOCKOUT_MINUTES from the last
# counted failure; guesses during the lockout neither count nor extend it. The lockout page
# says when to try again (docplatform/login_throttle.py).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# The failures are rows (axes' database handler, each counted under a row lock), never a
# process's memory: N web processes lock out after the failures one would.
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_FAILURE_LIMIT = env_positive(int, "LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_positive(float, "LOGIN_LOCKOUT_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "docplatform.client_address.client_ip"
AXES_LOCKOUT_CALLABLE = "docplatform.login_throttle.lockout_response"
AXES_DISABLE_ACCESS_LOG = True  # failures are kept; successful sign-ins are not logged
AXES_VERBOSE = False

# HTTPS: when the platform is reached over https, cookies are sent over https only, plain
# http is redirected and browsers are told to keep to https (HSTS).
PLATFORM_IS_HTTPS = PLATFORM_URL.startswith("https://")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PLATFORM_IS_HTTPS
SECURE_SSL_REDIRECT = PLATFORM_IS_HTTPS
SECURE_HSTS_SECONDS = (
    env_number(int, "SECURE_HSTS_SECONDS", 365 * 24 * 3600) if PLATFORM_IS_HTTPS else 0
)
if TRUSTED_PROXY_COUNT > 0:
    # The trusted proxies terminate TLS and say which scheme the client used.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy (django-csp) on every platform page: scripts, styles, fonts and
# frames from the platform's own origin only, no inline script or style, no plugins, and no
# page may frame it. The integrations host (INTEGRATIONS_URL) never gets it: its answers are
# the integrations' own. The pages of spaces add images from https addresses
# (docplatform.spaces.views.SpaceView); the marketplace does not, so an integration's
# summary cannot learn who reads it through an image.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
    }
}
