"""The Logs tab's links: on an installation's page for its organization's admins, on an
integration's page for its owners (the admins of the organization that publishes it)."""

from django import template
from django.urls import reverse
from django.utils.html import format_html

from docplatform.access import Action
from integrations.policies import may_act

register = template.Library()


def _link(url: str) -> str:
    return format_html('<a class="button logs-link" href="{}">Logs</a>', url)


@register.simple_tag(takes_context=True)
def installation_logs_link(context, installation) -> str:
    user = context["request"].user
    if not may_act(user, Action.READ_LOGS, installation):
        return ""
    subdomain = installation.organization.subdomain
    return _link(reverse("marketplace:installation-logs", args=[subdomain, installation.pk]))


@register.simple_tag(takes_context=True)
def integration_logs_link(context, integration) -> str:
    user = context["request"].user
    if not may_act(user, Action.READ_LOGS, integration):
        return ""
    subdomain = integration.organization.subdomain
    return _link(reverse("marketplace:integration-logs", args=[subdomain, integration.name]))
