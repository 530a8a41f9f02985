"""An organization's log with a row of each kind of actor: a person, an installation acting
with its token, an operator; and a row of another organization."""

from datetime import timedelta

import pytest
from django.utils import timezone

from docplatform.audit.models import AuditEntry
from docplatform.audit.services import audit_record
from integrations.authentication import InstallationPrincipal
from integrations.services.installations import installation_create
from tests.factories import (
    IntegrationFactory,
    MembershipFactory,
    OrganizationFactory,
    SpaceFactory,
)

#: When each row of ``log`` happened: the newest first, as the log lists them.
START = timezone.now().replace(microsecond=0) - timedelta(days=10)


@pytest.fixture
def globex(db):
    return OrganizationFactory(subdomain="globex", title="Globex")


@pytest.fixture
def globex_admin(globex):
    return MembershipFactory(organization=globex, role="admin").user


@pytest.fixture
def installation(organization, org_admin):
    integration = IntegrationFactory(organization=organization, name="bot", title="Bot")
    return installation_create(user=org_admin, integration=integration, organization=organization)


def recorded(at, **fields) -> AuditEntry:
    """One row through the one writer, then moved to ``at``."""
    entry = audit_record(**fields)
    AuditEntry.objects.filter(pk=entry.pk).update(at=at)
    entry.refresh_from_db()
    return entry


@pytest.fixture
def log(organization, org_admin, org_member, globex, installation):
    """acme's rows, oldest first (day 0 to day 4), and one of globex. Rows that setting up
    wrote (an installation's own) are cleared first, so the log holds exactly these."""
    AuditEntry.objects.all().delete()
    space = SpaceFactory(organization=organization, title="Guide")
    globex_space = SpaceFactory(organization=globex, title="Globex guide")
    bot = InstallationPrincipal(installation)
    return {
        "space.created": recorded(START, action="space.created", actor=org_admin, target=space),
        "invitation.created": recorded(
            START + timedelta(days=1),
            action="invitation.created",
            actor=org_admin,
            target=organization,
            target_label="bob@example.com",
            details={"email": "bob@example.com", "role": "member"},
        ),
        "installation.configured": recorded(
            START + timedelta(days=2),
            action="installation.configured",
            actor=bot,
            target=installation,
            details={"properties": ["url", "events"]},
        ),
        "invitation.revoked": recorded(
            START + timedelta(days=3),
            action="invitation.revoked",
            actor=None,
            target=organization,
            target_label="bob@example.com",
        ),
        "token.created": recorded(
            START + timedelta(days=4),
            action="token.created",
            actor=org_member,
            target=org_member,
            organization="",
            target_label="ci",
        ),
        "globex": recorded(
            START + timedelta(days=4),
            action="space.created",
            actor=None,
            target=globex_space,
        ),
    }
