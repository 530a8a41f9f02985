from django import template

from integrations.policies import effective_status
from marketplace.markdown import render_markdown
from marketplace.scopes import scope_label

register = template.Library()

register.filter("markdown", render_markdown)
register.filter("scope_label", scope_label)
# The status every page shows of an installation (its status, text and reasons).
register.filter("effective_status", effective_status)
