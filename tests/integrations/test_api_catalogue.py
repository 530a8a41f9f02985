"""The integrations catalogue, publishing by upload, versions and the install link."""

import io
import os
import tarfile
import zipfile

import pytest
import yaml

from integrations.api import bundles
from integrations.models import Integration, IntegrationVersion
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs, row_counts
from tests.factories import MembershipFactory, OrganizationFactory
from tests.integrations.conftest import listing_approve, minimal_manifest

pytestmark = pytest.mark.django_db
MANIFEST = "service-manifest.yaml"


@pytest.fixture
def other_member(db):
    return MembershipFactory(organization=OrganizationFactory(subdomain="globex")).user


@pytest.fixture
def catalogue(publish, org_admin):
    """acme's integrations, one per visibility (the public one approved by an operator)."""
    published = {
        visibility: publish(
            org_admin,
            name=f"{visibility}-tool",
            visibility=visibility,
            categories=["analytics"] if visibility == "public" else ["content"],
        )
        for visibility in ("private", "unlisted", "public")
    }
    listing_approve(published["public"])
    return published


def names(response) -> list[str]:
    """The names listed, among the integrations these tests publish (built-in ones aside)."""
    assert response.status_code == 200
    return [row["name"] for row in response.json()["results"] if row["name"].endswith("-tool")]


# --- Seeing integrations --------------------------------------------------------------------


def test_the_catalogue_lists_what_the_caller_may_see(catalogue, org_member, other_member):
    assert api_client().get(f"{API}/integrations/").status_code == 401
    assert names(api_client(other_member).get(f"{API}/integrations/")) == ["public-tool"]
    assert names(api_client(org_member).get(f"{API}/integrations/")) == [
        "private-tool",
        "public-tool",
        "unlisted-tool",
    ]


def test_the_catalogue_filters_by_category_and_text(catalogue, org_member):
    client = api_client(org_member)
    assert names(client.get(f"{API}/integrations/?category=analytics")) == ["public-tool"]
    assert names(client.get(f"{API}/integrations/?search=unlisted")) == ["unlisted-tool"]
    assert names(client.get(f"{API}/integrations/?category=other")) == []


DETAIL_EXPECTED = {
    # (other organization, member)
    "private": (404, 200),
    "unlisted": (404, 200),
    "unlisted-with-token": (200, 200),
    "public": (200, 200),
}


@pytest.mark.parametrize("variant", list(DETAIL_EXPECTED))
@pytest.mark.parametrize("caller", ["anonymous", "other-organization", "member"])
def test_integration_detail_by_caller_and_visibility(
    catalogue, org_member, other_member, caller, variant
):
    integration = catalogue[variant.removesuffix("-with-token")]
    query = f"?install_token={integration.install_link_token}" if "token" in variant else ""
    user = {"anonymous": None, "other-organization": other_member, "member": org_member}[caller]
    response = api_client(user).get(f"{API}/integrations/{integration.name}/{query}")
    if caller == "anonymous":
        assert response.status_code == 401
        return
    expected = DETAIL_EXPECTED[variant][caller == "member"]
    assert response.status_code == expected
    if expected == 404:
        assert response.json() == NOT_FOUND
    else:
        body = response.json()
        assert body["name"] == integration.name
        assert body["latestVersion"]["number"] == 1
        assert integration.install_link_token not in response.content.decode()


def test_versions_are_for_the_owning_organizations_members(catalogue, org_member, other_member):
    listed = api_client(org_member).get(f"{API}/integrations/private-tool/versions/").json()
    assert [row["number"] for row in listed["results"]] == [1]
    outsider = api_client(other_member)
    assert outsider.get(f"{API}/integrations/public-tool/versions/").status_code == 403
    assert outsider.get(f"{API}/integrations/private-tool/versions/").json() == NOT_FOUND


