"""The SDK and the runtime host are pure Python: importing all of either loads neither
Django nor the platform (checked in a fresh interpreter, where nothing else imported them).
That the SDK installs on its own into a new virtual environment, with no package index, and
its scaffold's test passes there: ``sdk/tests/test_new_environment.py``."""

import json
import subprocess
import sys

import pytest

from .support import PROJECT_ROOT

CHECK = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(module.name)
platform = ("django", "docplatform", "webhooks", "marketplace", "rest_framework", "celery")
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in platform
    or (name.startswith("integrations.") and not name.startswith("integrations.runtime"))
    or (name.startswith("integrations") and sys.argv[1] == "docplatform_sdk")
)
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("package", ["docplatform_sdk", "integrations.runtime"])
def test_the_package_imports_nothing_of_django_or_the_platform(package):
    result = subprocess.run(
        [sys.executable, "-c", CHECK, package],
        cwd=PROJECT_ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(result.stdout) == []
