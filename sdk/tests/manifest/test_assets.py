"""Files named by the manifest: script, icon, previewImages."""

from __future__ import annotations

import os

import pytest
from docplatform_sdk.manifest import MANIFEST_FILENAME, check_manifest

from .helpers import SCRIPT, check, dump, errors, make_image, manifest, warnings, write_file


def integration(tmp_path, **changes):
    """Write a manifest with ``changes`` into tmp_path and check the folder."""
    write_file(tmp_path / MANIFEST_FILENAME, dump(manifest(**changes)))
    return check_manifest(tmp_path)


@pytest.fixture
def assets(tmp_path):
    write_file(tmp_path / "src" / "main.py", SCRIPT)
    make_image(tmp_path / "assets" / "icon.png", (256, 256))
    make_image(tmp_path / "assets" / "preview.jpg", (1600, 800), "JPEG")
    make_image(tmp_path / "assets" / "preview.png", (1600, 800))
    return tmp_path


def test_assets_are_read(assets):
    result = integration(
        assets,
        script="./src/main.py",
        icon="assets/icon.png",
        previewImages=["./assets/preview.jpg", "assets/../assets/preview.png"],
        network={"fetch": []},
    )
    assert result.ok, errors(result)
    assert result.warnings == []
    m = result.manifest
    assert m.script.path == "src/main.py"
    assert m.script.content == SCRIPT.encode()
    assert m.script.content_type == "text/x-python"
    assert (m.script.width, m.script.height) == (None, None)
    assert (m.icon.path, m.icon.content_type, m.icon.width, m.icon.height) == (
        "assets/icon.png",
        "image/png",
        256,
        256,
    )
    assert m.icon.content == (assets / "assets" / "icon.png").read_bytes()
    assert [(a.path, a.content_type, a.width, a.height) for a in m.preview_images] == [
        ("assets/preview.jpg", "image/jpeg", 1600, 800),
        ("assets/preview.png", "image/png", 1600, 800),
    ]
    assert m.raw["script"] == "./src/main.py"  # raw keeps what was written
    assert "content=" not in repr(m.icon)


def test_preview_size_is_a_warning(tmp_path):
    make_image(tmp_path / "wide.png", (800, 600))
    result = integration(tmp_path, previewImages=["wide.png"])
    assert result.ok
    assert warnings(result) == [
        "previewImages[0]: wide.png is 800x600 pixels; preview images should be 1600x800 "
        "(ratio 2:1)"
    ]
    assert result.manifest.preview_images[0].width == 800


def test_extension_mismatch_is_a_warning(tmp_path):
    make_image(tmp_path / "icon.png", (64, 64), "JPEG")
    result = integration(tmp_path, icon="icon.png")
    assert result.ok
    assert warnings(result) == ["icon: icon.png holds a JPEG image but its name ends in .png"]
    assert result.manifest.icon.content_type == "image/jpeg"


