"""A real browser for the tests: Debian's Chromium driven by Playwright (the ``browser_page``
fixture of tests/conftest.py; skipped when Playwright or Chromium is missing, CI has both).
Screenshots land in the system's temporary folder for a look."""

import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(tempfile.gettempdir())
