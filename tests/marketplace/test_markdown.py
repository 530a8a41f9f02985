"""Integration summaries through the `markdown` template filter (the renderer itself is tested
in tests/docplatform/test_markdown.py)."""

import json

from django.template import Context, Template

REL = 'rel="noopener noreferrer nofollow"'


def summary(text):
    return Template("{% load marketplace %}{{ text|markdown }}").render(Context({"text": text}))


def test_headings_sit_under_the_page_headings_with_paragraphs_lists_and_links():
    html = summary(
        "# Overview\nKeep your team\nin the loop.\n\n- one\n- two with [docs](https://x.test/a?b=1&c=2)"
        "\n\n1. first\n2. second"
    )
    assert html == (
        '<h3 id="overview">Overview <a href="#overview" class="anchor" '
        f'aria-label="Link to this section" {REL}>#</a></h3>\n'
        "<p>Keep your team\nin the loop.</p>\n"
        '<ul>\n<li>one</li>\n<li>two with <a href="https://x.test/a?b=1&amp;c=2" '
        f"{REL}>docs</a></li>\n</ul>\n"
        "<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n"
    )


def test_html_is_escaped_and_unsafe_links_keep_their_text():
    html = summary('<script>alert(1)</script>\n[x](javascript:alert(1)) "q"')
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "href" not in html
    assert '<p>&lt;script&gt;alert(1)&lt;/script&gt;\nx "q"</p>' in html


def test_a_block_fence_in_a_summary_is_shown_as_code():
    block = {"integration": "github", "block": "issues", "key": "k", "props": {}}
    html = summary(f"```block\n{json.dumps(block)}\n```")
    assert html.startswith('<pre><code class="language-block">{"integration": "github"')


def test_empty_summary():
    assert summary("") == ""
