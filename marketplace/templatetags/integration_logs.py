"""The Logs tab's links: on an installation's page for its organization's admins, on an
integration's page for its owners (the admins of the organization that publishes it)."""

from django import template
from django.urls import reverse
from django.utils.html import format_html

from docplatform.selectors import is_organization_admin

register = template.Library()


def _link(url: str) -> str:
    return format_html('<a class="button logs-link" href="{}">Logs</a>', url)


@register.simple_tag(takes_context=True)
def installation_logs_link(context, installation) -> str:
    user = context["request"].user
    if not is_organization_admin(user=user, organization=installation.organization):
        return ""
    subdomain = installation.organization.subdomain
    return _link(reverse("marketplace:installation-logs", args=[subdomain, installation.pk]))


@register.simple_tag(takes_context=True)
def integration_logs_link(context, integration) -> str:
    user = context["request"].user
    if not is_organization_admin(user=user, organization=integration.organization):
        return ""
    subdomain = integration.organization.subdomain
    return _link(reverse("marketplace:integration-logs", args=[subdomain, integration.name]))
