"""The review of public listings (DESIGN.md, "who installs"; README, "Review of public
listings").

Publishing a released version whose manifest says ``visibility: public`` opens its review
(``listing_review_open``): its owning organization runs and installs it at once; other
organizations are offered it once an operator approved it (``listing_review_decide``, from the
admin's review queue, ``manage.py integration review`` or the review API). A version asking
for no scope and no host beyond the newest approved version before it, and an internal
organization's, are approved at once (``policies.automatic_approval``); the first public
version, and one asking for more, waits, while the approved one stays listed and installable
by others. The decision is mailed to the
owning organization's admins after the commit.
"""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from docplatform import access
from docplatform.audit.services import audit_record

from ..models import Integration, IntegrationVersion, ListingReview
from ..operators import acting, is_operator
from ..policies import automatic_approval, latest_approved, needs_review, new_reach
from .releases import shared_version_refresh

logger = logging.getLogger(__name__)

PENDING = ListingReview.Status.PENDING
APPROVED = ListingReview.Status.APPROVED
REJECTED = ListingReview.Status.REJECTED

APPROVE, REJECT = "approve", "reject"
DECISIONS = (APPROVE, REJECT)


def listing_review_open(*, version: IntegrationVersion, findings=()) -> ListingReview | None:
    """At a release (in the publish's transaction): a public version's review, approved at
    once when it asks for nothing beyond the newest approved version before it, else
    pending. ``findings`` are the checks' warnings (shown in the review queue). None for a
    version that needs no review (private, unlisted)."""
    if not needs_review(version.listing):
        return None
    new_scopes, new_hosts = new_reach(version, latest_approved(version.integration, before=version))
    automatic = automatic_approval(version)
    return ListingReview.objects.create(
        version=version,
        status=PENDING if automatic is None else APPROVED,
        automatic=automatic is not None,
        reason=automatic or "",
        decided_at=None if automatic is None else timezone.now(),
        findings=[{"path": problem.path, "message": problem.message} for problem in findings],
        new_scopes=new_scopes,
        new_hosts=new_hosts,
    )


def _decision_check(decision: str, reason: str) -> str:
    if decision not in DECISIONS:
        raise ValidationError({"decision": [f"{decision!r} is not one of: approve, reject"]})
    reason = (reason or "").strip()
    if decision == REJECT and not reason:
        raise ValidationError({"reason": ["a rejection needs a reason: the owners read it"]})
    return reason


def listing_review_decide(
    *, user, review: ListingReview, decision: str, reason: str = "", notify: bool = True
) -> ListingReview:
    """Approve or reject (``decision``) a pending review, as an operator (``user`` an
    ``Operator``: the admin's staff user, or a command's). Approving offers the version to
    other organizations when it is the newest cleared one; rejecting keeps it theirs alone.
    One audit row; the owning organization's admins are mailed after the commit (unless
    ``notify`` is off: the demo data approves its own listings without mail).

    Raises ValidationError naming ``decision``, ``reason`` (a rejection needs one) or
    ``version`` (no longer pending); PermissionDenied for anyone but an operator."""
    if not is_operator(user):
        raise PermissionDenied("only operators (staff) review public listings")
    reason = _decision_check(decision, reason)
    with transaction.atomic():
        integration = Integration.objects.select_for_update(no_key=True).get(
            pk=review.version.integration_id
        )
        review = (
            ListingReview.objects.select_for_update(no_key=True)
            .select_related("version")
            .get(pk=review.pk)
        )
        version = review.version
        if review.status != PENDING:
            raise ValidationError(
                {
                    "version": [
                        f"version {version.number} of {integration.name} is not waiting for "
                        f"review: it was {review.status}"
                    ]
                }
            )
        review.status = APPROVED if decision == APPROVE else REJECTED
        review.reason = reason
        review.reviewer = acting(user)
        review.decided_at = timezone.now()
        review.save(update_fields=["status", "reason", "reviewer", "decided_at"])
        version.review = review
        shared_version_refresh(integration)
        audit_record(
            action=f"integration.listing_{review.status}",
            actor=acting(user),
            target=integration,
            details={"version": version.number, "reason": reason},
        )
        if notify:
            transaction.on_commit(lambda: _decision_mail_send(integration, review))
    return review


def pending_review_of(integration: Integration) -> ListingReview | None:
    """The newest version of ``integration`` waiting for review."""
    return (
        ListingReview.objects.filter(version__integration=integration, status=PENDING)
        .select_related("version")
        .order_by("-version__number")
        .first()
    )


def _decision_mail_send(integration: Integration, review: ListingReview) -> None:
    recipients = access.admin_emails(integration.organization)
    if not recipients:
        return
    approved = review.status == APPROVED
    subject = (
        f"{integration.title} is listed in the marketplace"
        if approved
        else f"{integration.title} was not listed in the marketplace"
    )
    body = render_to_string(
        "integrations/review_email.txt",
        {
            "integration": integration,
            "version": review.version,
            "approved": approved,
            "reason": review.reason,
            "url": settings.PLATFORM_URL
            + reverse(
                "marketplace:integration",
                args=[integration.organization.subdomain, integration.name],
            ),
        },
    )
    try:
        send_mail(subject, body, None, recipients)
    except OSError:  # smtplib's errors, refused connections, timeouts, TLS failures
        logger.warning(
            "The review mail of %s version %s could not be sent",
            integration.name,
            review.version.number,
            exc_info=True,
        )
