"""``integration new``: a new integration folder (manifest, script, its test, README) that
``check`` accepts and ``pytest`` passes as it is. Pure Python."""

import re
from pathlib import Path
from string import Template

from ..manifest import MANIFEST_FILENAME
from ..manifest.base import NAME_RE, ORGANIZATION_RE
from ..manifest.constants import MAX_NAME_LENGTH, MAX_ORGANIZATION_LENGTH

TEMPLATE_FOLDER = Path(__file__).with_name("template")
#: Scaffolded file -> its template.
FILES = {
    MANIFEST_FILENAME: "service-manifest.yaml.tmpl",
    "main.py": "main.py.tmpl",
    "test_main.py": "test_main.py.tmpl",
    "README.md": "README.md.tmpl",
}
DEFAULT_ORGANIZATION = "your-organization"


class ScaffoldError(Exception):
    """The folder or a value cannot be used; the message says why."""


def name_from_folder(folder: Path) -> str:
    """``My Reactor_2`` -> ``my-reactor-2``: the folder's name as an integration name."""
    return "-".join(re.findall(r"[a-z0-9]+", folder.resolve().name.lower()))[:MAX_NAME_LENGTH]


def title_from_name(name: str) -> str:
    return " ".join(word.capitalize() for word in name.split("-"))


def scaffold_create(
    *,
    folder: Path,
    name: str | None = None,
    organization: str = DEFAULT_ORGANIZATION,
    force: bool = False,
) -> list[Path]:
    """Write the scaffold into ``folder`` (created when missing); returns the files written.

    A folder that holds anything is refused unless ``force``, which overwrites the
    scaffold's own files and leaves the others alone.
    """
    name = name or name_from_folder(folder)
    if len(name) > MAX_NAME_LENGTH or not NAME_RE.fullmatch(name):
        raise ScaffoldError(
            f"'{name}' is not an integration name: use lowercase letters, digits and single "
            f"hyphens (at most {MAX_NAME_LENGTH} characters); give one with --name"
        )
    if len(organization) > MAX_ORGANIZATION_LENGTH or not ORGANIZATION_RE.fullmatch(organization):
        raise ScaffoldError(f"'{organization}' is not an organization id or subdomain")
    if folder.exists() and not folder.is_dir():
        raise ScaffoldError(f"{folder} exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise ScaffoldError(f"{folder} is not empty (--force writes the scaffold anyway)")
    values = {
        "name": name,
        "title": title_from_name(name),
        "organization": organization,
        "directory": str(folder),
    }
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, template in FILES.items():
        text = Template((TEMPLATE_FOLDER / template).read_text()).substitute(values)
        target = folder / filename
        target.write_text(text)
        written.append(target)
    return written
