"""``tools/import_cycles.py`` on scratch copies of a tiny package tree: it passes on one
without a cycle and fails, naming the chain, on a cycle that passes through a package's
``__init__`` and on one made by an import inside a function; ``if TYPE_CHECKING:`` imports
and a package's own modules importing its siblings by their full name do not count."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "import_cycles.py"

# No cycle: the services package's __init__ imports its modules, which import the gateway
# (and, by its full name, a sibling: the package is already being imported); the gateway
# names the services only for type checking.
ACYCLIC = {
    "app/__init__.py": "",
    "app/models.py": "",
    "app/services/__init__.py": "from .publishing import publish\n",
    "app/services/publishing.py": (
        "import app.services.logs\nfrom app.gateway import client\n\ndef publish(): ...\n"
    ),
    "app/services/logs.py": "from app import models\n",
    "app/gateway/__init__.py": "",
    "app/gateway/client.py": """
        import json
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from app.services.logs import record
    """,
    "app/views.py": "def view():\n    from app.services import publish\n",
    "other/__init__.py": "",
    "other/use.py": "import app.views\n",
}


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def check(root: Path, *packages: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(TOOL), *(str(root / package) for package in packages)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )


def cycles(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("cycle: ")]


def test_a_tree_without_a_cycle_passes(tmp_path):
    done = check(tree(tmp_path, ACYCLIC), "app", "other")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "no import cycle among 10 modules\n"


def test_a_cycle_through_a_package_init_fails(tmp_path):
    """The gateway imports ``app.services.logs``, which runs ``app/services/__init__.py``,
    which imports ``publishing``, which imports the gateway."""
    files = {**ACYCLIC, "app/gateway/client.py": "from app.services.logs import record\n"}
    done = check(tree(tmp_path, files), "app", "other")
    assert done.returncode == 1
    assert cycles(done) == [
        "cycle: app.gateway.client -> app.services -> app.services.publishing -> app.gateway.client"
    ]
    assert (
        "app.gateway.client -> app.services: app/gateway/client.py:1: "
        "from app.services.logs import record (runs its __init__ to import app.services.logs)"
    ) in done.stdout


def test_a_cycle_made_inside_a_function_fails(tmp_path):
    files = {**ACYCLIC, "app/models.py": "def late():\n    from .views import view\n"}
    done = check(tree(tmp_path, files), "app", "other")
    assert done.returncode == 1
    assert cycles(done) == [
        "cycle: app.models -> app.views -> app.services -> app.services.publishing "
        "-> app.services.logs -> app.models"
    ]
    assert "app.models -> app.views: app/models.py:2: from .views import view" in done.stdout


@pytest.mark.parametrize(
    ("reader", "chain"),
    [
        # ``from pkg import name`` reads pkg's __init__, which imports the reader.
        ("from app.services import publish\n", "app.services -> app.services.publishing"),
        # A relative ``from . import name`` of a name the __init__ defines reads it too.
        ("from . import publish\n", "app.services -> app.services.publishing"),
    ],
)
def test_reading_a_name_from_a_package_that_imports_the_reader_fails(tmp_path, reader, chain):
    files = {**ACYCLIC, "app/services/publishing.py": reader}
    done = check(tree(tmp_path, files), "app", "other")
    assert done.returncode == 1
    assert cycles(done) == [f"cycle: {chain} -> app.services"]


def test_importing_a_submodule_from_a_package_is_not_reading_its_init(tmp_path):
    files = {**ACYCLIC, "app/services/publishing.py": "from . import logs\nfrom .. import models\n"}
    done = check(tree(tmp_path, files), "app", "other")
    assert done.returncode == 0, done.stdout + done.stderr
