"""The delivery log of a webhook installation, as Stripe's and GitHub's: the list with
filters, paging and a 24-hour chart; a delivery's attempts (request and response); test
events, redelivery, "Resend all failed since ..." with its progress, replays of a time range
(with their progress and a cancel), and re-enabling a disabled endpoint.

Only admins of the installing organization see and act (the roles' table: reading the log is
``Action.READ_LOGS``, each form its own action, refused with 403 naming who may); an
installation of another organization is 404.
"""

import json

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, JsonResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import ngettext

from docplatform.access import Action
from docplatform.keyset import BadCursor, keyset_page
from integrations.models import Installation
from integrations.services.deliveries import installation_delivery_redeliver
from webhooks import selectors as webhook_selectors
from webhooks.services.drain import request_body
from webhooks.services.endpoints import webhook_endpoint_reenable
from webhooks.services.redelivery import bulk_redelivery_request
from webhooks.services.replay import replay_cancel, replay_request
from webhooks.services.sample_events import (
    sample_event_body,
    sample_event_type_check,
    webhook_test_event_send,
)
from webhooks.transport.signatures import signatures_sent

from .delivery_forms import DeliveryFilterForm, ReplayForm, ResendFailedForm, TestEventForm
from .installation_views import InstallationPageMixin
from .views import OrganizationView

PAGE_SIZE = 25
CHART_HEIGHT = 120  # the SVG chart's drawing height, in its own units
CHART_BAR = 20  # one hour's width, the bar and the gap around it


class DeliveryLogMixin(InstallationPageMixin):
    """The webhook installation the URL names, for those who may do ``action`` (its
    organization's admins)."""

    def webhook_installation(self, installation_id, action=Action.READ_LOGS) -> Installation:
        installation = self.installation(installation_id, action)
        if not webhook_selectors.is_webhook_installation(installation):
            raise Http404("Not a webhook installation.")
        return installation

    def delivery(self, installation, delivery_id):
        delivery = webhook_selectors.installation_delivery(installation, delivery_id)
        if delivery is None:
            raise Http404("No such delivery.")
        return delivery

    def to_log(self, installation):
        return redirect("marketplace:deliveries", self.organization.subdomain, installation.pk)


class DeliveryListView(DeliveryLogMixin, OrganizationView):
    """GET: the filtered list, paged by cursor, the chart, and the forms of the log's actions."""

    def get(self, request, installation_id):
        installation = self.webhook_installation(installation_id)
        event_types = webhook_selectors.logged_event_types(installation)
        filters = DeliveryFilterForm(request.GET or None, event_types=event_types)
        status, page, cursor_error = 200, None, ""
        if filters.is_bound and not filters.is_valid():
            status = 400
        else:
            deliveries = webhook_selectors.delivery_log(
                installation, **(filters.filters() if filters.is_bound else {})
            )
            try:  # newest first, a page at a time from the cursor: nothing counts the log
                page = keyset_page(
                    deliveries, cursor=request.GET.get("cursor") or None, limit=PAGE_SIZE
                )
            except BadCursor as exc:
                status, cursor_error = 400, str(exc)
        return self.log_page(
            installation, filters=filters, page=page, status=status, cursor_error=cursor_error
        )

    def log_page(
        self, installation, *, filters, page, status=200, resend_form=None, cursor_error=""
    ):
        receivable = webhook_selectors.receivable_event_types(installation)
        job = webhook_selectors.latest_bulk_redelivery(installation)
        codes = webhook_selectors.last_status_codes(page.rows) if page else {}
        query = request_query_without_page(self.request)
        return self.page(
            "marketplace/deliveries.html",
            {
                "installation": installation,
                "integration": installation.integration,
                "can": self.allowed(installation),
                "filters": filters,
                "page": page,
                "cursor_error": cursor_error,
                "rows": [(d, codes.get(d.pk)) for d in page.rows] if page else [],
                "query": query,
                "chart": chart(webhook_selectors.hourly_outcomes(installation)),
                "test_form": TestEventForm(event_types=receivable),
                "resend_form": resend_form or ResendFailedForm(),
                "resend_limit": settings.WEBHOOK_BULK_REDELIVERY_LIMIT,
                "job": webhook_selectors.bulk_redelivery_progress(job) if job else None,
                "replay_form": ReplayForm(),
                "replay_limit": settings.WEBHOOK_REPLAY_LIMIT,
                "replays": [
                    webhook_selectors.replay_progress(replay)
                    for replay in webhook_selectors.replays(installation)[:5]
                ],
            },
            status=status,
        )


