from django import template
from django.utils.safestring import SafeString

from docplatform.markdown import render_markdown
from integrations.policies import effective_status, running_version
from marketplace.scopes import network_access, scope_label
from marketplace.selectors import runs_no_code

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    """An integration's summary: its headings sit under the page's own title and sections."""
    return render_markdown(text, heading_offset=2)


register.filter("scope_label", scope_label)
# What a version's code may call: {% with access=version.network_fetch|network_access %}.
register.filter("network_access", network_access)
# The status every page shows of an installation (its status, text and reasons).
register.filter("effective_status", effective_status)
# The version that runs for an installation: {{ integration|running_version:installation }}.
register.filter("running_version", running_version)
# An integration whose installations do nothing (no code, no sender): the pages say so.
register.filter("runs_no_code", runs_no_code)
