"""Adaptive content where it is written and read by the organization's people: a page's
condition in the revision API, the editor, Git front matter and merges; adaptive sections
rendered once and chosen per visitor; the editor's preview "as a visitor with these claims";
the reader's marks. What published sites do with it is in ``tests/docplatform/sites``."""

import pytest

from docplatform.documents import services
from docplatform.gitsync.files import Skipped, page_file, page_from_file
from docplatform.markdown import parse_document
from docplatform.merging import merge_pages
from docplatform.models import Revision
from docplatform.page_versions import pages_at
from docplatform.reading import navigation
from docplatform.reading.adaptive import for_visitor
from docplatform.revisions import space_content_update
from tests.api_helpers import API, api_client, error_attrs, row_counts
from tests.factories import SpaceFactory

pytestmark = pytest.mark.django_db

PRO = 'visitor.claims.plan == "pro"'
BODY = f"""# Reports

Everyone reads this.

```adaptive {PRO}
## Pro exports

The **quarterly** export.
```

```adaptive visitor.claims.role in ["admin", "owner"]
Admins rotate the keys.
```

The end.
"""


@pytest.fixture
def space_spec(org_admin):
    return {
        "title": "Handbook",
        "pages": [
            {"path": "intro", "title": "Intro", "body": "Hello."},
            {"path": "reports", "title": "Reports", "body": BODY, "condition": PRO},
        ],
        "author": org_admin,
    }


# --- Rendering: once per page, chosen per visitor --------------------------------------------


def test_sections_are_rendered_once_and_chosen_for_each_visitor():
    document = parse_document(BODY, heading_offset=1)
    assert [section.condition for section in document.sections] == [
        PRO,
        'visitor.claims.role in ["admin", "owner"]',
    ]
    anonymous = for_visitor(document, {}).with_blocks({})
    assert "Everyone reads this." in anonymous and "The end." in anonymous
    assert "quarterly" not in anonymous and "rotate the keys" not in anonymous
    assert "dp-section" not in anonymous
    assert [h.text for h in for_visitor(document, {}).headings] == ["Reports"]

    pro = for_visitor(document, {"plan": "pro"})
    html = pro.with_blocks({})
    assert "The <strong>quarterly</strong> export." in html
    assert html.index("Everyone reads this.") < html.index("quarterly") < html.index("The end.")
    assert "rotate the keys" not in html
    assert [h.text for h in pro.headings] == ["Reports", "Pro exports"]
    assert "rotate the keys" in for_visitor(document, {"role": "owner"}).with_blocks({})


def test_the_organizations_people_see_every_section_marked_with_its_condition():
    marked = parse_document(BODY).marked().with_blocks({})
    assert "quarterly" in marked and "rotate the keys" in marked
    assert "Shown when <code>visitor.claims.plan == &quot;pro&quot;</code>" in marked
    assert marked.count('class="adaptive-section"') == 2


def test_a_block_inside_a_hidden_section_is_neither_shown_nor_listed():
    block = '```block\n{"integration":"x","block":"y","key":"k1","props":{}}\n```'
    document = parse_document(f"````adaptive {PRO}\n{block}\n````\n")
    assert [ref.section for ref in document.blocks] == [0]
    assert for_visitor(document, {}).blocks == []
    assert [ref.key for ref in for_visitor(document, {"plan": "pro"}).blocks] == ["k1"]


def test_hostile_markdown_in_a_section_is_sanitized_like_the_page():
    body = f"```adaptive {PRO}\n<script>alert(1)</script> [x](javascript:alert(1))\n```\n"
    html = for_visitor(parse_document(body), {"plan": "pro"}).with_blocks({})
    assert "<script>" not in html and "javascript:" not in html
    assert "&lt;script&gt;" in html


# --- The revision API ------------------------------------------------------------------------


def test_the_api_writes_and_reads_a_pages_condition(space, org_member):
    client = api_client(org_member)
    pages = client.get(f"{API}/spaces/{space.pk}/pages/").json()["results"]
    assert [(page["path"], page["condition"]) for page in pages] == [
        ("intro", ""),
        ("reports", PRO),
    ]
    written = client.post(
        f"{API}/spaces/{space.pk}/revisions/",
        {
            "pages": [
                {"path": "intro", "title": "Intro", "condition": ""},
                {"path": "team", "title": "Team", "condition": ' visitor.claims.plan == "team" '},
            ]
        },
    )
    assert written.status_code == 201, written.json()
    conditions = dict(pages_at(written.json()["id"]).values_list("path", "condition"))
    assert conditions == {"intro": "", "team": 'visitor.claims.plan == "team"'}