@pytest.mark.slow
@pytest.mark.parametrize("path", ["install-link/", "install-link/rotate/"])
def test_the_install_link_is_for_the_owning_organizations_admins(
    catalogue, org_admin, org_member, other_member, path
):
    method = "post" if "rotate" in path else "get"
    url = f"{API}/integrations/unlisted-tool/{path}"
    token = catalogue["unlisted"].install_link_token
    assert getattr(api_client(org_member), method)(url).status_code == 403
    assert getattr(api_client(other_member), method)(url).json() == NOT_FOUND
    response = getattr(api_client(org_admin), method)(url)
    assert response.status_code == 200
    stored = Integration.objects.get(name="unlisted-tool").install_link_token
    assert response.json() == {"installToken": stored}
    assert (stored != token) == (method == "post")


# --- Publishing by upload -------------------------------------------------------------------


def zip_bundle(files: dict, *, folder: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(folder + name, content)
    return buffer.getvalue()


def tar_bundle(files: dict, *, folder: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in files.items():
            data = content if isinstance(content, bytes) else content.encode()
            info = tarfile.TarInfo(folder + name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def manifest_text(**fields) -> str:
    return yaml.safe_dump(minimal_manifest(**fields), sort_keys=False)


def upload(client, content: bytes, filename: str = "bundle.zip"):
    file = io.BytesIO(content)
    file.name = filename
    return client.post(f"{API}/integrations/", {"bundle": file}, format="multipart")


def test_publishing_a_zip_then_unchanged_then_changed(org_admin):
    client = api_client(org_admin)
    files = {MANIFEST: manifest_text(secrets={"API_KEY": "resolved-value"}), "main.py": "x = 1\n"}
    first = upload(client, zip_bundle(files))
    assert first.status_code == 201
    body = first.json()
    assert body["integration"] == "hello"
    assert body["created"] is True
    assert body["version"]["number"] == 1
    assert len(body["version"]["contentHash"]) == 64
    assert "resolved-value" not in first.content.decode()

    again = upload(client, zip_bundle(files))
    assert again.status_code == 200
    assert again.json()["created"] is False

    files[MANIFEST] = manifest_text(description="Changed.")
    changed = upload(client, tar_bundle(files, folder="hello/"), "hello.tar.gz")
    assert changed.status_code == 201
    assert changed.json()["version"]["number"] == 2
    assert IntegrationVersion.objects.filter(integration__name="hello").count() == 2


def test_a_secret_left_as_an_env_placeholder_is_a_field_error(org_admin):
    files = {MANIFEST: manifest_text(secrets={"API_KEY": "${{ env.API_KEY }}"})}
    response = upload(api_client(org_admin), zip_bundle(files))
    assert response.status_code == 400
    assert error_attrs(response) == ["secrets.API_KEY"]
    assert not Integration.objects.filter(name="hello").exists()


def test_an_invalid_manifest_reports_every_problem_by_path(org_admin):
    files = {MANIFEST: manifest_text(visibility="secret", scopes=["nope"])}
    response = upload(api_client(org_admin), zip_bundle(files))
    assert response.status_code == 400
    attrs = error_attrs(response)
    assert "visibility" in attrs
    assert any(attr.startswith("scopes") for attr in attrs)


def test_only_the_owning_organizations_admins_publish(org_member):
    response = upload(api_client(org_member), zip_bundle({MANIFEST: manifest_text()}))
    assert response.status_code == 403
    assert "not an admin of organization 'acme'" in response.json()["errors"][0]["detail"]
    assert not Integration.objects.filter(name="hello").exists()
    assert upload(api_client(), zip_bundle({MANIFEST: manifest_text()})).status_code == 401


def zip_with_link() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(MANIFEST, manifest_text())
        link = zipfile.ZipInfo("icon.png")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "/etc/passwd")
    return buffer.getvalue()


def tar_with(kind: bytes, name: str = "thing", linkname: str = "/etc/passwd") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = manifest_text().encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
        special = tarfile.TarInfo(name)
        special.type = kind
        special.linkname = linkname
        archive.addfile(special)
    return buffer.getvalue()


MALFORMED_BUNDLES = {
    "not-an-archive": (b"just some text", "not a .zip or .tar.gz"),
    "empty-gzip": (b"\x1f\x8b\x08\x00garbage", "cannot be read"),
    "truncated-zip": (zip_bundle({MANIFEST: manifest_text()})[:-30], "not a .zip or .tar.gz"),
    "zip-slip": (zip_bundle({MANIFEST: manifest_text(), "../evil.py": "x"}), "'..'"),
    "tar-slip": (tar_bundle({MANIFEST: manifest_text(), "a/../../evil": "x"}), "'..'"),
    "absolute-zip": (zip_bundle({MANIFEST: manifest_text(), "/etc/evil": "x"}), "absolute"),
    "absolute-tar": (tar_bundle({MANIFEST: manifest_text(), "/tmp/evil": "x"}), "absolute"),
    "zip-symlink": (zip_with_link(), "links are not allowed"),
    "tar-symlink": (tar_with(tarfile.SYMTYPE), "links are not allowed"),
    "tar-hardlink": (tar_with(tarfile.LNKTYPE, linkname=MANIFEST), "links are not allowed"),
    "tar-device": (tar_with(tarfile.CHRTYPE), "only files and folders"),
    "tar-fifo": (tar_with(tarfile.FIFOTYPE), "only files and folders"),
    "no-manifest": (zip_bundle({"main.py": "x = 1\n"}), "no service-manifest.yaml"),
    "two-top-level-folders": (
        zip_bundle({f"a/{MANIFEST}": manifest_text(), f"b/{MANIFEST}": manifest_text()}),
        "no service-manifest.yaml",
    ),
    "manifest-too-deep": (
        zip_bundle({f"a/b/{MANIFEST}": manifest_text()}),
        "no service-manifest.yaml",
    ),
    "empty-file": (b"", "empty"),
}


@pytest.mark.parametrize("case", list(MALFORMED_BUNDLES))
def test_malformed_bundles_are_refused_clearly(org_admin, tmp_path, case):
    content, reason = MALFORMED_BUNDLES[case]
    before = row_counts()
    response = upload(api_client(org_admin), content)
    assert response.status_code == 400
    assert error_attrs(response) == ["bundle"]
    assert reason in response.json()["errors"][0]["detail"]
    assert row_counts() == before
    assert not (tmp_path.parent / "evil.py").exists()


def test_a_bundle_over_the_upload_limit_is_refused(org_admin, monkeypatch):
    monkeypatch.setattr(bundles, "MAX_BUNDLE_BYTES", 1000)
    content = zip_bundle({MANIFEST: manifest_text(), "blob.bin": os.urandom(5000)})
    response = upload(api_client(org_admin), content)
    assert error_attrs(response) == ["bundle"]
    assert "larger than" in response.json()["errors"][0]["detail"]


def test_a_request_declaring_a_huge_body_is_refused_before_it_is_read(org_admin):
    response = api_client(org_admin).post(
        f"{API}/integrations/",
        b"",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(50 * bundles.MIB),
    )
    assert error_attrs(response) == ["bundle"]


@pytest.mark.parametrize("archive", [zip_bundle, tar_bundle])
def test_a_bundle_too_big_once_unpacked_is_refused(org_admin, archive):
    zeros = bytes(bundles.MAX_EXTRACTED_BYTES + 1)
    response = upload(api_client(org_admin), archive({MANIFEST: manifest_text(), "z": zeros}))
    assert error_attrs(response) == ["bundle"]
    assert "once unpacked" in response.json()["errors"][0]["detail"]


def test_a_bundle_with_too_many_files_is_refused(org_admin, monkeypatch):
    monkeypatch.setattr(bundles, "MAX_ENTRIES", 3)
    files = {MANIFEST: manifest_text(), **{f"f{i}.txt": "x" for i in range(5)}}
    response = upload(api_client(org_admin), zip_bundle(files))
    assert "more than 3 files" in response.json()["errors"][0]["detail"]


@pytest.mark.parametrize(
    ("data", "format_"),
    [({}, "multipart"), ({"bundle": "text"}, "multipart"), ({"bundle": "x"}, "json")],
)
def test_a_missing_bundle_is_a_field_error(org_admin, data, format_):
    response = api_client(org_admin).post(f"{API}/integrations/", data, format=format_)
    if format_ == "json":
        assert response.status_code == 415
    else:
        assert error_attrs(response) == ["bundle"]
