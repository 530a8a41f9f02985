"""The product's Markdown renderer: CommonMark, anchors, table of contents, block fences, and
what hostile content can never get through."""

import json
import re
from html import unescape
from html.parser import HTMLParser

import pytest
from django.utils.safestring import SafeString
from hypothesis import given, settings
from hypothesis import strategies as st

from docplatform.markdown import (
    BLOCK_KEY_RE,
    BlockRef,
    Heading,
    block_fence,
    new_block_key,
    parse_document,
    render_markdown,
)

REL = 'rel="noopener noreferrer nofollow"'


def anchor(slug):
    return f'<a href="#{slug}" class="anchor" aria-label="Link to this section" {REL}>#</a>'


class _Elements(HTMLParser):
    """Every start tag of a piece of HTML with its attributes (values unescaped)."""

    def __init__(self, html):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {name: value or "" for name, value in attrs}))


_SCRIPT_SCHEME = re.compile(r"^(?:javascript|data|vbscript):")
_EVENT_ATTRIBUTE = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
_BAD_ADDRESS = re.compile(
    r"""<[^>]*\s(?:href|src)\s*=\s*["']?\s*(?:javascript|data|vbscript)(?::|&#0*58;|&colon;)""",
    re.IGNORECASE,
)


def assert_harmless(html):
    lower = html.lower()
    assert "<script" not in lower
    assert "<iframe" not in lower
    assert not _EVENT_ATTRIBUTE.search(html)
    assert not _BAD_ADDRESS.search(html)
    for tag, attributes in _Elements(html).elements:
        assert tag not in {"script", "iframe", "object", "embed", "style", "svg", "math"}
        for name, value in attributes.items():
            assert not name.startswith("on")
            assert name != "style"
            if name in {"href", "src"}:
                # What a browser would see: control characters and spaces dropped.
                address = "".join(c for c in value if c > " ").lower()
                assert not _SCRIPT_SCHEME.match(address), (tag, name, value)


# CommonMark, tables, strikethrough


def test_paragraph_emphasis_strong_strike_and_code():
    html = render_markdown("Some *italic*, **bold**, ~~gone~~ and `x < y`.")
    assert html == (
        "<p>Some <em>italic</em>, <strong>bold</strong>, <s>gone</s> and "
        "<code>x &lt; y</code>.</p>\n"
    )
    assert isinstance(html, SafeString)


def test_links_images_rules_and_breaks():
    html = render_markdown(
        '[docs](https://x.test/a?b=1&c=2 "The docs") [mail](mailto:a@x.test) [up](../b) '
        "[here](#usage)  \nnext\n\n![logo](/static/logo.png)\n\n---\n"
    )
    assert f'<a href="https://x.test/a?b=1&amp;c=2" title="The docs" {REL}>docs</a>' in html
    assert f'<a href="mailto:a@x.test" {REL}>mail</a>' in html
    assert f'<a href="../b" {REL}>up</a>' in html
    assert f'<a href="#usage" {REL}>here</a><br>\nnext' in html
    assert '<p><img src="/static/logo.png" alt="logo"></p>' in html
    assert "<hr>" in html


def test_fenced_code_keeps_its_language_and_is_escaped():
    html = render_markdown("```python\nprint('<b>')\n```\n\n```c++ extra words\nx\n```\n")
    assert "<pre><code class=\"language-python\">print('&lt;b&gt;')\n</code></pre>" in html
    assert '<code class="language-c++">x' in html


@pytest.mark.parametrize("info", ['foo"bar', "a<b", "x'onmouseover=alert(1)"])
def test_a_language_outside_the_allowed_characters_is_dropped(info):
    html = render_markdown(f"```{info}\ncode\n```\n")
    assert html == "<pre><code>code\n</code></pre>\n"


def test_tables_align_with_classes_not_styles():
    html = render_markdown("| a | b | c | d |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |\n")
    assert '<th class="align-left">a</th>' in html
    assert '<th class="align-center">b</th>' in html
    assert '<td class="align-right">3</td>' in html
    assert "<td>4</td>" in html
    assert "style" not in html
    assert html.startswith("<table>\n<thead>\n<tr>")
    assert "<tbody>" in html


def test_blockquotes_and_nested_lists():
    html = render_markdown("> quoted *text*\n\n- one\n  - nested\n    1. deep\n- two\n\n3. three\n")
    assert "<blockquote>\n<p>quoted <em>text</em></p>\n</blockquote>" in html
    assert (
        "<ul>\n<li>one\n<ul>\n<li>nested\n<ol>\n<li>deep</li>\n</ol>\n</li>\n</ul>\n</li>" in html
    )
    assert '<ol start="3">\n<li>three</li>\n</ol>' in html


