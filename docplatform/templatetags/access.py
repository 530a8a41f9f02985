"""What the signed-in person may do in the page's organization, for the layout's links:
``{% may "audit.read" organization as may_read_audit_log %}``. ``access.may`` keeps the role
on the user for the request: the top bar asks the database once at most."""

from django import template

from .. import access

register = template.Library()


@register.simple_tag(takes_context=True)
def may(context, action: str, organization) -> bool:
    if organization is None:
        return False
    return access.may(context.get("user"), action, organization)