def request_query_without_page(request) -> str:
    """The list's query string without ``cursor`` (the pager's links add their own)."""
    query = request.GET.copy()
    query.pop("cursor", None)
    return query.urlencode()


def chart(hours: list[dict]) -> dict:
    """The SVG geometry of the succeeded (bottom) and failed (top) bars of each hour."""
    peak = max((hour["succeeded"] + hour["failed"] for hour in hours), default=0) or 1
    bars = []
    for index, hour in enumerate(hours):
        ok = round(hour["succeeded"] / peak * CHART_HEIGHT)
        failed = round(hour["failed"] / peak * CHART_HEIGHT)
        bars.append(
            {
                **hour,
                "x": index * CHART_BAR + 2,
                "ok_y": CHART_HEIGHT - ok,
                "ok_height": ok,
                "failed_y": CHART_HEIGHT - ok - failed,
                "failed_height": failed,
                "label": index % 6 == 1,
                "label_x": index * CHART_BAR + CHART_BAR // 2,
            }
        )
    return {
        "bars": bars,
        "width": len(hours) * CHART_BAR,
        "height": CHART_HEIGHT,
        "bar_width": CHART_BAR - 4,
        "peak": peak if any(h["succeeded"] or h["failed"] for h in hours) else 0,
        "succeeded": sum(hour["succeeded"] for hour in hours),
        "failed": sum(hour["failed"] for hour in hours),
    }


class DeliveryDetailView(DeliveryLogMixin, OrganizationView):
    """GET: one delivery, each attempt's request and response."""

    def get(self, request, installation_id, delivery_id):
        installation = self.webhook_installation(installation_id)
        delivery = self.delivery(installation, delivery_id)
        body = request_body(delivery)
        attempts = webhook_selectors.delivery_attempts(delivery)
        return self.page(
            "marketplace/delivery.html",
            {
                "installation": installation,
                "integration": installation.integration,
                "can": self.allowed(installation),
                "delivery": delivery,
                "payload_raw": body.decode(),
                "payload_pretty": json.dumps(json.loads(body), indent=2, ensure_ascii=False),
                "attempts": [
                    {
                        "attempt": attempt,
                        "request_headers": sorted(attempt.request_headers.items()),
                        "signatures": signatures_sent(attempt.request_headers),
                        "response_headers": sorted(attempt.response_headers.items()),
                    }
                    for attempt in reversed(attempts)  # the latest first
                ],
                "is_open": delivery.status in delivery.OPEN_STATUSES,
            },
        )


class DeliveryResendView(DeliveryLogMixin, OrganizationView):
    """POST: send a finished delivery again (same eventId); back to its page."""

    def post(self, request, installation_id, delivery_id):
        installation = self.webhook_installation(installation_id, Action.REDELIVER)
        delivery = self.delivery(installation, delivery_id)
        try:
            installation_delivery_redeliver(user=request.user, delivery=delivery)
        except ValidationError as error:
            messages.error(request, f"Not redelivered: {error.messages[0]}.")
        else:
            messages.success(request, f"Delivery {delivery.pk} is on its way again.")
        return redirect(
            "marketplace:delivery", self.organization.subdomain, installation.pk, delivery.pk
        )


class TestEventView(DeliveryLogMixin, OrganizationView):
    """POST: send a test event of a type the installation receives (the service says which)."""

    def post(self, request, installation_id):
        installation = self.webhook_installation(installation_id, Action.SEND_TEST_EVENTS)
        try:
            delivery = webhook_test_event_send(
                user=request.user,
                installation=installation,
                event_type=request.POST.get("event_type", ""),
            )
        except ValidationError as error:
            messages.error(request, f"No test event was sent: {error.messages[0]}.")
            return self.to_log(installation)
        messages.success(
            request, f"Test {delivery.event.type} sent (eventId {delivery.event_uuid})."
        )
        return redirect(
            "marketplace:delivery", self.organization.subdomain, installation.pk, delivery.pk
        )


class TestEventSampleView(DeliveryLogMixin, OrganizationView):
    """GET: the body a test event of ``type`` is sent with (JSON), for the preview."""

    def get(self, request, installation_id):
        installation = self.webhook_installation(installation_id, Action.SEND_TEST_EVENTS)
        event_type = request.GET.get("type", "")
        try:
            sample_event_type_check(installation, event_type)
        except ValidationError as error:
            return JsonResponse({"type": error.messages}, status=400)
        return JsonResponse(sample_event_body(installation, event_type))


