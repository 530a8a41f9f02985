from marketplace.markdown import render_markdown


def test_headings_paragraphs_lists_and_links():
    html = render_markdown(
        "# Overview\nKeep your team\nin the loop.\n\n- one\n- two with [docs](https://x.test/a?b=1&c=2)"
        "\n\n1. first\n2. second"
    )
    assert html == (
        "<h3>Overview</h3>\n<p>Keep your team in the loop.</p>\n"
        '<ul><li>one</li><li>two with <a href="https://x.test/a?b=1&amp;c=2" '
        'rel="nofollow noopener noreferrer">docs</a></li></ul>\n'
        "<ol><li>first</li><li>second</li></ol>"
    )


def test_html_is_escaped_and_unsafe_links_stay_text():
    html = render_markdown('<script>alert(1)</script>\n[x](javascript:alert(1)) "q"')
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "href" not in html
    assert "&quot;q&quot;" in html


def test_empty_summary():
    assert render_markdown("") == ""
