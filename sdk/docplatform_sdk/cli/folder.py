"""The integration folder on the author's machine: ``new`` (the scaffold) and ``check``
(the platform's own manifest checker, offline), and the helpers ``publish``, ``dev`` and
``manage.py integration`` share: the path, the secrets' environment and the printed check."""

import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from dotenv import dotenv_values

from ..authoring.localcheck import inspect_locally
from ..authoring.scaffold import DEFAULT_ORGANIZATION, ScaffoldError, scaffold_create
from ..codecheck import check_code, combined
from ..manifest import CheckResult, check_manifest
from .account import offer_login
from .errors import Refused, UsageError
from .output import say

#: Where a problem in the code is: a file of the bundle, its line and column (``main.py:3:9``).
CODE_PLACE = re.compile(r"[^:\s]+\.py(:\d+){0,2}$")


def secrets_environment(env_file: str | None) -> dict[str, str]:
    """The process environment, overridden by ``env_file`` (a dotenv file) when given."""
    env = dict(os.environ)
    if env_file is not None:
        if not Path(env_file).is_file():
            raise UsageError(f"--env-file {env_file}: no such file")
        env.update({k: v for k, v in dotenv_values(env_file).items() if v is not None})
    return env


def existing_path(path: str) -> Path:
    if not Path(path).exists():
        raise UsageError(f"{path}: no such file or folder")
    return Path(path)


def print_warnings(warnings: Iterable, say: Callable[[str], object] = print) -> None:
    for problem in warnings:
        say(f"warning: {problem}")


def report(result: CheckResult, say: Callable[[str], object] = print) -> CheckResult:
    """Print a check's warnings, then its errors one a line (``field.path: reason``);
    Refused when there are errors."""
    print_warnings(result.warnings, say)
    if not result.ok:
        for problem in result.errors:
            say(str(problem))
        raise Refused(problems_found(result.errors))
    return result


def problems_found(errors) -> str:
    """``2 problems found in the code``: how many, and whether in the manifest, the code
    (a problem named by its place in a ``.py`` file, ``main.py:3:9``) or both."""
    in_code = sum(1 for problem in errors if CODE_PLACE.match(problem.path))
    where = (
        "the code"
        if in_code == len(errors)
        else "the manifest"
        if not in_code
        else "the manifest and the code"
    )
    count = len(errors)
    return f"{count} problem{'' if count == 1 else 's'} found in {where}"


def checked(path: Path, env: dict[str, str], say: Callable[[str], object] | None = None):
    """Check the manifest offline, then its code loaded in a sandbox here (``codecheck``),
    and print the warnings and errors (on stdout, or through ``say``)."""
    result = check_manifest(path, env=env)
    if result.ok:
        manifest = result.manifest
        description = inspect_locally(manifest, say=stderr) if manifest.code else None
        result = combined(result, check_code(manifest, description))
    return report(result, say=say or (lambda line: print(line, flush=True)))


def stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_check(options) -> None:
    result = checked(existing_path(options.path), secrets_environment(options.env_file))
    say(f"{result.manifest.name}: the manifest is valid")


def scaffold(*, folder: str, name: str | None, organization: str, force: bool) -> list[Path]:
    """Write a new integration folder; the paths written. UsageError if it cannot."""
    try:
        return scaffold_create(
            folder=Path(folder), name=name, organization=organization, force=force
        )
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from exc


def run_new(options) -> None:
    """The scaffold; then, when no login is found, the offer to log in (``--no-login``: not
    asked), and the next commands: its test here, then ``dev`` on a platform."""
    written = scaffold(
        folder=options.folder,
        name=options.name,
        organization=options.organization,
        force=options.force,
    )
    for path in written:
        say(f"created {path}")
    if not options.no_login:
        offer_login()
    say(f"next: pytest {options.folder}    # its test hands main.py a sample event, here")
    say(f"then: docplatform-integration dev {options.folder}    # on the platform, live")


def add_new_arguments(new) -> None:
    """The arguments of ``new``."""
    new.add_argument("folder", help="The folder to create (it must be empty).")
    new.add_argument("--name", help="The integration's name (default: the folder's name).")
    new.add_argument(
        "--organization",
        default=DEFAULT_ORGANIZATION,
        help="The owning organization's id or subdomain.",
    )
    new.add_argument("--force", action="store_true", help="Write into a non-empty folder.")


def add_path_arguments(action) -> None:
    """The integration folder (or manifest) and ``--env-file`` of ``check``, ``publish``..."""
    action.add_argument(
        "path", nargs="?", default=".", help="Integration folder or manifest file (default .)"
    )
    action.add_argument(
        "--env-file",
        help="A dotenv file resolving ${{ env.NAME }} secrets; its values win over the "
        "process environment.",
    )


def add_parsers(actions) -> None:
    new = actions.add_parser("new", help="Scaffold a new integration folder.")
    add_new_arguments(new)
    new.add_argument(
        "--no-login",
        action="store_true",
        help="Do not offer to log in when no login is found.",
    )
    new.set_defaults(run=run_new)
    check = actions.add_parser("check", help="Validate a manifest and report every problem.")
    add_path_arguments(check)
    check.set_defaults(run=run_check)
