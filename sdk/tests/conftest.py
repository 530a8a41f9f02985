"""The SDK's own tests: they import ``docplatform_sdk`` and nothing of the platform or Django,
and run with the SDK alone installed (see the README's "Testing").

``hypothesis`` is a test extra (``pip install './sdk[test]'``): without it, the property-based
manifest tests are not collected, and the run's header says so.
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("hypothesis") is None:
    collect_ignore.append("manifest/test_fuzz.py")


def pytest_report_header(config):
    if collect_ignore:
        return "hypothesis is not installed: not collected: " + ", ".join(collect_ignore)
    return None
