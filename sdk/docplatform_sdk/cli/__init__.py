"""``docplatform-integration``: an integration author's whole loop, against any platform
over its REST API (nothing here imports Django):

    login / logout / whoami          a personal token, saved in the user's config folder
    new FOLDER                       the scaffold, runnable and passing check as it is
    check [PATH]                     the platform's manifest checker, offline
    publish [PATH]                   check, bundle and upload a new version: it is released
    rollback VERSION [PATH]          release an older version again (--name NAME)
    install NAME --organization ORG  (or --space ID, --site ID), --set KEY=VALUE
    dev [PATH]                       development versions for the own organization's (or
                                     --space's) installation: publish, install, republish
                                     on save, show the logs
    trigger EVENT [PATH]             send its installation a real event of that type (sample
                                     payload; --space ID) and wait for the delivery
    tail [NAME]                      follow the logs (--installation, --since, --no-follow)
    unpublish NAME [--version V]     a version, or the integration when nothing is installed
    openapi publish NAME FILE        a new version of an OpenAPI document (--organization ORG)

Exit codes: 0 done, 1 refused (by the checker, the platform or the token), 2 a usage error.
``manage.py integration`` shares the arguments and helpers of ``new`` and ``check``.
"""

import argparse
import signal
import sys

from . import account, dev, folder, installing, logs, openapi, publishing, trigger
from .errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, Refused, UsageError
from .folder import (
    add_new_arguments,
    add_path_arguments,
    existing_path,
    print_warnings,
    report,
    scaffold,
    secrets_environment,
)

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "Refused",
    "UsageError",
    "add_new_arguments",
    "add_path_arguments",
    "existing_path",
    "main",
    "parser",
    "print_warnings",
    "report",
    "scaffold",
    "secrets_environment",
]


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="docplatform-integration",
        description="Write, check, publish, install and follow docplatform integrations.",
    )
    actions = root.add_subparsers(dest="action", required=True, metavar="ACTION")
    for commands in (account, folder, publishing, installing, dev, trigger, logs, openapi):
        commands.add_parsers(actions)
    return root


#: The commands that run until stopped (Ctrl-C, SIGTERM): stopping them is success.
FOLLOWING = ("dev", "tail")


def stop_on_sigterm(*_) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    options = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        options.run(options)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        if options.action in FOLLOWING:  # Ctrl-C is how they end: nothing went wrong
            return EXIT_OK
        print("error: interrupted", file=sys.stderr)
        return EXIT_REFUSED
    return EXIT_OK