def test_a_lone_surrogate_does_not_break_the_page():
    document = parse_document('# A\ud800B\n\n```block\n{"key": "\ud800"}\n```\n')
    assert document.headings == [Heading(level=1, text="A?B", anchor="ab")]
    assert document.blocks[0].error == "integration must be a non-empty string"


def test_empty_text():
    assert render_markdown("") == ""
    document = parse_document("")
    assert (document.html, document.headings, document.blocks) == ("", [], [])


# Headings: anchors, levels, table of contents


def test_headings_get_an_anchor_and_a_link_to_it():
    assert render_markdown("# Getting started") == (
        f'<h1 id="getting-started">Getting started {anchor("getting-started")}</h1>\n'
    )


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello, World!", "hello-world"),
        ("  Many   spaces here ", "many-spaces-here"),
        ("Über die Straße", "über-die-straße"),
        ("हिन्दी भाषा", "हिन्दी-भाषा"),
        ("snake_case and kebab-case", "snake_case-and-kebab-case"),
        ("Version 2.0 (beta)", "version-20-beta"),
        ("The `render()` [function](https://x.test)", "the-render-function"),
        ("!!!", "section"),
        ("", "section"),
    ],
)
def test_anchor_slugs(heading, slug):
    (found,) = parse_document(f"## {heading}").headings
    assert found.anchor == slug


def test_anchors_are_unique_within_a_document():
    document = parse_document("# Intro\n## Intro\n### Intro 1\n#### intro\n")
    assert [h.anchor for h in document.headings] == ["intro", "intro-1", "intro-1-1", "intro-2"]
    assert document.html.count('id="intro-1"') == 1
    assert anchor("intro-2") in document.html


def test_ids_come_only_from_heading_anchors():
    html = parse_document(
        "# Title\n\n[x](#id) text {#custom} <a id=x>\n\n| a |\n|---|\n| b |\n"
    ).html
    ids = [(tag, a["id"]) for tag, a in _Elements(html).elements if "id" in a]
    assert ids == [("h1", "title")]


def test_heading_offset_shifts_levels_capped_at_six():
    html = render_markdown("# One\n\n### Three\n\n###### Six\n", heading_offset=2)
    assert '<h3 id="one">One ' in html
    assert '<h5 id="three">Three ' in html
    assert '<h6 id="six">Six ' in html
    assert "<h1" not in html


def test_table_of_contents_in_order_with_levels_as_written():
    document = parse_document(
        "Setext title\n============\n\ntext\n\n## The *first* part\n\n### A `detail`\n\n"
        "Second part\n-----------\n",
        heading_offset=1,
    )
    assert document.headings == [
        Heading(level=1, text="Setext title", anchor="setext-title"),
        Heading(level=2, text="The first part", anchor="the-first-part"),
        Heading(level=3, text="A detail", anchor="a-detail"),
        Heading(level=2, text="Second part", anchor="second-part"),
    ]
    assert '<h2 id="setext-title">' in document.html


# Block fences


def fence(body):
    return f"```block\n{body}\n```\n"


VALID = {"integration": "github", "block": "issues", "key": "k1", "props": {"repo": "a/b"}}


def test_a_block_fence_becomes_a_reference_and_a_placeholder():
    document = parse_document("# Page\n\n" + fence(json.dumps(VALID)) + "\nAfter.\n")
    assert document.blocks == [
        BlockRef(index=0, key="k1", integration="github", block="issues", props={"repo": "a/b"})
    ]
    assert "<code" not in document.html
    assert "issues" not in document.html
    assert re.search(r"<p>dp-block-[0-9a-f]{32}-0</p>", document.html)
    assert document.with_blocks({0: '<form method="post"><button>Go</button></form>'}) == (
        f'<h1 id="page">Page {anchor("page")}</h1>\n'
        '<form method="post"><button>Go</button></form>\n<p>After.</p>\n'
    )


def test_with_blocks_substitutes_each_block_and_empties_the_missing_ones():
    bodies = [json.dumps({**VALID, "key": f"k{n}"}) for n in range(12)]
    document = parse_document(
        "\n".join(fence(b) for b in bodies) + "\n- item\n\n  ```block\n  x\n  ```\n"
    )
    assert [ref.index for ref in document.blocks] == list(range(13))
    html = document.with_blocks({n: f"<div>block {n}</div>" for n in range(12) if n != 3})
    assert isinstance(html, SafeString)
    for n in range(12):
        assert (f"<div>block {n}</div>" in html) == (n != 3)
    assert "dp-block-" not in html
    assert "<li>\n<p>item</p>\n\n</li>" in html


