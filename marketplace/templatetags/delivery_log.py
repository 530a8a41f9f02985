"""The disabled-endpoint banner, on every page that shows webhook installations: only the
installing organization's admins see it (they alone may re-enable)."""

from django import template

from docplatform.access import Action
from docplatform.events.leases import redelivery_refusal
from integrations.policies import may_act
from webhooks.selectors import disabled_endpoints

register = template.Library()


@register.inclusion_tag("marketplace/delivery_endpoint_banner.html", takes_context=True)
def disabled_endpoint_banner(context, installation=None):
    """The banner of the page's installation's endpoint, or of every disabled endpoint of
    the organization (the installations list) when no installation is given."""
    request, organization = context["request"], context["organization"]
    endpoints = []
    if may_act(request.user, Action.PAUSE, organization):
        ids = None if installation is None else [installation.pk]
        endpoints = list(disabled_endpoints(organization, ids))
    return {
        "endpoints": endpoints,
        "organization": organization,
        "show_where": installation is None,
        "next": request.get_full_path(),
        "csrf_token": context.get("csrf_token"),
    }


@register.filter
def why_not_redeliverable(delivery) -> str:
    """Why the delivery cannot be sent again ("" when it can): the outbox's rule."""
    return redelivery_refusal(delivery) or ""
