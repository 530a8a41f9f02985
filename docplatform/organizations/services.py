"""Writes of organizations: a person starts one (and is its first admin), its admins rename
it and decide whether members may install integrations that write nothing. Who may is the
access module's (``access.may_create_organization``, ``Action.MANAGE_ORGANIZATION``), asked by
the doors (the API, the pages)."""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from ..audit.services import audit_record
from ..models import SUBDOMAIN_VALIDATOR, Membership, Organization
from ..services import clean_title
from ..teams.services import membership_ensure

#: Subdomains no organization takes: they would shadow the addresses of pages under
#: ``/orgs/`` (``/orgs/new/``) or pass for the platform's own host names.
RESERVED_SUBDOMAINS = frozenset({"new", "api", "admin", "www", "static", "marketplace"})


@transaction.atomic
def organization_create(*, subdomain: str, title: str, admin=None) -> Organization:
    """A new organization, whose first admin is ``admin`` (the person who created it; None
    for an operator's command). ValidationError naming ``subdomain`` (malformed, reserved or
    taken) or ``title``, with nothing written."""
    errors = {}
    try:
        title = clean_title(title, model=Organization)
    except ValidationError as error:
        errors.update(error.message_dict)
    subdomain = subdomain.strip().lower() if isinstance(subdomain, str) else ""
    problem = _subdomain_problem(subdomain)
    if problem:
        errors["subdomain"] = [problem]
    if errors:
        raise ValidationError(errors)
    organization = Organization(subdomain=subdomain, title=title)
    try:
        with transaction.atomic():
            organization.save()
    except IntegrityError:  # taken by a concurrent request meanwhile
        raise ValidationError({"subdomain": [f"{subdomain!r} is taken: choose another"]}) from None
    if admin is not None:
        membership_ensure(organization=organization, user=admin, role=Membership.Role.ADMIN)
    audit_record(
        action="organization.created",
        actor=admin,
        target=organization,
        details={"subdomain": subdomain, "title": title},
    )
    return organization


def _subdomain_problem(subdomain: str) -> str | None:
    if not subdomain:
        return "give the organization a subdomain"
    try:
        SUBDOMAIN_VALIDATOR(subdomain)
    except ValidationError as error:
        return error.messages[0]
    if subdomain in RESERVED_SUBDOMAINS:
        return f"{subdomain!r} is reserved: choose another"
    if Organization.objects.filter(subdomain=subdomain).exists():
        return f"{subdomain!r} is taken: choose another"
    return None


@transaction.atomic
def organization_update(
    *, organization: Organization, actor, title=None, members_may_install=None
) -> Organization:
    """Rename the organization, or let its members install integrations whose scopes write
    nothing (or not); None leaves a field as it is. One audit row naming what changed, from
    what to what (none when nothing did)."""
    changes = {}
    if title is not None:
        title = clean_title(title, model=Organization)
        if title != organization.title:
            changes["title"] = {"from": organization.title, "to": title}
            organization.title = title
    if members_may_install is not None:
        if not isinstance(members_may_install, bool):
            raise ValidationError({"membersMayInstall": ["must be true or false"]})
        if members_may_install != organization.members_may_install:
            changes["membersMayInstall"] = {
                "from": organization.members_may_install,
                "to": members_may_install,
            }
            organization.members_may_install = members_may_install
    if changes:
        organization.save(update_fields=["title", "members_may_install"])
        audit_record(
            action="organization.changed", actor=actor, target=organization, details=changes
        )
    return organization