def test_a_placeholder_cannot_be_forged_by_content():
    earlier = parse_document(fence(json.dumps(VALID)))
    forged = f"dp-block-{earlier.nonce}-0\n\n<p>dp-block-{earlier.nonce}-0</p>\n\ndp-block-0-0\n\n"
    document = parse_document(forged + fence(json.dumps(VALID)))
    assert document.nonce != earlier.nonce
    html = document.with_blocks({0: "<div>BLOCK</div>"})
    assert html.count("<div>BLOCK</div>") == 1
    assert f"<p>dp-block-{earlier.nonce}-0</p>" in html
    assert f"&lt;p&gt;dp-block-{earlier.nonce}-0&lt;/p&gt;" in html
    assert html.endswith("<div>BLOCK</div>\n")


def test_only_the_info_string_block_makes_a_block():
    document = parse_document(
        "```blocks\n{}\n```\n\n```block extra\n{}\n```\n\n~~~block\n"
        + json.dumps(VALID)
        + "\n~~~\n"
    )
    assert [ref.key for ref in document.blocks] == ["k1"]
    assert document.html.count('<code class="language-') == 2


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("not json", "the block is not valid JSON"),
        ("", "the block is not valid JSON"),
        ('{"props": NaN}', "the block is not valid JSON"),
        ("[" * 5000 + "]" * 5000, "the block is not valid JSON"),
        ("[1, 2]", "the block must be one JSON object"),
        ({**VALID, "integration": None}, "integration must be a non-empty string"),
        ({**VALID, "integration": "  "}, "integration must be a non-empty string"),
        ({k: v for k, v in VALID.items() if k != "block"}, "block must be a non-empty string"),
        ({**VALID, "block": 3}, "block must be a non-empty string"),
        ({**VALID, "key": ""}, "key must be 1 to 24 letters, digits, '-' or '_'"),
        ({**VALID, "key": "x" * 25}, "key must be 1 to 24 letters, digits, '-' or '_'"),
        ({**VALID, "key": "a b"}, "key must be 1 to 24 letters, digits, '-' or '_'"),
        ({**VALID, "key": "k\n"}, "key must be 1 to 24 letters, digits, '-' or '_'"),
        ({**VALID, "key": 12}, "key must be 1 to 24 letters, digits, '-' or '_'"),
        ({k: v for k, v in VALID.items() if k != "props"}, "props must be a JSON object"),
        ({**VALID, "props": []}, "props must be a JSON object"),
        ({**VALID, "props": {"text": "x" * 65536}}, "the block is larger than 64 KiB"),
    ],
)
def test_a_bad_block_fence_is_a_reference_with_its_reason(body, error):
    text = body if isinstance(body, str) else json.dumps(body)
    document = parse_document("Before.\n\n" + fence(text))
    (ref,) = document.blocks
    assert ref.error == error
    assert "\n" not in ref.error
    assert re.search(r"<p>dp-block-[0-9a-f]{32}-0</p>", document.html)


def test_a_bad_block_keeps_what_is_known_of_it():
    (ref,) = parse_document(fence(json.dumps({**VALID, "key": "bad key", "props": 1}))).blocks
    assert (ref.integration, ref.block, ref.key, ref.props) == ("github", "issues", "", {})
    (ref,) = parse_document(fence("{oops")).blocks
    assert (ref.integration, ref.block, ref.key, ref.props) == ("", "", "", {})


def test_the_second_block_with_a_key_is_an_error():
    invalid_first = json.dumps({**VALID, "key": "k1", "props": None})
    document = parse_document(
        fence(invalid_first) + fence(json.dumps(VALID)) + fence(json.dumps(VALID))
    )
    first, second, third = document.blocks
    assert first.error == "props must be a JSON object"
    assert second.error is None
    assert third.error == "the key 'k1' is used by another block on this page"
    assert third.key == "k1"


def test_summaries_show_block_fences_as_code():
    html = render_markdown(fence(json.dumps({**VALID, "props": {"x": "<b>"}})))
    assert html.startswith('<pre><code class="language-block">{"integration": "github"')
    assert "&lt;b&gt;" in html
    assert "dp-block-" not in html


def test_block_fence_writes_one_compact_line_that_parses_back():
    markdown = block_fence(integration="github", block="issues", key="k1", props={"q": "é\n```\nx"})
    assert markdown == (
        '```block\n{"integration":"github","block":"issues","key":"k1",'
        '"props":{"q":"é\\n```\\nx"}}\n```\n'
    )
    (ref,) = parse_document("Text\n\n" + markdown + "More\n").blocks
    assert ref == BlockRef(
        index=0, key="k1", integration="github", block="issues", props={"q": "é\n```\nx"}
    )


