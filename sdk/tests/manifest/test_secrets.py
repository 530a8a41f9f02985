"""``secrets``: ``${{ env.NAME }}`` resolution (CLI) or resolved values only (REST API)."""

from __future__ import annotations

import pytest

from .helpers import check, errors, manifest, warnings


def with_secrets(**secrets):
    return manifest(secrets=secrets)


def test_env_placeholders_are_resolved():
    document = with_secrets(
        CLIENT_ID="${{ env.GITHUB_CLIENT_ID }}",
        TIGHT="${{env.TIGHT_VAR}}",
        SPACED="  ${{   env.SPACED_VAR   }}  ",
        LITERAL="plain-value",
    )
    env = {"GITHUB_CLIENT_ID": "id-123", "TIGHT_VAR": "t", "SPACED_VAR": "s", "OTHER": "x"}
    result = check(document, env=env)
    assert result.ok, errors(result)
    assert result.manifest.secrets == {
        "CLIENT_ID": "id-123",
        "TIGHT": "t",
        "SPACED": "s",
        "LITERAL": "plain-value",
    }
    # raw keeps placeholders (safe to show) and hides literal values
    assert result.manifest.raw["secrets"] == {
        "CLIENT_ID": "${{ env.GITHUB_CLIENT_ID }}",
        "TIGHT": "${{env.TIGHT_VAR}}",
        "SPACED": "  ${{   env.SPACED_VAR   }}  ",
        "LITERAL": "***",
    }
    assert "id-123" not in repr(result.manifest)
    assert "plain-value" not in repr(result.manifest)


def test_missing_variable_names_variable_and_secret():
    result = check(with_secrets(CLIENT_ID="${{ env.GITHUB_CLIENT_ID }}"), env={})
    assert errors(result) == ["secrets.CLIENT_ID: environment variable GITHUB_CLIENT_ID is not set"]


def test_empty_variable_is_a_warning():
    result = check(with_secrets(KEY="${{ env.KEY }}"), env={"KEY": ""})
    assert result.ok
    assert warnings(result) == ["secrets.KEY: environment variable KEY is empty"]


@pytest.mark.parametrize(
    "value",
    [
        '${{ "op://gitbook-integrations/linear/CLIENT_ID" }}',
        "${{ secrets.OTHER }}",
        "${{ env.A }}-${{ env.B }}",
        "Bearer ${{ env.TOKEN }}",
        "${{ env.lower-dash }}",
    ],
)
def test_other_expressions_are_unsupported(value):
    result = check(with_secrets(S=value), env={"A": "a", "B": "b", "TOKEN": "t"})
    [problem] = result.errors
    assert problem.path == "secrets.S"
    assert problem.message.startswith("unsupported expression ${{")
    assert problem.message.endswith(
        ": only ${{ env.NAME }} is supported; resolve other references (such as op:// ones) "
        "before checking"
    )


def test_unsupported_expression_message_shows_the_expression_only():
    result = check(with_secrets(S="prefix-${{ vault.X }}"), env={})
    assert errors(result) == [
        "secrets.S: unsupported expression ${{ vault.X }}: only ${{ env.NAME }} is supported; "
        "resolve other references (such as op:// ones) before checking"
    ]


def test_rest_api_mode_refuses_placeholders():
    result = check(with_secrets(CLIENT_ID="${{ env.GITHUB_CLIENT_ID }}", OK="resolved"), env=None)
    assert errors(result) == [
        "secrets.CLIENT_ID: the placeholder ${{ env.GITHUB_CLIENT_ID }} must be resolved before "
        "upload: send the secret's value itself"
    ]
    accepted = check(with_secrets(CLIENT_ID="abc", OK="resolved"), env=None)
    assert accepted.ok
    assert accepted.manifest.secrets == {"CLIENT_ID": "abc", "OK": "resolved"}
    assert accepted.manifest.raw["secrets"] == {"CLIENT_ID": "***", "OK": "***"}


def test_secret_shapes_never_echo_values():
    result = check(
        manifest(secrets={"NUM": 123456789, "2BAD": "x", "bad-name": "y", "LIST": ["hunter2"]}),
        env={},
    )
    assert errors(result) == [
        "secrets.NUM: must be a string, found a number; put the value in quotes to make it text",
        "secrets.2BAD: a secret name must be letters, digits and underscores, not starting "
        "with a digit, such as CLIENT_ID",
        "secrets.bad-name: a secret name must be letters, digits and underscores, not starting "
        "with a digit, such as CLIENT_ID",
        "secrets.LIST: must be a string, found a list",
    ]
    assert "123456789" not in str(errors(result)) and "hunter2" not in str(errors(result))


@pytest.mark.parametrize(("value", "found"), [(None, "an empty value"), (["A"], "a list")])
def test_secrets_must_be_a_mapping(value, found):
    assert errors(check(manifest(secrets=value), env={})) == [
        f"secrets: must be a mapping of secret names to values, found {found}"
    ]


def test_empty_secrets_mapping():
    result = check(manifest(secrets={}), env={})
    assert result.ok and result.manifest.secrets == {}


def test_too_long_secret():
    result = check(with_secrets(KEY="${{ env.KEY }}"), env={"KEY": "k" * (64 * 1024 + 1)})
    assert errors(result) == ["secrets.KEY: environment variable KEY is longer than 64 KiB"]
    literal = check(with_secrets(KEY="k" * (64 * 1024 + 1)), env=None)
    assert errors(literal) == ["secrets.KEY: the value is longer than 64 KiB"]


def test_envs_secrets_are_not_resolved_but_redacted():
    document = manifest(
        secrets={"A": "${{ env.A }}"},
        envs={"prod": {"secrets": {"A": '${{ "op://vault/item/A" }}', "B": "literal"}}},
    )
    result = check(document, env={"A": "resolved"})
    assert result.ok, errors(result)
    assert result.manifest.secrets == {"A": "resolved"}
    assert result.manifest.raw["envs"]["prod"]["secrets"] == {
        "A": '${{ "op://vault/item/A" }}',
        "B": "***",
    }
    assert result.manifest.envs == result.manifest.raw["envs"]
    assert document["envs"]["prod"]["secrets"]["B"] == "literal"  # input left untouched
