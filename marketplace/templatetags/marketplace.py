from django import template
from django.utils.safestring import SafeString

from docplatform.markdown import render_markdown
from integrations.policies import effective_status
from marketplace.scopes import scope_label

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    """An integration's summary: its headings sit under the page's own title and sections."""
    return render_markdown(text, heading_offset=2)


register.filter("scope_label", scope_label)
# The status every page shows of an installation (its status, text and reasons).
register.filter("effective_status", effective_status)
