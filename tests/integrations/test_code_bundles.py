"""An integration's code is its folder's Python files: the script, modules beside it and
packages, published as one bundle whose hash the runtime checks; links, hidden folders and
oversized trees are handled as an author would expect."""

import os

import pytest
import requests
from docplatform_sdk import codebundle
from docplatform_sdk.manifest import check_manifest

from integrations.environment import installation_public_endpoint
from integrations.services import integration_publish_folder
from integrations.services.installations import installation_create
from tests.integrations.conftest import minimal_manifest

MAIN = """
from docplatform_sdk import Response, create_integration
from helpers import greeting
from tools.shout import shout

def fetch(request, context):
    return Response.json({"said": shout(greeting(request.query.get("name", "you")))})

integration = create_integration(fetch=fetch)
"""
FILES = {
    "main.py": MAIN,
    "helpers.py": "def greeting(name):\n    return f'hello {name}'\n",
    "tools/__init__.py": "",
    "tools/shout.py": "def shout(text):\n    return text.upper() + '!'\n",
    ".venv/lib/site.py": "this would never be read",
    "__pycache__/helpers.cpython-311.pyc": "",
    "notes.txt": "not code",
}


@pytest.fixture
def three_files(write_integration):
    return write_integration(
        minimal_manifest(name="multi", script="main.py"), files=FILES, folder="multi"
    )


def test_the_bundle_holds_the_python_files_beside_the_script(three_files):
    result = check_manifest(three_files)
    assert result.ok, result.errors
    assert sorted(result.manifest.code.files) == [
        "helpers.py",
        "main.py",
        "tools/__init__.py",
        "tools/shout.py",
    ]
    assert result.manifest.code.script == "main.py"


def test_a_three_file_integration_publishes_and_runs(
    three_files, org_admin, organization, runtime, transactional_db
):
    version = integration_publish_folder(path=three_files, publisher=org_admin).version
    assert version.bundle_hash == codebundle.digest(bytes(version.bundle))
    installation = installation_create(
        user=org_admin, integration=version.integration, organization=organization
    )
    answer = requests.get(installation_public_endpoint(installation) + "/?name=ada", timeout=20)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"said": "HELLO ADA!"}


@pytest.mark.slow
def test_a_change_to_a_module_is_a_new_version(three_files, org_admin):
    first = integration_publish_folder(path=three_files, publisher=org_admin).version
    (three_files / "helpers.py").write_text("def greeting(name):\n    return f'hi {name}'\n")
    second = integration_publish_folder(path=three_files, publisher=org_admin).version
    assert second.number == first.number + 1
    assert second.bundle_hash != first.bundle_hash


def test_a_link_in_the_folder_is_refused(three_files):
    os.symlink("/etc/passwd", three_files / "tools" / "passwd.py")
    result = check_manifest(three_files)
    assert [str(problem) for problem in result.errors] == [
        "script: the integration's Python files: tools/passwd.py: links are not allowed in "
        "the integration folder"
    ]


def test_too_many_files_or_folders_are_refused_at_once(write_integration):
    root = write_integration(minimal_manifest(script="main.py"), files={"main.py": MAIN})
    for number in range(codebundle.MAX_ENTRIES + 1):
        (root / f"folder{number}").mkdir()
    result = check_manifest(root)
    assert [str(problem) for problem in result.errors] == [
        "script: the integration's Python files: the integration folder holds more than "
        f"{codebundle.MAX_ENTRIES} files and folders"
    ]


def test_a_module_that_is_not_utf8_is_refused(three_files):
    (three_files / "latin.py").write_bytes(b"x = '\xe9'\n")
    result = check_manifest(three_files)
    assert [str(problem) for problem in result.errors] == [
        "script: the integration's Python files: latin.py is not UTF-8 text"
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"not json", "the bundle is not JSON"),
        (b'{"script": "a.py"}', 'the bundle must be an object {"script", "files"}'),
        (b'{"script": "a.py", "files": {"/etc/x.py": ""}}', "/etc/x.py: paths must be plain"),
        (b'{"script": "a.py", "files": {"a/../../x.py": ""}}', "paths must be plain"),
        (b'{"script": "a.py", "files": {"a.sh": ""}}', "only Python files"),
        (b'{"script": "b.py", "files": {"a.py": ""}}', "the bundle's script is not one of"),
    ],
)
def test_the_runtime_refuses_a_malformed_bundle(document, message):
    with pytest.raises(
        codebundle.BundleError, match=message.replace("{", r"\{").replace("(", r"\(")
    ):
        codebundle.decode(document)
