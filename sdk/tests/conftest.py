"""The SDK's own tests: they import ``docplatform_sdk`` and nothing of the platform or Django,
and run with the SDK alone installed (see the README's "Testing").

``hypothesis``, ``mypy`` and a recent ``setuptools`` are test extras (``pip install
'./sdk[test]'``): without them, the property-based manifest tests are not collected, the type
checks and the new-environment test skip, and the run's header says so.
"""

import importlib.util

from test_new_environment import setuptools_builds_wheels

collect_ignore = []
if importlib.util.find_spec("hypothesis") is None:
    collect_ignore.append("manifest/test_fuzz.py")


def pytest_report_header(config):
    lines = []
    if collect_ignore:
        lines.append("hypothesis is not installed: not collected: " + ", ".join(collect_ignore))
    if importlib.util.find_spec("mypy") is None:
        lines.append("mypy is not installed: the type checks of test_typed_events.py skip")
    if not setuptools_builds_wheels():
        lines.append("setuptools>=70.1 is not installed: test_new_environment.py skips")
    return lines or None
