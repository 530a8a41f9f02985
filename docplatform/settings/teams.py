"""Teams: who may start an organization (README, "Organizations, spaces and sites")."""

from django.core.exceptions import ImproperlyConfigured

from .environment import env

#: ``anyone``: every signed-in person may create an organization (and is its admin);
#: ``staff``: only staff users, so an operator keeps new organizations to themselves.
ORGANIZATION_CREATION_CHOICES = ("anyone", "staff")


def _organization_creation() -> str:
    raw = env.ENVIRON.get("ORGANIZATION_CREATION")
    if raw is None or not raw.strip():
        return "anyone"
    if raw.strip().lower() not in ORGANIZATION_CREATION_CHOICES:
        raise ImproperlyConfigured(
            f"ORGANIZATION_CREATION must be one of {', '.join(ORGANIZATION_CREATION_CHOICES)}, "
            f"not {raw!r}"
        )
    return raw.strip().lower()


ORGANIZATION_CREATION = _organization_creation()