@pytest.mark.parametrize(
    ("page", "attr", "says"),
    [
        ({"condition": "visitor.claims.plan = 'pro'"}, "pages.1.condition", "at character 21"),
        ({"condition": "os.system('x')"}, "pages.1.condition", "visitor.claims.<name>"),
        ({"condition": "(" * 50 + "true" + ")" * 50}, "pages.1.condition", "nested deeper"),
        ({"condition": "x" * 2000}, "pages.1.condition", "at most 1000"),
        (
            {"body": "```adaptive visitor.claims.plan ==\nx\n```\n"},
            "pages.1.body",
            "section 1 (line 1)",
        ),
        (
            {"body": "Hi\n\n````adaptive true\n```adaptive true\nx\n```\n````\n"},
            "pages.1.body",
            "do not nest",
        ),
    ],
)
def test_a_bad_condition_is_a_400_naming_the_field_and_nothing_is_written(
    space, org_member, page, attr, says
):
    before = row_counts()
    response = api_client(org_member).post(
        f"{API}/spaces/{space.pk}/revisions/",
        {"pages": [{"path": "intro", "title": "Intro"}, {"path": "b", "title": "B", **page}]},
    )
    assert response.status_code == 400
    assert error_attrs(response) == [attr]
    assert says in response.json()["errors"][0]["detail"]
    assert row_counts() == before


# --- The editor --------------------------------------------------------------------------------


def test_the_editor_saves_a_condition_and_names_a_bad_one_beside_its_field(
    client, space, org_member
):
    client.force_login(org_member)
    form = client.get(f"/s/{space.pk}/reports/edit").content.decode()
    assert 'name="condition" value="visitor.claims.plan == &quot;pro&quot;"' in form
    base = space.current_revision_id
    refused = client.post(
        f"/s/{space.pk}/intro/edit",
        {
            "title": "Intro",
            "path": "intro",
            "body": "Hi.",
            "condition": "plan ==",
            "based_on": base,
        },
    )
    assert refused.status_code == 400
    assert 'id="condition-errors"' in refused.content.decode()
    assert Revision.objects.filter(space=space).count() == 1
    saved = client.post(
        f"/s/{space.pk}/intro/edit",
        {
            "title": "Intro",
            "path": "intro",
            "body": "Hi.",
            "condition": "visitor.claims.beta",
            "based_on": base,
        },
    )
    assert saved.status_code == 302
    page = navigation.page_in(Revision.objects.latest().pk, "intro")
    assert page.condition == "visitor.claims.beta"


def test_the_reader_shows_people_the_condition_and_every_section(client, space, org_reader):
    client.force_login(org_reader)
    html = client.get(f"/s/{space.pk}/reports").content.decode()
    assert "Shown on sites when <code>visitor.claims.plan == &quot;pro&quot;</code>" in html
    assert "quarterly" in html and "rotate the keys" in html
    assert 'class="adaptive-section"' in html


def test_anyone_else_reads_an_open_space_as_a_visitor_without_claims(client, space):
    space.visibility = "public"
    space.save()
    assert client.get(f"/s/{space.pk}/reports").status_code == 404
    intro = client.get(f"/s/{space.pk}/intro").content.decode()
    assert "Hello." in intro and f"/s/{space.pk}/reports" not in intro


def test_the_preview_shows_the_page_as_a_visitor_with_the_claims_typed(client, space, org_member):
    client.force_login(org_member)
    address = f"/s/{space.pk}/-/preview"
    everything = client.post(address, {"body": BODY, "condition": PRO}).content.decode()
    assert "quarterly" in everything and "rotate the keys" in everything
    assert "Shown when" in everything

    pro = client.post(address, {"body": BODY, "condition": PRO, "claims": '{"plan": "pro"}'})
    assert pro.status_code == 200
    assert "quarterly" in pro.content.decode() and "rotate" not in pro.content.decode()
    assert "Shown when" not in pro.content.decode()

    free = client.post(address, {"body": BODY, "condition": PRO, "claims": '{"plan": "free"}'})
    assert "does not see this page" in free.content.decode()
    assert "quarterly" not in free.content.decode()

    for claims, says in [
        ("{plan: pro}", "claims: is not valid JSON"),
        ('["pro"]', "claims: must be a JSON object"),
        ("[" * 100_000, "claims: at most 10000 characters"),
        ("[" * 9_000, "claims: is not valid JSON"),  # nested past the parser's depth
    ]:
        bad = client.post(address, {"body": BODY, "claims": claims})
        assert bad.status_code == 400
        assert says in bad.content.decode()
    bad_condition = client.post(address, {"body": BODY, "condition": "x ==", "claims": "{}"})
    assert bad_condition.status_code == 400
    assert "condition: at character 1" in bad_condition.content.decode()