class ResendFailedView(DeliveryLogMixin, OrganizationView):
    """POST: "Resend all failed since ..." (a task sends them; the list shows the progress)."""

    def post(self, request, installation_id):
        installation = self.webhook_installation(installation_id, Action.REDELIVER)
        form = ResendFailedForm(request.POST)
        if form.is_valid():
            try:
                job = bulk_redelivery_request(
                    user=request.user, installation=installation, since=form.cleaned_data["since"]
                )
            except ValidationError as error:
                messages.error(request, f"Nothing was resent: {error.messages[0]}.")
                return self.to_log(installation)
            else:
                messages.success(
                    request,
                    f"Resending {job.total} failed "
                    f"{ngettext('delivery', 'deliveries', job.total)}, the oldest first "
                    f"(at most {settings.WEBHOOK_BULK_REDELIVERY_LIMIT} at a time).",
                )
                return self.to_log(installation)
        messages.error(request, "Nothing was resent: " + " ".join(_form_errors(form)))
        return self.to_log(installation)


def _form_errors(form) -> list[str]:
    return [
        f"{'' if field == '__all__' else field + ': '}{message}"
        for field, errors in form.errors.items()
        for message in errors
    ]


class ResendProgressView(DeliveryLogMixin, OrganizationView):
    """GET: the latest "Resend all failed" progress (JSON), polled by the list page."""

    def get(self, request, installation_id):
        installation = self.webhook_installation(installation_id)
        job = webhook_selectors.latest_bulk_redelivery(installation)
        if job is None:
            raise Http404("No resend was asked for.")
        progress = webhook_selectors.bulk_redelivery_progress(job)
        progress["since"] = progress["since"].isoformat()
        return JsonResponse(progress)


class ReplayView(DeliveryLogMixin, OrganizationView):
    """POST: "Replay a time range" (a task queues the events; the list shows the progress)."""

    def post(self, request, installation_id):
        installation = self.webhook_installation(installation_id, Action.REPLAY)
        form = ReplayForm(request.POST)
        if not form.is_valid():
            messages.error(request, "Nothing was replayed: " + " ".join(_form_errors(form)))
            return self.to_log(installation)
        try:
            job = replay_request(
                user=request.user,
                installation=installation,
                since=form.cleaned_data["since"],
                until=form.cleaned_data["until"],
                include_delivered=form.cleaned_data["include_delivered"],
            )
        except ValidationError as error:
            messages.error(request, "Nothing was replayed: " + " ".join(_service_errors(error)))
            return self.to_log(installation)
        if job.found:
            more = f" (the oldest {job.found} of {job.matched})" if job.matched > job.found else ""
            messages.success(
                request, f"Replaying {job.found} {ngettext('event', 'events', job.found)}{more}."
            )
        else:
            messages.success(request, "Nothing to replay: the endpoint got every event then.")
        return self.to_log(installation)


def _service_errors(error: ValidationError) -> list[str]:
    if not hasattr(error, "error_dict"):
        return error.messages
    return [
        f"{field}: {message}" for field, errors in error.message_dict.items() for message in errors
    ]


class ReplayCancelView(DeliveryLogMixin, OrganizationView):
    """POST: cancel a replay; back to the log."""

    def post(self, request, installation_id, replay_id):
        installation = self.webhook_installation(installation_id, Action.REPLAY)
        job = webhook_selectors.installation_replay(installation, replay_id)
        if job is None:
            raise Http404("No such replay.")
        try:
            replay_cancel(user=request.user, installation=installation, job=job)
        except ValidationError as error:
            messages.error(request, f"Not cancelled: {error.messages[0]}.")
        else:
            messages.success(request, f"Replay {job.pk} is cancelled.")
        return self.to_log(installation)


class EndpointReenableView(DeliveryLogMixin, OrganizationView):
    """POST (the banner's button): re-enable a disabled endpoint (its deliveries resume:
    ``Action.PAUSE``); back where it was."""

    def post(self, request, installation_id):
        installation = self.webhook_installation(installation_id, Action.PAUSE)
        try:
            webhook_endpoint_reenable(user=request.user, installation=installation)
        except ValidationError as error:
            messages.error(request, f"Not re-enabled: {error.messages[0]}.")
        else:
            messages.success(
                request, "The endpoint is enabled again: new events are delivered to it."
            )
        back = request.POST.get("next", "")
        if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            return redirect(back)
        return self.back_to(installation)
