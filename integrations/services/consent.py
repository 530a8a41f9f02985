"""Consent for scopes: an admin of the installing organization approves what a new version of
an integration asks for beyond what the organization granted; a version asking for fewer
narrows every installation at publish (the rule itself: ``integrations.policies``).

An organization installation and the space and site installations under it hold the same
grant: installing into a space copies the organization installation's, and an approval
applies to all of them.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from docplatform.access import Action

from ..models import Installation, Integration
from ..policies import act_check, asked_scopes, effective_scopes, scopes_awaiting_approval
from .audit import installation_audit
from .installations import _fire_setup


@transaction.atomic
def installation_scopes_approve(
    *, user, installation: Installation, scopes: list[str] | None = None
) -> Installation:
    """Grant the new scopes the integration asks for (``scopes``: only these of them) to the
    installation and to the organization installation and the installations under it; each
    gets ``installation_setup`` with the ``approvedScopes``; one audit row. Admins of the
    organization only.
    """
    act_check(user, Action.APPROVE_SCOPES, installation)
    # The integration first, as publishing locks it: a publish and an approval never cross.
    integration = Integration.objects.select_for_update(no_key=True).get(
        pk=installation.integration_id
    )
    root_id = installation.parent_id or installation.pk
    family = list(
        Installation.objects.select_for_update(of=("self",), no_key=True)
        .select_related("organization", "space", "site")
        .filter(Q(pk=root_id) | Q(parent_id=root_id))
        .order_by("level", "created_at")
    )
    for member in family:
        member.integration = integration
    root = next(member for member in family if member.pk == root_id)
    waiting = scopes_awaiting_approval(root)
    if not waiting:
        raise ValidationError(
            {"scopes": ["nothing to approve: the installation holds every permission it asks for"]}
        )
    approved = _approved(scopes, waiting)
    granted = set(effective_scopes(granted=root.granted_scopes, asked=asked_scopes(root)))
    granted |= set(approved)
    granted_scopes = [scope for scope in asked_scopes(root) if scope in granted]
    for member in family:
        member.granted_scopes = granted_scopes
        member.save(update_fields=["granted_scopes", "updated_at"])
    for member in family:
        _fire_setup("installation_setup", member, changed=[], approvedScopes=approved)
    approved_on = next(member for member in family if member.pk == installation.pk)
    installation_audit(
        action="installation.scopes_granted",
        user=user,
        installation=approved_on,
        details={"scopes": approved},
    )
    return approved_on


def _approved(scopes, waiting: list[str]) -> list[str]:
    if scopes is None:
        return waiting
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        raise ValidationError({"scopes": ["must be a list of scope names"]})
    if not scopes:
        raise ValidationError({"scopes": ["name at least one scope to approve, or leave it out"]})
    unknown = [scope for scope in scopes if scope not in waiting]
    if unknown:
        raise ValidationError(
            {
                "scopes": [
                    f"not a new permission this installation asks for: {', '.join(unknown)} "
                    f"(it asks for: {', '.join(waiting)})"
                ]
            }
        )
    return [scope for scope in waiting if scope in scopes]


def installation_scopes_narrow(*, integration: Integration) -> int:
    """After a publish: every installation keeps only the granted scopes the integration
    still asks for, so a scope dropped and asked for again later needs a new approval.
    Other organizations' installations follow the version offered to them
    (``policies.asked_scopes``): while a newer one waits for review, the shared one's.
    Returns how many installations changed."""
    by_grant: dict[tuple[str, ...], list[str]] = {}
    rows = Installation.objects.filter(integration=integration).values_list(
        "pk", "granted_scopes", "organization_id"
    )
    asked_by_organization: dict[str, list[str]] = {}
    for pk, granted, organization_id in rows:
        if organization_id not in asked_by_organization:
            probe = Installation(integration=integration, organization_id=organization_id)
            asked_by_organization[organization_id] = asked_scopes(probe)
        asked = asked_by_organization[organization_id]
        narrowed = effective_scopes(granted=granted, asked=asked)
        if set(narrowed) != set(granted or ()):
            by_grant.setdefault(tuple(narrowed), []).append(pk)
    for narrowed, pks in by_grant.items():
        Installation.objects.filter(pk__in=pks).update(granted_scopes=list(narrowed))
    return sum(len(pks) for pks in by_grant.values())