def test_block_fence_refuses_what_would_not_parse_back():
    with pytest.raises(ValueError, match="key must be 1 to 24"):
        block_fence(integration="github", block="issues", key="no spaces", props={})
    with pytest.raises(ValueError, match="integration must be"):
        block_fence(integration="", block="issues", key="k", props={})


def test_new_block_keys_are_random_and_valid():
    keys = {new_block_key() for _ in range(50)}
    assert len(keys) == 50
    assert all(len(key) == 12 and BLOCK_KEY_RE.fullmatch(key) for key in keys)


# Hostile content


HOSTILE = [
    "<script>alert(1)</script>",
    "<iframe src=https://evil.test></iframe>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)" onclick="alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](  javascript:alert(1) )",
    "[x](<javascript:alert(1)>)",
    "[x](javascript&#58;alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](java&#09;script:alert(1))",
    "[x](&#1;javascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[x](vbscript:msgbox(1))",
    "[x][ref]\n\n[ref]: javascript:alert(1)",
    "<javascript:alert(1)>",
    "<JAVASCRIPT:alert(1)>",
    "<data:text/html,<script>alert(1)</script>>",
    "![x](javascript:alert(1))",
    "![x](JaVaScRiPt:alert(1))",
    "![x](data:image/png;base64,iVBORw0KGgo=)",
    "![x](vbscript:msgbox(1))",
    "![x](mailto:a@x.test)",
    '[![x](javascript:alert(1))](javascript:alert(2) "t")',
    '[x](https://x.test/" onmouseover="alert(1))',
    "[x](https://x.test/\"onmouseover='alert(1)')",
    "# <script>alert(1)</script> title",
    "| <script>x</script> |\n|---|\n| <img src=x onerror=alert(1)> |",
    '```"><script>alert(1)</script>\ncode\n```',
    "```block\n<script>alert(1)</script>\n```",
    '```block\n{"integration":"<script>","block":"b","key":"k","props":{}}\n```',
    "<svg onload=alert(1)>",
    "<style>body{display:none}</style>",
    "<!-- <script>alert(1)</script> -->",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_content_is_harmless(text):
    document = parse_document(text)
    assert_harmless(document.html)
    assert_harmless(document.with_blocks({}))
    assert_harmless(render_markdown(text))


@pytest.mark.parametrize(
    "text",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](data:text/html,hi)",
        "[x](vbscript:msgbox(1))",
        "[x](javascript&#58;alert(1))",
    ],
)
def test_a_link_with_an_unsafe_address_keeps_only_its_text(text):
    assert render_markdown(text) == "<p>x</p>\n"


@pytest.mark.parametrize(
    "text",
    ["![alt](javascript:alert(1))", "![alt](data:image/png;base64,AA==)", "![alt](mailto:a)"],
)
def test_an_image_with_an_unsafe_address_keeps_only_its_alt_text(text):
    assert render_markdown(text) == "<p>alt</p>\n"


def test_raw_html_is_shown_escaped():
    html = render_markdown('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)"> "q"')
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '&lt;img src=x onerror="alert(1)"&gt; "q"' in html
    assert unescape(html).count("<script>") == 1


def test_an_autolink_with_an_unsafe_scheme_is_text():
    html = render_markdown("<javascript:alert(1)> and <https://x.test/>")
    assert f'<a href="https://x.test/" {REL}>https://x.test/</a>' in html
    assert [a.get("href") for tag, a in _Elements(html).elements if tag == "a"] == [
        "https://x.test/"
    ]


_PIECES = st.sampled_from(
    [
        "<",
        ">",
        "[",
        "]",
        "(",
        ")",
        "!",
        "`",
        "```",
        "```block\n",
        "\n",
        "\n\n",
        "#",
        "|",
        "-",
        ":",
        '"',
        "'",
        "&#58;",
        "&#x3a;",
        "&colon;",
        "&#106;",
        "\t",
        "\x00",
        " ",
        "javascript:",
        "JaVaScRiPt:",
        "data:",
        "vbscript:",
        "script",
        "iframe",
        "onerror=",
        "onload=alert(1)",
        "alert(1)",
        "https://x.test/",
        "dp-block-",
        '{"integration":"a","block":"b","key":"k","props":{}}',
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=40).map("".join))
def test_arbitrary_text_never_yields_a_script_an_event_attribute_or_an_unsafe_address(text):
    document = parse_document(text)
    assert_harmless(document.html)
    assert_harmless(document.with_blocks({}))
    assert_harmless(render_markdown(text, heading_offset=2))
