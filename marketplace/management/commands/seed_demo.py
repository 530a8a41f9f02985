"""Load demo data so a fresh platform has something to show. Safe to run again."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from docplatform.models import Membership, Organization, Site, Space
from docplatform.openapi.selectors import latest_spec
from docplatform.openapi.services import openapi_publish
from docplatform.revisions import space_content_update
from docplatform.teams.selectors import invitations_to
from docplatform.teams.services import invitation_create, invitation_revoke, membership_ensure
from integrations.gateway.failures import PlatformFault
from integrations.models import Installation, Integration
from integrations.operators import OPERATOR
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from integrations.services.reviews import APPROVE, listing_review_decide, pending_review_of

DEMO = Path(__file__).resolve().parents[2] / "demo"
DEMO_INTEGRATIONS = DEMO / "integrations"
#: The demo's OpenAPI document: each of its operations is a quick insert block (built in).
DEMO_OPENAPI = ("acme-api", DEMO / "openapi" / "acme-api.yaml")
#: The example integration with a quick insert block, installed in acme's "Product guide".
#: Publishing checks its code on the runtime host: without one answering it is left out (and
#: `make run`'s ready step adds it once the runtime host answers).
DEMO_BLOCKS = Path(__file__).resolve().parents[3] / "examples" / "quick-insert-counter"
DEMO_BLOCKS_SPACE = "Product guide"
# Demo values for the demo manifests' ${{ env.NAME }} secrets; they reach no real provider.
DEMO_SECRETS_ENV = {"SLACK_CLIENT_ID": "demo-client-id", "SLACK_CLIENT_SECRET": "demo-secret"}
DEMO_PASSWORD = "demo-password"  # noqa: S105 - local demo accounts only, printed for the user
DEMO_SUMMARY = "demo-summary.txt"  # in VAR_DIR: what seed_demo printed last
DEMO_INVITEE = "erin@example.com"  # invited to acme as a member; the link is printed


def demo_blocks_ensure() -> tuple[bool, str]:
    """The quick insert counter published by acme's admin and installed in acme's
    ``DEMO_BLOCKS_SPACE``, once (nothing when the demo data is not there): whether it was
    installed now, and a line that says how it stands. Left out, and said so, while the
    runtime host cannot check its code."""
    space = Space.objects.filter(organization__subdomain="acme", title=DEMO_BLOCKS_SPACE).first()
    name = DEMO_BLOCKS.name
    if space is None:
        return False, f"integration {name}: no demo space {DEMO_BLOCKS_SPACE!r} to install it in"
    if Installation.objects.filter(integration__name=name, space=space).exists():
        return False, f"integration {name}: installed in {DEMO_BLOCKS_SPACE!r}"
    alice = get_user_model().objects.get(username="alice")
    integration = Integration.objects.filter(name=name).first()
    if integration is None:
        try:
            integration_publish_folder(path=DEMO_BLOCKS, publisher=alice)
        except PlatformFault:
            return False, (
                f"integration {name}: not published yet, the runtime host does not answer to "
                "check its code (make run adds it once it does)"
            )
        integration = Integration.objects.get(name=name)
        Command._listing_approve(integration)
    installation_create(
        user=alice, integration=integration, organization=space.organization, space=space
    )
    return True, f"integration {name}: installed in {DEMO_BLOCKS_SPACE!r} (its Counter block)"


class Command(BaseCommand):
    help = "Create demo organizations, users, spaces, a site and integrations (idempotent)."

    def handle(self, *args, **options):
        with transaction.atomic():
            users = self._users()
            acme = self._organization("acme", "Acme Inc.", admin=users["alice"])
            globex = self._organization("globex", "Globex Corporation", admin=users["bob"])
            membership_ensure(organization=acme, user=users["carol"], role=Membership.Role.MEMBER)
            membership_ensure(organization=acme, user=users["dave"], role=Membership.Role.READER)
            self._content(acme, users["alice"])
            self._content(globex, users["bob"])
            invitation_link = self._invitation(acme, inviter=users["alice"])
            self._openapi(acme, users["alice"])
        publishers = {"acme": users["alice"], "globex": users["bob"]}
        for folder in sorted(DEMO_INTEGRATIONS.iterdir()):
            organization = "globex" if folder.name == "partner-search" else "acme"
            result = integration_publish_folder(
                path=folder, publisher=publishers[organization], env=DEMO_SECRETS_ENV
            )
            listed = self._listing_approve(result.version.integration)
            self.stdout.write(f"integration {folder.name}: version {result.version.number}{listed}")
        self.stdout.write(demo_blocks_ensure()[1])
        web = settings.PLATFORM_URL
        summary = [
            f"Demo data ready. Sign in at {web}/admin/ as 'admin', "
            f"password '{DEMO_PASSWORD}'. Users alice (acme admin), carol (acme member), "
            "dave (acme reader) and bob (globex admin) have the same password and sign "
            f"in to the marketplace at {web}/marketplace/ (their spaces: {web}/s/). "
            + invitation_link
        ]
        for site in Site.objects.filter(organization__subdomain__in=["acme", "globex"]):
            summary.append(f"Published site {site.title!r}: {settings.SITES_URL}/{site.pk}/")
        self.stdout.write(self.style.SUCCESS(summary[0]))
        for line in summary[1:]:
            self.stdout.write(line)
        # make run's `ready` process prints it again once everything answers (dev_ready).
        (settings.VAR_DIR / DEMO_SUMMARY).write_text("\n".join(summary) + "\n")

    @staticmethod
    def _openapi(organization, author) -> None:
        name, path = DEMO_OPENAPI
        if latest_spec(organization.pk, name) is None:
            openapi_publish(
                organization=organization, name=name, actor=author, content=path.read_text()
            )

    @staticmethod
    def _listing_approve(integration) -> str:
        """The demo's public integrations are listed for every organization: an operator
        approves their review (as the admin's review queue would)."""
        review = pending_review_of(integration)
        if review is None:
            return ""
        listing_review_decide(
            user=OPERATOR, review=review, decision=APPROVE, reason="demo data", notify=False
        )
        return " (public listing approved)"

    def _users(self):
        model = get_user_model()
        users = {}
        for username in ["admin", "alice", "bob", "carol", "dave"]:
            is_superuser = username == "admin"
            user, created = model.objects.get_or_create(
                username=username,
                defaults={
                    "is_staff": is_superuser,
                    "is_superuser": is_superuser,
                    "email": f"{username}@example.com",
                },
            )
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            users[username] = user
        return users

    @staticmethod
    def _organization(subdomain, title, *, admin):
        organization, _ = Organization.objects.get_or_create(
            subdomain=subdomain, defaults={"title": title}
        )
        membership_ensure(organization=organization, user=admin, role=Membership.Role.ADMIN)
        return organization

    @staticmethod
    def _invitation(organization, *, inviter) -> str:
        """One open invitation to ``DEMO_INVITEE`` (a new link each run: only its hash is
        kept, so an earlier one cannot be shown again and is revoked), until it is accepted.
        No mail is sent: the link is printed."""
        sent = invitations_to(organization, DEMO_INVITEE)
        if any(invitation.state == "accepted" for invitation in sent):
            return f"{DEMO_INVITEE} accepted the demo invitation to {organization.subdomain}."
        for invitation in sent:
            invitation_revoke(invitation=invitation, actor=None)
        made = invitation_create(
            organization=organization,
            email=DEMO_INVITEE,
            role=Membership.Role.MEMBER,
            invited_by=inviter,
            notify=False,
        )
        return (
            f"{DEMO_INVITEE} is invited to {organization.subdomain} as a member: open "
            f"{made.url} to accept."
        )

    @staticmethod
    def _content(organization, author):
        if organization.spaces.exists():
            return
        spaces = []
        for title, pages in DEMO_SPACES:
            space = Space.objects.create(
                organization=organization, title=title, visibility=Space.Visibility.PUBLIC
            )
            # through the one service that writes revisions: rendered and searchable at once
            space_content_update(
                space=space,
                author=author,
                message="First draft",
                pages=[
                    {
                        "path": path,
                        "title": page_title,
                        "body": body.replace("@PLATFORM@", settings.PLATFORM_URL),
                    }
                    for path, page_title, body in pages
                ],
            )
            spaces.append(space)
        site = Site.objects.create(
            organization=organization, title=f"{organization.title} docs", published=True
        )
        site.spaces.set(spaces)


# The demo's pages are read on the platform and on the published sites alike: they say what is
# true in both places, and their links are the configured PLATFORM_URL (@PLATFORM@ below).
GETTING_STARTED = """\
Welcome! This guide takes you from an empty account to your first published page.

## Create a space

A *space* holds the pages of one body of documentation. Members of the organization find
theirs on the platform, at [@PLATFORM@/s/](@PLATFORM@/s/), or ask an admin of the organization for
a new one.

## Write a page

On the platform, a member opens a page of the space and presses **Edit**: Markdown is on the
left, the preview on the right.

| you type | you get |
| :-- | :-- |
| `*italic*` | *italic* |
| `**bold**` | **bold** |
| `~~gone~~` | ~~gone~~ |

In the editor, `Ctrl` + `/` (or `⌘` + `/`) inserts a block from an installed integration or
an operation of the organization's OpenAPI documents.

## Publish

Every save is a revision (the space's **History** compares and restores them), and the
organization's published sites show the latest one, as this page shows. Through the API:

```sh
curl -H "Authorization: Bearer $TOKEN" @PLATFORM@/api/v1/spaces/
```
"""

DEMO_SPACES = [
    (
        "Product guide",
        [
            ("getting-started", "Getting started", GETTING_STARTED),
            ("getting-started/install", "Install", "# Install\n\nRun `make run`.\n"),
            ("faq", "FAQ", "**Is it free?** Yes.\n\n> Ask us anything.\n"),
        ],
    ),
    (
        "API reference",
        [
            ("authentication", "Authentication", "Send `Authorization: Bearer <token>`.\n"),
            ("errors", "Errors", "Errors have one shape: `{type, errors}`.\n"),
        ],
    ),
]
