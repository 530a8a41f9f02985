"""What the teams' tests share: acme's people of every role, and reading what an invitation
left behind (its link, the mail that carried it, the audit log's rows)."""

import re
from urllib.parse import urlsplit

from docplatform.audit.models import AuditEntry
from docplatform.models import Membership
from docplatform.teams.models import Invitation
from tests.api_helpers import API

STRONG_PASSWORD = "correct horse battery staple 42"


def invitations_url(org: str = "acme") -> str:
    return f"{API}/orgs/{org}/invitations/"


def members_url(org: str = "acme", username: str = "") -> str:
    return f"{API}/orgs/{org}/members/" + (f"{username}/" if username else "")


def link_path(url: str) -> str:
    """The path of an accept link (the test client speaks to the platform by path)."""
    return urlsplit(url).path


def token_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def link_in(mail) -> str:
    """The accept link in an invitation mail's body."""
    return re.search(r"https?://\S+/invitations/[\w-]+/", mail.body).group(0)


def audit_actions() -> list[str]:
    return list(AuditEntry.objects.order_by("id").values_list("action", flat=True))


def written() -> dict:
    """What refused requests must leave as it was."""
    return {
        "invitations": list(
            Invitation.objects.order_by("id").values_list("id", "accepted_at", "revoked_at")
        ),
        "memberships": sorted(Membership.objects.values_list("organization_id", "user_id", "role")),
        "audit": AuditEntry.objects.count(),
    }
