"""integrations.runtime is pure Python: importing all of it loads neither Django nor the
platform (checked in a fresh interpreter, where nothing else has imported them)."""

import json
import subprocess
import sys

from .support import PROJECT_ROOT

CHECK = """
import importlib, json, pkgutil, sys
import docplatform_sdk as runtime
for module in pkgutil.iter_modules(runtime.__path__):
    importlib.import_module(f"integrations.runtime.{module.name}")
platform = ("django", "docplatform", "webhooks", "marketplace", "rest_framework", "celery")
loaded = sorted(
    name for name in sys.modules
    if name.split(".")[0] in platform
    or (name.startswith("integrations.") and not name.startswith("integrations.runtime"))
)
print(json.dumps(loaded))
"""


def test_the_runtime_package_imports_nothing_of_django_or_the_platform():
    result = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=PROJECT_ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(result.stdout) == []
