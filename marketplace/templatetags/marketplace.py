from django import template

from marketplace.markdown import render_markdown
from marketplace.scopes import scope_label

register = template.Library()

register.filter("markdown", render_markdown)
register.filter("scope_label", scope_label)
