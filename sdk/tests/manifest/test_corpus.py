"""Every real manifest of the corpus gets its reviewed outcome (see corpus_expected.json)."""

from __future__ import annotations

import re

import pytest
import yaml
from docplatform_sdk.manifest import MANIFEST_FILENAME, check_manifest

from .corpus import CORPUS, corpus_files, load_expected, outcome
from .helpers import SCRIPT, make_image, write_file

FILES = corpus_files()
FETCH_UNDECLARED = (
    "network.fetch: not declared, so the code may call only this platform's API; to call "
    'other hosts, declare them: network.fetch: ["api.example.com"] (or ["*"] for any public '
    "host); network.fetch: [] says it calls none"
)


@pytest.mark.parametrize("manifest_file", FILES, ids=[path.name for path in FILES])
def test_corpus_outcome(manifest_file, tmp_path):
    expected = load_expected()
    assert manifest_file.name in expected, "new corpus file: run update_corpus_expected.py"
    assert outcome(manifest_file, tmp_path) == expected[manifest_file.name]


#: Problems that come from the corpus folder having no files, no environment, an organization
#: that is not internal, and TypeScript scripts; everything else is about the manifest itself.
SETTING_PROBLEMS = (
    "file not found: ",
    "must be a Python file ending in .py",
    "is reserved for internal platform use",
    "is not set",
)


@pytest.mark.parametrize("manifest_file", FILES, ids=[path.name for path in FILES])
def test_corpus_with_files_environment_and_internal_organization(manifest_file, tmp_path):
    """Given its files (a .py script), its variables and an internal organization, each real
    manifest has exactly its own problems left: those of the reviewed list that remain."""
    text = manifest_file.read_text(encoding="utf-8")
    document = yaml.safe_load(text)
    script = document.get("script")
    if isinstance(script, str):
        python = re.sub(r"\.tsx?$", ".py", script)
        text = text.replace(f"script: {script}", f"script: {python}")
        write_file(tmp_path / python, SCRIPT)
    if isinstance(document.get("icon"), str):
        make_image(tmp_path / document["icon"], (128, 128))
    for preview in document.get("previewImages") or []:
        make_image(tmp_path / preview, (1600, 800))
    write_file(tmp_path / MANIFEST_FILENAME, text)
    env = {name: "value" for name in re.findall(r"env\.([A-Za-z_][A-Za-z0-9_]*)", text)}
    result = check_manifest(tmp_path, env=env, organization_is_internal=lambda ref: True)
    expected = [
        problem
        for problem in load_expected()[manifest_file.name]["errors"]
        if not any(part in problem for part in SETTING_PROBLEMS)
    ]
    assert [str(problem) for problem in result.errors] == expected
    # None of them declares network.fetch: each is told how (its only warning).
    assert [str(problem) for problem in result.warnings] == [FETCH_UNDECLARED]
    assert result.ok == (not expected)


def test_expectations_match_the_corpus():
    if not FILES:
        pytest.skip(f"corpus not found at {CORPUS}")
    assert sorted(load_expected()) == [path.name for path in FILES]


def test_corpus_manifest_with_its_files_is_accepted(tmp_path):
    """webhook.yaml, given its assets and a Python script, passes as is otherwise."""
    source = CORPUS / "webhook.yaml"
    if not source.is_file():
        pytest.skip(f"corpus not found at {CORPUS}")
    text = source.read_text(encoding="utf-8").replace("./src/index.ts", "./src/index.py")
    write_file(tmp_path / MANIFEST_FILENAME, text)
    write_file(tmp_path / "src" / "index.py", SCRIPT)
    make_image(tmp_path / "assets" / "icon.png", (128, 128))
    result = check_manifest(tmp_path, env={})
    assert result.ok, [str(p) for p in result.errors]
    m = result.manifest
    assert m.name == "webhook" and m.target == "all"
    assert m.configurations == {
        "space": {"componentId": "config"},
        "site": {"componentId": "config"},
    }
    assert m.scopes == ("site:views:read", "space:content:read", "page:feedback:read")
    assert m.content_security_policy is None


def test_corpus_manifest_with_internal_organization_and_env(tmp_path):
    """slack.yaml: secrets resolved from env, envs kept with their op:// placeholders."""
    source = CORPUS / "slack.yaml"
    if not source.is_file():
        pytest.skip(f"corpus not found at {CORPUS}")
    text = source.read_text(encoding="utf-8").replace("./src/index.ts", "./src/index.py")
    write_file(tmp_path / MANIFEST_FILENAME, text)
    write_file(tmp_path / "src" / "index.py", SCRIPT)
    make_image(tmp_path / "assets" / "icon.png", (128, 128))
    for name in ("slack-preview.png", "slack-marketplace-1.png", "slack-marketplace-3.png"):
        make_image(tmp_path / "assets" / name, (1600, 800))
    env = {
        f"SLACK_{key}": f"value-{key}"
        for key in ("CLIENT_ID", "CLIENT_SECRET", "SIGNING_SECRET", "OPENAI_API_KEY")
    }
    result = check_manifest(tmp_path, env=env)
    assert result.ok, [str(p) for p in result.errors]
    m = result.manifest
    assert m.secrets["CLIENT_ID"] == "value-CLIENT_ID"
    assert m.raw["secrets"]["CLIENT_ID"] == "${{ env.SLACK_CLIENT_ID }}"
    assert m.envs["prod"]["secrets"]["CLIENT_ID"].startswith('${{ "op://')
    assert m.configurations["account"]["required"] == ["oauth_credentials", "default_channel"]
    assert len(m.preview_images) == 3
