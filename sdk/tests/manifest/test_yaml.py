"""Reading the YAML text: encoding, syntax, limits, file-level errors."""

from __future__ import annotations

import pytest
from docplatform_sdk.manifest import MANIFEST_FILENAME, check_manifest

from .helpers import check_text, dump, errors, manifest, write_file

F = MANIFEST_FILENAME


def test_syntax_error_gives_line_and_column():
    text = "name: my-integration\ntitle: [unclosed\ndescription: x\n"
    result = check_text(text)
    assert len(result.errors) == 1
    assert result.errors[0].path == f"{F}:3:12"
    assert result.errors[0].message.startswith("invalid YAML: ")
    assert result.manifest is None


def test_tab_indentation_error():
    result = check_text("name: x\nscopes:\n\t- a\n")
    assert [p.path for p in result.errors] == [f"{F}:3:1"]


@pytest.mark.parametrize("text", ["", "   \n", "# just a comment\n", "---\n", "~\n"])
def test_empty_manifest(text):
    assert errors(check_text(text)) == [
        f"{F}: the manifest is empty; it needs at least name, title, description, organization, "
        "visibility, scopes"
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [("- a\n- b\n", "a list"), ("just text\n", "a string"), ("42\n", "a number")],
)
def test_top_level_must_be_a_mapping(text, found):
    assert errors(check_text(text)) == [
        f"{F}: the manifest must be a mapping of keys to values, found {found}"
    ]


def test_binary_and_encodings():
    assert errors(check_text(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")) == [
        f"{F}: the file is binary (a NUL byte at offset 8); a manifest is UTF-8 YAML text"
    ]
    assert errors(check_text(b"name: caf\xe9\n")) == [
        f"{F}: the file is not UTF-8 text (byte 0xe9 at offset 9); save it as UTF-8"
    ]
    assert errors(check_text(dump(manifest()).encode("utf-16"))) == [
        f"{F}: the file is UTF-16 text; save it as UTF-8"
    ]
    assert check_text(b"\xef\xbb\xbf" + dump(manifest()).encode()).ok  # UTF-8 BOM is fine


def test_control_character():
    assert errors(check_text("name: a\x07b\n")) == [
        f"{F}:1:8: invalid YAML: the character #x0007 is not allowed in YAML text"
    ]


def test_duplicate_keys_are_errors():
    text = dump(manifest()) + "name: again\nconfigurations:\n  site: {properties: {}}\n  site: {}\n"
    assert errors(check_text(text)) == [
        f"{F}:8:1: duplicate key 'name'; it is already set on line 1",
        f"{F}:11:3: duplicate key 'site'; it is already set on line 10",
    ]


def test_several_documents():
    text = dump(manifest()) + "---\n" + dump(manifest())
    assert errors(check_text(text)) == [
        f"{F}:8:1: invalid YAML: the file holds more than one YAML document; a manifest is one "
        "document"
    ]


def test_too_many_digits():
    text = dump(manifest()) + "summary: " + "9" * 5000 + "\n"
    assert errors(check_text(text)) == [
        f"{F}: invalid YAML: a number has too many digits; put it in quotes if it is meant as text"
    ]


def test_aliases_within_limits_are_expanded():
    text = dump(manifest()).replace("scopes:\n- space:content:read\n", "")
    text += "categories: &c [analytics]\nscopes: []\nenvs:\n  prod: {categories: *c}\n"
    result = check_text(text)
    assert result.ok, errors(result)
    assert result.manifest.envs == {"prod": {"categories": ["analytics"]}}


BILLION_LAUGHS = 'lol: &lol "lol"\n' + "".join(
    f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}' if i > 1 else '*lol'] * 10)}]\n"
    for i in range(1, 10)
)


def test_billion_laughs_is_refused_before_expansion():
    result = check_text(BILLION_LAUGHS)
    assert errors(result) == [
        f"{F}:6:63: the document holds more than 100000 values once its aliases (*name) are "
        "expanded; a manifest needs far fewer, so this looks like an alias bomb"
    ]


def test_billion_laughs_inside_a_manifest():
    text = (
        dump(manifest())
        + "envs:\n  prod:\n    summary:\n"
        + "".join("      " + line + "\n" for line in BILLION_LAUGHS.splitlines())
    )
    [problem] = check_text(text).errors
    assert "alias bomb" in problem.message


def test_deep_nesting_is_refused():
    result = check_text("a: " + "[" * 40 + "]" * 40 + "\n")
    assert errors(result) == [f"{F}:1:35: values are nested more than 32 levels deep"]
    deep_block = "".join("  " * i + f"k{i}:\n" for i in range(40))
    assert errors(check_text(deep_block))[0].endswith("values are nested more than 32 levels deep")
    # very deep flow nesting is cut off early, whatever its length: by our count, or where
    # libyaml's scanner reading ahead meets its own limit (1,000 levels, PyYAML 6.0.4)
    [problem] = errors(check_text("[" * 200_000))
    where, message = problem.split(": ", 1)
    assert message == "values are nested more than 32 levels deep"
    assert where in (f"{F}:1:33", f"{F}:1:1001")


def test_deep_nesting_through_aliases_is_refused():
    text = "a: &a " + "[" * 20 + "]" * 20 + "\nb: " + "[" * 20 + "*a" + "]" * 20 + "\n"
    assert errors(check_text(text)) == [f"{F}:2:24: values are nested more than 32 levels deep"]


def test_recursive_alias_is_refused():
    assert errors(check_text("a: &x [1, *x]\n")) == [
        f"{F}:1:11: the alias *x refers to its own enclosing anchor &x; recursive structures are "
        "not allowed"
    ]


def test_undefined_alias():
    [problem] = check_text("a: *nothing\n").errors
    assert problem.path == f"{F}:1:4"
    assert problem.message.startswith("invalid YAML: found undefined alias")


# --- files and folders ----------------------------------------------------------------------


def test_check_a_folder(tmp_path):
    write_file(tmp_path / F, dump(manifest()))
    assert check_manifest(tmp_path).ok
    assert check_manifest(str(tmp_path)).ok


def test_check_a_file_of_any_name(tmp_path):
    path = write_file(tmp_path / "other-name.yml", dump(manifest(visibility="nope")))
    assert errors(check_manifest(path)) == [
        "visibility: must be one of private, unlisted, public, found 'nope'"
    ]
    broken = write_file(tmp_path / "broken.yaml", "a: [\n")
    assert check_manifest(broken).errors[0].path == "broken.yaml:2:1"


def test_missing_paths(tmp_path):
    assert errors(check_manifest(tmp_path)) == [f"{F}: not found in the folder {tmp_path}"]
    missing = tmp_path / "nope" / "manifest.yaml"
    assert errors(check_manifest(missing)) == [f"manifest.yaml: no such file or folder: {missing}"]


def test_manifest_named_path_is_a_folder(tmp_path):
    (tmp_path / F).mkdir()
    assert errors(check_manifest(tmp_path)) == [f"{F}: is not a regular file"]


def test_nul_in_path_does_not_raise(tmp_path):
    result = check_manifest(str(tmp_path) + "/a\x00b")
    assert not result.ok


def test_file_too_large(tmp_path):
    text = dump(manifest()) + "summary: |\n" + ("  " + "x" * 99 + "\n") * 2700
    path = write_file(tmp_path / F, text)
    assert errors(check_manifest(tmp_path)) == [
        f"{F}: the file is {len(text.encode()) / 1024:.1f} KiB; a manifest may be at most 256 KiB"
    ]
    assert path.stat().st_size > 256 * 1024
    assert check_text(text).errors[0].message.startswith("the file is ")
