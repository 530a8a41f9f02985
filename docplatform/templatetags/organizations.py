"""Whether the signed-in person may start an organization, for the layout's New organization
link: ``{% may_create_organization as may_create %}`` (``access.may_create_organization``:
anyone, or only staff under ``ORGANIZATION_CREATION=staff``)."""

from django import template

from .. import access

register = template.Library()


@register.simple_tag(takes_context=True)
def may_create_organization(context) -> bool:
    return access.may_create_organization(context.get("user"))
