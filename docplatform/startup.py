"""Start-up of every process (``manage.py``, Celery, WSGI and ASGI servers): a setting that
is wrong stops it with one line naming the variable and the value expected, no traceback.

The settings raise ImproperlyConfigured for what they refuse (docplatform/settings/); each
entry point loads them through :func:`settings_or_exit` before anything else reads them.
"""

import os
import sys

from django.core.exceptions import ImproperlyConfigured

#: The exit code of a process that a setting stopped: a usage error, as for the commands.
EXIT_SETTINGS = 2
#: The exit code of a WSGI/ASGI server's worker that could not load the application: gunicorn
#: then stops ("App failed to load.") instead of booting another worker, and another one...
EXIT_APP_LOAD = 4


def settings_or_exit(exit_code: int = EXIT_SETTINGS) -> None:
    """Load the settings; if they refuse the environment, print ``error: <reason>`` on
    stderr and exit with ``exit_code``."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018 - imports the settings module
    except ImproperlyConfigured as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(exit_code) from None


def run_or_exit(command, *args) -> None:
    """Run ``command(*args)``; a setting it reads only when it needs it (a key derived in
    development only, refused in production) that refuses the environment prints
    ``error: <reason>`` and exits with EXIT_SETTINGS, as at start-up."""
    try:
        command(*args)
    except ImproperlyConfigured as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_SETTINGS) from None
