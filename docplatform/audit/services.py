"""Writes of the audit log: ``audit_record``, called by every service that changes who may do
what or that an integration's token drives, in the same transaction as the change."""

from django.db.models import Model

from ..access import is_person, role_of
from ..models import Organization
from ..principals import is_machine
from .context import current_address
from .models import AuditEntry


def _actor_fields(actor, organization_id: str) -> dict:
    if is_machine(actor):
        return {
            "actor_kind": AuditEntry.ActorKind.INSTALLATION,
            "actor_id": actor.actor_id,
            "actor_label": actor.actor_label,
        }
    if is_person(actor):
        operator = actor.is_superuser and (
            not organization_id or role_of(actor, organization_id) is None
        )
        kind = AuditEntry.ActorKind
        return {
            "actor_kind": kind.OPERATOR if operator else kind.PERSON,
            "actor_user": actor,
            "actor_id": str(actor.pk),
            "actor_label": actor.get_username(),
        }
    return {"actor_kind": AuditEntry.ActorKind.OPERATOR, "actor_label": "operator"}


def audit_record(
    *,
    action: str,
    actor,
    target: Model,
    organization: Organization | str | None = None,
    details: dict | None = None,
    target_label: str | None = None,
) -> AuditEntry:
    """One row: ``actor`` (a person, a machine principal such as an installation's token, or
    None for an operator's command) did ``action`` (``space.created``, ...) to ``target``
    (any model row) in ``organization`` (default: the target's, or the target itself). The
    address is the request's being served, when there is one. Never give it a secret value:
    ``details`` is shown to the organization's admins."""
    if organization is None:
        organization = target if isinstance(target, Organization) else target.organization_id
    organization_id = organization.pk if isinstance(organization, Organization) else organization
    return AuditEntry.objects.create(
        organization_id=organization_id or "",
        action=action,
        target_type=target._meta.model_name,
        target_id=str(target.pk),
        target_label=(target_label if target_label is not None else str(target))[:300],
        details=details or {},
        address=current_address(),
        **_actor_fields(actor, organization_id or ""),
    )
