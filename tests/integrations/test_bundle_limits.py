"""Publish bundles count folders against the entry limit: an archive of a great many folders
(listed, or implied by a deep path) is refused, by count and before it fills the disk."""

import io
import tarfile
import zipfile

import pytest

from integrations.api import bundles
from tests.api_helpers import api_client, error_attrs, row_counts
from tests.integrations.test_api_catalogue import MANIFEST, manifest_text, upload

FOLDERS = 20_000


class Upload(io.BytesIO):
    """An uploaded file as Django hands it over: a file object with a size."""

    def __init__(self, content: bytes):
        super().__init__(content)
        self.size = len(content)


def zip_of_folders(count: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(MANIFEST, manifest_text())
        for number in range(count):
            archive.writestr(f"folder{number}/", "")
    return buffer.getvalue()


def tar_of_folders(count: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = manifest_text().encode()
        manifest = tarfile.TarInfo(MANIFEST)
        manifest.size = len(data)
        archive.addfile(manifest, io.BytesIO(data))
        for number in range(count):
            folder = tarfile.TarInfo(f"folder{number}")
            folder.type = tarfile.DIRTYPE
            archive.addfile(folder)
    return buffer.getvalue()


def zip_of(names: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in names.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def written(destination) -> int:
    return sum(1 for _ in destination.rglob("*"))


def refusal(content: bytes, destination) -> str:
    with pytest.raises(bundles.ValidationError) as refused:
        bundles.extract_bundle(Upload(content), destination)
    return refused.value.message_dict["bundle"][0]


@pytest.mark.slow
def test_a_zip_of_twenty_thousand_folders_is_refused_before_anything_is_written(tmp_path):
    reason = refusal(zip_of_folders(FOLDERS), tmp_path)
    assert reason == f"more than {bundles.MAX_ENTRIES} files and folders"
    assert written(tmp_path) == 0


@pytest.mark.slow
def test_a_tar_of_twenty_thousand_folders_stops_at_the_limit(tmp_path):
    reason = refusal(tar_of_folders(FOLDERS), tmp_path)
    assert reason == f"more than {bundles.MAX_ENTRIES} files and folders"
    assert written(tmp_path) <= bundles.MAX_ENTRIES


def test_folders_a_deep_path_implies_count_too(tmp_path):
    deep = "/".join(f"d{depth}" for depth in range(bundles.MAX_ENTRIES + 5)) + "/file.txt"
    reason = refusal(zip_of({MANIFEST: manifest_text(), deep: "x"}), tmp_path)
    assert reason == f"more than {bundles.MAX_ENTRIES} files and folders"
    assert written(tmp_path) <= 1


def test_entries_macos_adds_count_although_they_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(bundles, "MAX_ENTRIES", 4)
    junk = {f"__MACOSX/._f{number}": "" for number in range(4)}
    reason = refusal(zip_of({MANIFEST: manifest_text(), **junk}), tmp_path)
    assert reason == "more than 4 files and folders"


def test_a_bundle_within_the_limit_unpacks_with_its_folders(tmp_path):
    files = {MANIFEST: manifest_text(), "lib/util/helpers.py": "x = 1\n", "assets/": ""}
    root = bundles.extract_bundle(Upload(zip_of(files)), tmp_path)
    assert root == tmp_path
    assert (tmp_path / "lib" / "util" / "helpers.py").read_text() == "x = 1\n"
    assert (tmp_path / "assets").is_dir()


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("archive", "filename"), [(zip_of_folders, "bundle.zip"), (tar_of_folders, "b.tar.gz")]
)
def test_the_publish_api_refuses_a_bundle_of_folders_naming_the_field(org_admin, archive, filename):
    before = row_counts()
    response = upload(api_client(org_admin), archive(FOLDERS), filename)
    assert response.status_code == 400
    assert error_attrs(response) == ["bundle"]
    detail = response.json()["errors"][0]["detail"]
    assert detail == f"more than {bundles.MAX_ENTRIES} files and folders"
    assert row_counts() == before