def test_fake_and_damaged_images(tmp_path):
    write_file(tmp_path / "fake.png", "this is not a picture")
    write_file(tmp_path / "anim.png", b"GIF89a" + b"\x00" * 20)
    write_file(tmp_path / "logo.svg", '<svg xmlns="http://www.w3.org/2000/svg"/>')
    write_file(tmp_path / "empty.png", b"")
    good = make_image(tmp_path / "good.png", (1600, 800)).read_bytes()
    write_file(tmp_path / "truncated.png", good[: len(good) // 2])
    write_file(tmp_path / "header-only.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 50)
    result = integration(
        tmp_path,
        icon="fake.png",
        previewImages=["anim.png", "logo.svg", "empty.png", "truncated.png", "header-only.jpg"],
    )
    assert [str(p) for p in result.errors[:4]] == [
        "icon: fake.png must be a PNG or JPEG image; it is not an image of a known kind",
        "previewImages[0]: anim.png must be a PNG or JPEG image; it is a GIF image",
        "previewImages[1]: logo.svg must be a PNG or JPEG image; it is an SVG image",
        "previewImages[2]: empty.png must be a PNG or JPEG image; it is an empty file",
    ]
    assert [p.path for p in result.errors[4:]] == ["previewImages[3]", "previewImages[4]"]
    assert result.errors[4].message.startswith(
        "truncated.png is not a valid PNG image (damaged or truncated: "
    )
    assert result.errors[5].message.startswith(
        "header-only.jpg is not a valid JPEG image (damaged or truncated: "
    )
    assert result.manifest is None


def test_too_many_pixels(tmp_path):
    make_image(tmp_path / "huge.png", (6000, 5000))
    assert errors(integration(tmp_path, icon="huge.png")) == [
        "icon: huge.png is 6000x5000 pixels, more than the 25000000 pixels an image may have"
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/etc/passwd", "must be a path relative to the integration folder, not an absolute path"),
        ("C:/icon.png", "must be a path relative to the integration folder, not an absolute path"),
        ("../icon.png", "must stay inside the integration folder ('..' leads out of it)"),
        ("assets/../../icon.png", "must stay inside the integration folder ('..' leads out of it)"),
        ("assets\\icon.png", "use forward slashes (/) in paths"),
        ("", "must not be empty"),
        ("  ", "must not be empty"),
        ("./", "must be the path of a file, not of the integration folder"),
        ("a\x00b.png", "must be a file path; it contains a NUL character"),
        (
            "missing.png",
            "file not found: missing.png (paths are relative to the folder holding the manifest)",
        ),
        ("./assets/", "assets is a folder, not a file"),
    ],
)
def test_bad_asset_paths(tmp_path, value, expected):
    (tmp_path / "assets").mkdir()
    assert errors(integration(tmp_path, icon=value)) == [f"icon: {expected}"]


def test_asset_path_must_be_a_string(tmp_path):
    assert errors(integration(tmp_path, icon=["a.png"], previewImages="a.png")) == [
        "icon: must be a string, found a list",
        "previewImages: must be a list of image paths, found a string",
    ]


def test_symlink_out_of_the_root_is_refused(tmp_path):
    outside = make_image(tmp_path / "outside" / "secret.png", (10, 10))
    root = tmp_path / "integration"
    root.mkdir()
    (root / "icon.png").symlink_to(outside)
    (root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    result = integration(root, icon="icon.png", previewImages=["linked/secret.png"])
    assert errors(result) == [
        "icon: icon.png leads outside the integration folder (through a symbolic link); the "
        "file must be inside it",
        "previewImages[0]: linked/secret.png leads outside the integration folder (through a "
        "symbolic link); the file must be inside it",
    ]


def test_symlink_inside_the_root_is_fine(tmp_path):
    make_image(tmp_path / "assets" / "real.png", (1600, 800))
    (tmp_path / "icon.png").symlink_to(tmp_path / "assets" / "real.png")
    result = integration(tmp_path, icon="icon.png")
    assert result.ok and result.manifest.icon.path == "icon.png"


def test_symlink_loop_does_not_raise(tmp_path):
    (tmp_path / "a.png").symlink_to(tmp_path / "b.png")
    (tmp_path / "b.png").symlink_to(tmp_path / "a.png")
    [problem] = integration(tmp_path, icon="a.png").errors
    assert problem.path == "icon"


def test_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    assert errors(integration(tmp_path, script="pipe.py")) == [
        "script: pipe.py is not a regular file"
    ]


def test_size_limits(tmp_path):
    write_file(tmp_path / "big.py", "#" * (1024 * 1024 + 1))
    write_file(tmp_path / "big.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * (2 * 1024 * 1024))
    result = integration(tmp_path, script="big.py", icon="big.png")
    assert errors(result) == [
        "script: big.py is too large: at most 1 MiB is allowed, the file has 1048577 bytes",
        "icon: big.png is too large: at most 2 MiB is allowed, the file has 2097160 bytes",
    ]


def test_script_rules(tmp_path):
    write_file(tmp_path / "src" / "index.ts", "export default {}")
    assert errors(integration(tmp_path, script="./src/index.ts")) == [
        "script: must be a Python file ending in .py, found .ts: the runtime runs Python code"
    ]
    write_file(tmp_path / "main", SCRIPT)
    assert errors(integration(tmp_path, script="main")) == [
        "script: must be a Python file ending in .py, found no extension: the runtime runs "
        "Python code"
    ]
    write_file(tmp_path / "broken.py", "def oops(:\n    pass\n")
    assert errors(integration(tmp_path, script="broken.py")) == [
        "broken.py:1:10: SyntaxError: invalid syntax"
    ]
    write_file(tmp_path / "latin.py", b"x = '\xe9'\n")
    assert errors(integration(tmp_path, script="latin.py")) == [
        "script: latin.py is not UTF-8 text (invalid byte at offset 5)"
    ]
    write_file(tmp_path / "deep.py", "x = " + "-" * 200_000 + "1\n")
    [problem] = integration(tmp_path, script="deep.py").errors
    assert problem.path == "script" and "deep.py is not valid Python" in problem.message


def test_too_many_preview_images(tmp_path):
    assert errors(integration(tmp_path, previewImages=["a.png"] * 11)) == [
        "previewImages: lists 11 images; at most 10 are allowed"
    ]


def test_without_a_folder_assets_cannot_be_checked():
    result = check(manifest(script="src/main.py", icon="./icon.png"), root=None)
    assert errors(result) == [
        "script: src/main.py cannot be checked without the integration folder",
        "icon: icon.png cannot be checked without the integration folder",
    ]
    # path rules still apply
    assert errors(check(manifest(icon="../x.png"), root=None)) == [
        "icon: must stay inside the integration folder ('..' leads out of it)"
    ]


def test_manifest_given_by_file_path_uses_its_folder(tmp_path):
    make_image(tmp_path / "icon.png", (32, 32))
    path = write_file(tmp_path / "my-manifest.yaml", dump(manifest(icon="icon.png")))
    result = check_manifest(path)
    assert result.ok and result.manifest.icon.width == 32
