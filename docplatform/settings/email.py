"""Outgoing e-mail (invitations to join an organization) and how long an invitation lasts.

In development (``DEBUG`` on) with no ``EMAIL_HOST``, mails are printed on the process's
output (Django's console backend: ``make run`` shows them); once ``EMAIL_HOST`` is set, or
with ``DEBUG`` off, they go through SMTP (Django's default server, ``localhost:25``, when no
host is named). ``EMAIL_BACKEND`` names any other backend. A mail server that fails or does
not answer within ``EMAIL_TIMEOUT`` seconds loses no invitation: its link is still given to
the admin who invited (``teams.services.invitation_create``).
"""

from .base import DEBUG
from .environment import env, env_flag, env_number, env_positive

SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
CONSOLE_BACKEND = "django.core.mail.backends.console.EmailBackend"

_host = env.str("EMAIL_HOST", default="").strip()
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND", default=CONSOLE_BACKEND if DEBUG and not _host else SMTP_BACKEND
)
EMAIL_HOST = _host or "localhost"
EMAIL_PORT = env_number(int, "EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env_flag("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = env_positive(float, "EMAIL_TIMEOUT", 10.0)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="docplatform <noreply@localhost>")

# Days an invitation's link works (unless it is used or revoked before).
INVITATION_DAYS = env_positive(int, "INVITATION_DAYS", 7)
