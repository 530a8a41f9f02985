"""Property tests: no input makes the checker raise; results are always consistent."""

from __future__ import annotations

import json

import pytest
import yaml
from docplatform_sdk.manifest import CheckResult, Manifest, manifest_from_text
from docplatform_sdk.manifest.constants import TOP_LEVEL_KEYS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import MINIMAL, dump

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(
        [
            "${{ env.X }}",
            '${{ "op://a/b" }}',
            "space:content:read",
            "site:script:inject",
            "string",
            "button",
            "/oauth",
            "https://example.com",
            "./icon.png",
            "../x.py",
            "",
        ]
    )
)
keys = st.sampled_from(
    [
        *TOP_LEVEL_KEYS,
        "account",
        "site",
        "space",
        "properties",
        "required",
        "componentId",
        "type",
        "default",
        "enum",
        "completion_url",
        "button_text",
        "callback_url",
        "id",
        "label",
        "url",
        "script-src",
    ]
) | st.text(max_size=10)
trees = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=30,
)


def assert_consistent(result: CheckResult) -> None:
    assert isinstance(result, CheckResult)
    assert all(isinstance(p.path, str) and p.message for p in result.errors + result.warnings)
    if result.errors:
        assert result.manifest is None
    else:
        assert isinstance(result.manifest, Manifest)
        json.dumps(result.manifest.raw)  # safe to store in a JSON column


def run(text, env=None):
    result = manifest_from_text(text, root=None, env=env, organization_is_internal=lambda r: True)
    assert_consistent(result)
    return result


@pytest.mark.slow
@FUZZ
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(data):
    run(data)


@FUZZ
@given(st.text(max_size=500))
def test_arbitrary_text_never_raises(text):
    run(text, env={})


@FUZZ
@given(trees)
def test_arbitrary_yaml_trees_never_raise(tree):
    run(yaml.safe_dump(tree), env={"X": "x"})


@pytest.mark.slow
@FUZZ
@given(st.dictionaries(keys, trees, max_size=6), st.booleans())
def test_trees_mixed_into_a_valid_manifest_never_raise(extra, with_env):
    document = {**MINIMAL, **extra}
    run(dump(document), env={"X": "x"} if with_env else None)


@pytest.mark.slow
@FUZZ
@given(
    st.sampled_from(["account", "site", "space"]),
    st.dictionaries(st.text(max_size=8), st.dictionaries(keys, trees, max_size=6), max_size=3),
    st.one_of(st.none(), st.lists(st.text(max_size=8) | scalars, max_size=3)),
)
def test_arbitrary_properties_never_raise(level, properties, required):
    configuration = {"properties": properties}
    if required is not None:
        configuration["required"] = required
    run(dump({**MINIMAL, "configurations": {level: configuration}}))


@FUZZ
@given(st.text(alphabet="[]{}:,-&*ab !\n'\"#|>?", max_size=200))
def test_yaml_punctuation_never_raises(text):
    run(text)
