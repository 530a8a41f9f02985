"""Top-level fields: each rule gives an exact ``path: reason``; all problems come at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from docplatform_sdk.manifest import (
    CATEGORIES,
    INTERNAL_SCOPES,
    PROPERTY_TYPES,
    SCOPES,
    TARGETS,
    VISIBILITIES,
    CheckResult,
    Manifest,
    Problem,
)

from .helpers import DELETE, check, check_text, dump, errors, manifest, warnings


def test_minimal_manifest_is_accepted_with_defaults():
    result = check(manifest())
    assert result.ok, errors(result)
    assert result.errors == [] and result.warnings == []
    m = result.manifest
    assert isinstance(m, Manifest)
    assert (m.name, m.title, m.description) == (
        "my-integration",
        "My integration",
        "Does useful things.",
    )
    assert (m.organization, m.visibility, m.scopes) == ("acme", "public", ("space:content:read",))
    assert m.summary == ""
    assert m.target == "all"
    assert m.categories == () and m.blocks == () and m.external_links == ()
    assert m.configurations == {} and m.secrets == {} and m.envs == {}
    assert m.script is None and m.icon is None and m.preview_images == ()
    assert m.content_security_policy is None
    assert m.raw == manifest()


def test_problem_and_result_shapes():
    problem = Problem("scopes[2]", "unknown scope 'x'")
    assert str(problem) == "scopes[2]: unknown scope 'x'"
    assert CheckResult().ok
    assert not CheckResult(errors=[problem]).ok


def test_vocabularies():
    assert VISIBILITIES == ("private", "unlisted", "public")
    assert CATEGORIES == (
        "analytics",
        "collaboration",
        "content",
        "marketing",
        "authenticated-access",
        "other",
    )
    assert "page:feedback:read" in SCOPES and len(SCOPES) == 17
    assert set(INTERNAL_SCOPES) == {"site:script:inject", "site:script:cookies"} <= set(SCOPES)
    assert PROPERTY_TYPES == ("string", "number", "boolean", "button")
    assert TARGETS == ("all", "organization", "space", "site")


@pytest.mark.parametrize(
    "key", ["name", "title", "description", "organization", "visibility", "scopes"]
)
def test_required_fields(key):
    result = check(manifest(**{key: DELETE}))
    assert errors(result) == [f"{key}: is required"]
    assert result.manifest is None


def test_all_required_fields_missing_at_once():
    result = check({"summary": "only this"})
    assert errors(result) == [
        "name: is required",
        "title: is required",
        "description: is required",
        "organization: is required",
        "visibility: is required",
        "scopes: is required",
    ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"name": "My Integration"},
            "name: must be lower-case letters and digits in words joined by single hyphens, "
            "such as 'my-integration'; found 'My Integration'",
        ),
        (
            {"name": "VA-Auth0"},
            "name: must be lower-case letters and digits in words joined by single hyphens, "
            "such as 'my-integration'; found 'VA-Auth0'; did you mean 'va-auth0'?",
        ),
        (
            {"name": "double--hyphen"},
            "name: must be lower-case letters and digits in words joined by single hyphens, "
            "such as 'my-integration'; found 'double--hyphen'",
        ),
        ({"name": "a" * 65}, "name: is 65 characters long; at most 64 are allowed"),
        (
            {"name": 123},
            "name: must be a string, found a number; put the value in quotes to make it text",
        ),
        (
            {"title": True},
            "title: must be a string, found a boolean; put the value in quotes to make it text",
        ),
        ({"title": ["a", "b"]}, "title: must be a string, found a list"),
        ({"title": {"en": "x"}}, "title: must be a string, found a mapping"),
        ({"title": None}, "title: must be a string, found an empty value"),
        ({"title": "   "}, "title: must not be empty"),
        ({"title": "t" * 129}, "title: is 129 characters long; at most 128 are allowed"),
        ({"description": ""}, "description: must not be empty"),
        ({"summary": "s" * 2049}, "summary: is 2049 characters long; at most 2048 are allowed"),
        (
            {"summary": 12},
            "summary: must be a string, found a number; put the value in quotes to make it text",
        ),
        (
            {"organization": "acme corp"},
            "organization: must be an organization id or subdomain (letters, digits and "
            "hyphens); found 'acme corp'",
        ),
        (
            {"visibility": "Public"},
            "visibility: must be one of private, unlisted, public, found 'Public'; did you mean "
            "'public'?",
        ),
        (
            {"visibility": "secret"},
            "visibility: must be one of private, unlisted, public, found 'secret'",
        ),
        (
            {"target": "spaces"},
            "target: must be one of all, organization, space, site, found 'spaces'; did you "
            "mean 'space'?",
        ),
        (
            {"target": 1},
            "target: must be a string, found a number; put the value in quotes to make it text",
        ),
    ],
)
def test_bad_scalar_fields(changes, expected):
    result = check(manifest(**changes))
    assert errors(result) == [expected]
    assert result.manifest is None


@pytest.mark.parametrize(
    "changes",
    [
        {"name": "a" * 64},
        {"name": "x"},
        {"name": "github-copilot2"},
        {"summary": "s" * 2048},
        {"summary": ""},
        {"organization": "QZUjxgVOUhArzm2vj0tX"},
        {"organization": "my-org"},
        {"visibility": "private"},
        {"visibility": "unlisted"},
        {"target": "site"},
        {"title": "2024-01-01"},
    ],
)
def test_good_scalar_fields(changes):
    result = check(manifest(**changes))
    assert result.ok, errors(result)


def test_yaml_dates_are_read_as_text():
    text = dump(manifest(title="x")).replace("title: x", "title: 2024-13-45")
    result = check_text(text)
    assert result.ok, errors(result)
    assert result.manifest.title == "2024-13-45"


def test_unknown_top_level_keys_with_hints():
    document = manifest(visiblity="public", zzz=1, **{"Name": "x", "bad key": 2})
    result = check(document)
    assert errors(result) == [
        "visiblity: unknown key; did you mean 'visibility'?",
        "zzz: unknown key; the keys allowed here are name, title, description, summary, "
        "organization, visibility, scopes, script, blocks, categories, icon, previewImages, "
        "externalLinks, configurations, secrets, target, envs, contentSecurityPolicy, network",
        "Name: unknown key; did you mean 'name'?",
        '["bad key"]: unknown key; the keys allowed here are name, title, description, '
        "summary, organization, visibility, scopes, script, blocks, categories, icon, "
        "previewImages, externalLinks, configurations, secrets, target, envs, "
        "contentSecurityPolicy, network",
    ]


def test_non_string_top_level_key():
    result = check({**manifest(), 3: "x", True: "y", None: "z"})
    assert [p.path for p in result.errors] == ["3", "True", "None"]
    assert all(p.message.startswith("unknown key") for p in result.errors)


# --- scopes ---------------------------------------------------------------------------------


def test_scopes_rules():
    result = check(
        manifest(
            scopes=[
                "space:content:read",
                "space:content:raed",
                "space:content:read",
                42,
                "site:script:inject",
                "nothing-like-it",
            ]
        )
    )
    assert errors(result) == [
        "scopes[1]: unknown scope 'space:content:raed'; did you mean 'space:content:read'?",
        "scopes[2]: 'space:content:read' is listed twice (also at scopes[0])",
        "scopes[3]: must be a string, found a number; put the value in quotes to make it text",
        "scopes[4]: 'site:script:inject' is reserved for internal platform use; only "
        "integrations of an internal organization may request it",
        "scopes[5]: unknown scope 'nothing-like-it'",
    ]


@pytest.mark.parametrize(
    ("value", "found"),
    [("space:content:read", "a string"), ({"a": 1}, "a mapping"), (None, "an empty value")],
)
def test_scopes_must_be_a_list(value, found):
    assert errors(check(manifest(scopes=value))) == [
        f"scopes: must be a list of scopes, found {found}"
    ]


def test_empty_scopes_are_accepted():
    # Decision: block-only integrations (12 real manifests) need no permission.
    result = check(manifest(scopes=[]))
    assert result.ok and result.manifest.scopes == ()


def test_every_public_scope_is_accepted():
    public = [s for s in SCOPES if s not in INTERNAL_SCOPES]
    result = check(manifest(scopes=public))
    assert result.ok, errors(result)
    assert result.manifest.scopes == tuple(public)


def test_internal_scopes_need_an_internal_organization():
    asked: list[str] = []

    def internal(ref: str) -> bool:
        asked.append(ref)
        return ref == "platform"

    document = manifest(scopes=["site:script:inject", "site:script:cookies"])
    refused = check(document, organization_is_internal=internal)
    assert errors(refused) == [
        "scopes[0]: 'site:script:inject' is reserved for internal platform use; only "
        "integrations of an internal organization may request it",
        "scopes[1]: 'site:script:cookies' is reserved for internal platform use; only "
        "integrations of an internal organization may request it",
    ]
    assert asked == ["acme"]  # asked once, about the manifest's organization
    document["organization"] = "platform"
    accepted = check(document, organization_is_internal=internal)
    assert accepted.ok
    assert accepted.manifest.scopes == ("site:script:inject", "site:script:cookies")


def test_organization_is_not_asked_without_internal_scopes():
    def explode(ref: str) -> bool:
        raise AssertionError("must not be called")

    assert check(manifest(), organization_is_internal=explode).ok


def test_internal_scope_with_an_invalid_organization_is_refused_without_asking():
    result = check(
        manifest(organization="not valid", scopes=["site:script:inject"]),
        organization_is_internal=lambda ref: True,
    )
    assert [p.path for p in result.errors] == ["organization", "scopes[0]"]


# --- categories -----------------------------------------------------------------------------


def test_categories():
    result = check(
        manifest(categories=["analytics", "visitor-auth", "analitics", "analytics", "misc"])
    )
    assert errors(result) == [
        "categories[1]: unknown category 'visitor-auth'; did you mean 'authenticated-access'?",
        "categories[2]: unknown category 'analitics'; did you mean 'analytics'?",
        "categories[3]: 'analytics' is listed twice (also at categories[0])",
        "categories[4]: unknown category 'misc'; the categories are analytics, collaboration, "
        "content, marketing, authenticated-access, other",
    ]
    ok = check(manifest(categories=list(CATEGORIES)))
    assert ok.ok and ok.manifest.categories == CATEGORIES
    assert errors(check(manifest(categories="analytics"))) == [
        "categories: must be a list of categories, found a string"
    ]


# --- blocks -----------------------------------------------------------------------------------


def test_blocks_accepted():
    blocks = [
        {"id": "code-block", "title": "Code", "description": "Insert code"},
        {"id": "embed_2", "title": "Embed", "description": "An embed"},
    ]
    result = check(manifest(blocks=blocks))
    assert result.ok
    assert result.manifest.blocks == tuple(blocks)


def test_block_rules():
    result = check(
        manifest(
            blocks=[
                {"id": "embed", "title": "A", "urlUnfurl": ["https://x/**"]},
                {"id": "embed", "title": "B", "description": "d"},
                {"id": "has space", "title": "C", "description": "d", "titel": "x"},
                "just-a-string",
                {"id": 5, "title": "", "description": []},
            ]
        )
    )
    assert errors(result) == [
        "blocks[0].urlUnfurl: unknown key; the keys allowed here are id, title, description, "
        "visitors",
        "blocks[0].description: is required",
        "blocks[1].id: 'embed' is already the id of blocks[0]",
        "blocks[2].titel: unknown key; did you mean 'title'?",
        "blocks[2].id: must be letters and digits in words joined by '-' or '_', such as "
        "'code-block'; found 'has space'",
        "blocks[3]: must be a mapping with id, title and description, found a string",
        "blocks[4].id: must be a string, found a number; put the value in quotes to make it text",
        "blocks[4].title: must not be empty",
        "blocks[4].description: must be a string, found a list",
    ]


def test_a_block_may_say_its_buttons_are_for_a_sites_visitors():
    blocks = [
        {"id": "poll", "title": "Poll", "description": "Vote", "visitors": True},
        {"id": "chart", "title": "Chart", "description": "A chart", "visitors": False},
    ]
    result = check(manifest(blocks=blocks))
    assert result.ok
    # Only a block for visitors carries the key: false is the same as leaving it out.
    assert result.manifest.blocks == (
        blocks[0],
        {k: v for k, v in blocks[1].items() if k != "visitors"},
    )
    bad = check(
        manifest(blocks=[{"id": "poll", "title": "P", "description": "d", "visitors": "yes"}])
    )
    assert errors(bad) == [
        "blocks[0].visitors: must be true (a published site's visitors may press the block's "
        "buttons) or false, found a string"
    ]


# --- externalLinks ----------------------------------------------------------------------------


def test_external_links():
    good = [
        {"label": "Docs", "url": "https://example.com/docs"},
        {"label": "Home", "url": "http://example.org"},
    ]
    result = check(manifest(externalLinks=good))
    assert result.ok and result.manifest.external_links == tuple(good)
    bad = check(
        manifest(
            externalLinks=[
                {"label": "FTP", "url": "ftp://example.com"},
                {"label": "Relative", "url": "/docs"},
                {"url": "https://example.com", "lable": "x"},
                {"label": "Spaces", "url": "https://exa mple.com"},
                {"label": "Port", "url": "https://example.com:99999/"},
                ["not", "a", "mapping"],
            ]
        )
    )
    reason = "must be an absolute http:// or https:// URL, such as 'https://example.com/docs'"
    assert errors(bad) == [
        f"externalLinks[0].url: {reason}; found 'ftp://example.com'",
        f"externalLinks[1].url: {reason}; found '/docs'",
        "externalLinks[2].lable: unknown key; did you mean 'label'?",
        "externalLinks[2].label: is required",
        f"externalLinks[3].url: {reason}; found 'https://exa mple.com'",
        f"externalLinks[4].url: {reason}; found 'https://example.com:99999/'",
        "externalLinks[5]: must be a mapping with label and url, found a list",
    ]


# --- envs and contentSecurityPolicy (accepted extensions) -----------------------------------


def test_envs_are_accepted_and_their_keys_checked():
    envs = {
        "dev-steeve": {
            "organization": "idE5kUnGGjoPGcbu3FZJ",
            "secrets": {"A": '${{ "op://v/i/A" }}'},
        },
        "staging": {"secrets": {"A": "literal-secret"}, "visibility": "unlisted"},
    }
    result = check(manifest(envs=envs))
    assert result.ok, errors(result)
    assert result.manifest.envs == {
        "dev-steeve": {
            "organization": "idE5kUnGGjoPGcbu3FZJ",
            "secrets": {"A": '${{ "op://v/i/A" }}'},
        },
        "staging": {"secrets": {"A": "***"}, "visibility": "unlisted"},
    }
    bad = check(
        manifest(
            envs={
                "prod": {"secretz": {}, "envs": {}},
                "x y": {},
                "test": ["organization"],
                "dev": {"title": b"bytes"},
            }
        )
    )
    assert errors(bad) == [
        "envs.prod.secretz: unknown key; did you mean 'secrets'?",
        "envs.prod.envs: environments cannot be nested",
        "envs[\"x y\"]: an environment name must be letters, digits, '-', '_' or '.', such as "
        "'staging'",
        "envs.test: must be a mapping of manifest keys, found a list",
        "envs.dev.title: must be plain data (text, numbers, lists, mappings), found binary data",
    ]


def test_content_security_policy():
    policy = {"script-src": "https://cdn.example.com;\n", "connect-src": "*"}
    result = check(manifest(contentSecurityPolicy=policy))
    assert result.ok and result.manifest.content_security_policy == policy
    text = check(manifest(contentSecurityPolicy="script-src 'self'"))
    assert text.ok and text.manifest.content_security_policy == "script-src 'self'"
    bad = check(
        manifest(contentSecurityPolicy={"scripts-src": "x", "connect-src": ["a"], "weird": "x"})
    )
    assert errors(bad) == [
        "contentSecurityPolicy.scripts-src: unknown Content-Security-Policy directive; did you "
        "mean 'script-src'?",
        "contentSecurityPolicy.connect-src: must be a string, found a list",
        "contentSecurityPolicy.weird: unknown Content-Security-Policy directive",
    ]
    assert errors(check(manifest(contentSecurityPolicy=3))) == [
        "contentSecurityPolicy: must be a string or a mapping of CSP directives to sources, "
        "found a number; put the value in quotes to make it text"
    ]


# --- everything at once -----------------------------------------------------------------------


def test_all_problems_are_reported_at_once():
    document = {
        "name": "Bad Name",
        "title": 5,
        "organization": "acme",
        "visiblity": "public",
        "scopes": ["site:views:read", "space:everything"],
        "categories": ["visitor-auth"],
        "externalLinks": [{"label": "x", "url": "nope"}],
        "target": "everywhere",
        "configurations": {
            "account": {
                "properties": {
                    "n": {"type": "number", "title": "N", "description": "d", "default": True}
                }
            }
        },
        "secrets": {"KEY": "${{ env.MISSING_KEY }}"},
    }
    result = check(document, env={})
    assert errors(result) == [
        "name: must be lower-case letters and digits in words joined by single hyphens, such "
        "as 'my-integration'; found 'Bad Name'",
        "title: must be a string, found a number; put the value in quotes to make it text",
        "visiblity: unknown key; did you mean 'visibility'?",
        "scopes[1]: unknown scope 'space:everything'",
        "categories[0]: unknown category 'visitor-auth'; did you mean 'authenticated-access'?",
        "externalLinks[0].url: must be an absolute http:// or https:// URL, such as "
        "'https://example.com/docs'; found 'nope'",
        "target: must be one of all, organization, space, site, found 'everywhere'",
        "configurations.account.properties.n.default: must be a number, found a boolean",
        "secrets.KEY: environment variable MISSING_KEY is not set",
        "description: is required",
        "visibility: is required",
    ]
    assert result.manifest is None
    assert warnings(result) == []


def test_the_package_does_not_import_django():
    code = (
        "import sys, docplatform_sdk.manifest; "
        "bad = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