# --- Git front matter and merges ---------------------------------------------------------------


def test_git_front_matter_carries_the_condition_both_ways():
    page = {"path": "reports", "title": "Reports", "body": BODY, "condition": PRO}
    data = page_file(page)
    assert data.startswith(b'---\ntitle: Reports\ncondition: visitor.claims.plan == "pro"\n---\n')
    assert page_from_file("reports.md", data) == page
    plain = {"path": "intro", "title": "Intro", "body": "Hi."}
    assert b"condition" not in page_file(plain)
    assert page_from_file("intro.md", page_file(plain)) == plain


@pytest.mark.parametrize(
    ("front_matter", "reason"),
    [
        ("condition: visitor.claims.plan ==", "its condition at character"),
        ("condition: [1, 2]", "its condition must be a string"),
    ],
)
def test_a_git_file_with_a_bad_condition_is_skipped_with_the_reason(front_matter, reason):
    skipped = page_from_file("a.md", f"---\ntitle: A\n{front_matter}\n---\nHi.\n".encode())
    assert isinstance(skipped, Skipped)
    assert reason in skipped.reason
    section = page_from_file("b.md", b"```adaptive nope\nx\n```\n")
    assert isinstance(section, Skipped) and "adaptive section 1" in section.reason


def test_merges_carry_the_condition_as_they_carry_the_title():
    base = [{"path": "a", "title": "A", "body": "one\n"}]
    theirs = [{"path": "a", "title": "A", "body": "one\n", "condition": PRO}]
    mine = [{"path": "a", "title": "A", "body": "one\ntwo\n"}]
    merged, clashes = merge_pages(base, theirs, mine)
    assert clashes == []
    assert merged == [{"path": "a", "title": "A", "body": "one\ntwo\n", "condition": PRO}]

    other = [{"path": "a", "title": "A", "body": "one\n", "condition": "visitor.claims.beta"}]
    _, clashes = merge_pages(base, theirs, other)
    assert [hunk["field"] for hunk in clashes[0].hunks()] == ["condition"]
    assert clashes[0].hunks()[0] | {"field": "condition"} == {
        "field": "condition",
        "base": "",
        "theirs": PRO,
        "mine": "visitor.claims.beta",
    }


def test_a_stale_save_keeps_the_condition_someone_set_meanwhile(space, org_admin):
    base = space.current_revision_id
    services.page_save(
        space=space, path="intro", title="Intro", body="Hello.", condition=PRO, based_on=base
    )
    services.page_save(
        space=space, path="intro", title="Intro (mine)", body="Hello.", based_on=base
    )
    page = navigation.page_in(Revision.objects.latest().pk, "intro")
    assert (page.title, page.condition) == ("Intro (mine)", PRO)


def test_the_editor_asks_which_condition_to_keep_when_both_changed_it(
    client, space, org_member, org_admin
):
    base = space.current_revision_id
    services.page_save(
        space=space, path="intro", title="Intro", body="Hello.", condition=PRO, based_on=base
    )
    theirs = Revision.objects.latest().pk
    client.force_login(org_member)
    mine = {"title": "Intro", "path": "intro", "body": "Hello.", "based_on": base}
    conflict = client.post(
        f"/s/{space.pk}/intro/edit", {**mine, "condition": "visitor.claims.beta"}
    )
    assert conflict.status_code == 409
    html = conflict.content.decode()
    assert "The condition" in html and 'name="condition-choice"' in html
    resolve = {**mine, "condition": "visitor.claims.beta", "based_on": theirs, "resolve_base": base}
    unchosen = client.post(f"/s/{space.pk}/intro/edit", resolve)
    assert "choose which condition to keep" in unchosen.content.decode()
    chosen = client.post(f"/s/{space.pk}/intro/edit", {**resolve, "condition-choice": "theirs"})
    assert chosen.status_code == 302
    assert navigation.page_in(Revision.objects.latest().pk, "intro").condition == PRO


def test_anyone_else_reads_an_open_spaces_sections_as_a_visitor_without_claims(
    client, organization
):
    space = SpaceFactory(organization=organization, title="Open", visibility="public")
    space_content_update(space=space, pages=[{"path": "setup", "title": "Setup", "body": BODY}])
    html = client.get(f"/s/{space.pk}/setup").content.decode()
    assert "Everyone reads this." in html and "The end." in html
    assert "quarterly" not in html and "rotate the keys" not in html
    assert "Shown when" not in html and "dp-section" not in html
