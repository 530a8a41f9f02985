"""``docplatform-integration``: start, check and publish an integration without the platform.

    docplatform-integration new FOLDER [--name NAME] [--organization ORG] [--force]
    docplatform-integration check [PATH] [--env-file FILE]
    docplatform-integration publish [PATH] [--env-file FILE] --api URL --token TOKEN

``check`` is the platform's own manifest checker, offline (no organization is internal), with
the output and exit codes of ``manage.py integration check``: 0 valid, 1 invalid or refused,
2 a usage error. ``publish`` resolves ``${{ env.NAME }}`` secrets here, from the process
environment and ``--env-file``, and uploads the bundle to ``POST {api}/integrations/`` with a
personal token (``DOCPLATFORM_API`` and ``DOCPLATFORM_TOKEN`` stand in for the options).
Nothing here imports Django. ``manage.py integration`` shares this module's arguments and
helpers (the same options, messages and exit codes): they are written here once.
"""

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import requests
from dotenv import dotenv_values

from .authoring.bundle import integration_bundle
from .authoring.localcheck import inspect_locally
from .authoring.scaffold import DEFAULT_ORGANIZATION, ScaffoldError, scaffold_create
from .codecheck import check_code, combined
from .manifest import CheckResult, check_manifest

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
UPLOAD_TIMEOUT_SECONDS = 60


class UsageError(Exception):
    """Bad arguments, or a path or env file that does not exist (exit 2)."""


class Refused(Exception):
    """The manifest or the upload was refused (exit 1); details are printed already."""


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
        raise Refused(f"{len(result.errors)} problem(s) found in the manifest")
    return result


def checked(path: Path, env: dict[str, str]) -> CheckResult:
    """Check the manifest offline, then its code loaded in a sandbox here (``codecheck``),
    and print the warnings and errors."""
    result = check_manifest(path, env=env)
    if result.ok:
        manifest = result.manifest
        description = inspect_locally(manifest, say=stderr) if manifest.code else None
        result = combined(result, check_code(manifest, description))
    return report(result)


def stderr(line: str) -> None:
    print(line, file=sys.stderr)


def run_check(options) -> None:
    result = checked(existing_path(options.path), secrets_environment(options.env_file))
    print(f"{result.manifest.name}: the manifest is valid")


def scaffold(*, folder: str, name: str | None, organization: str, force: bool) -> list[Path]:
    """Write a new integration folder; the paths written. UsageError if it cannot."""
    try:
        return scaffold_create(
            folder=Path(folder), name=name, organization=organization, force=force
        )
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from exc


def run_new(options) -> None:
    written = scaffold(
        folder=options.folder,
        name=options.name,
        organization=options.organization,
        force=options.force,
    )
    for path in written:
        print(f"created {path}")
    print(f"next: docplatform-integration check {options.folder}")


def run_publish(options) -> None:
    api = (options.api or os.environ.get("DOCPLATFORM_API") or "").rstrip("/")
    token = options.token or os.environ.get("DOCPLATFORM_TOKEN")
    if not api:
        raise UsageError("give the API's URL with --api or DOCPLATFORM_API")
    if not token:
        raise UsageError("give a personal API token with --token or DOCPLATFORM_TOKEN")
    path = existing_path(options.path)
    result = checked(path, secrets_environment(options.env_file))
    name = result.manifest.name
    try:
        answer = requests.post(
            f"{api}/integrations/",
            files={"bundle": (f"{name}.zip", integration_bundle(path, result), "application/zip")},
            headers={"Authorization": f"Bearer {token}"},
            timeout=UPLOAD_TIMEOUT_SECONDS,
        )
    except requests.RequestException as exc:
        raise Refused(f"{api} cannot be reached ({exc.__class__.__name__})") from exc
    try:
        body = answer.json()
    except ValueError:
        raise Refused(f"the API answered {answer.status_code} without a JSON body") from None
    if answer.status_code not in (200, 201):
        for error in body.get("errors", []) if isinstance(body, dict) else []:
            print(f"{error['attr']}: {error['detail']}" if error.get("attr") else error["detail"])
        raise Refused(f"publish was refused ({answer.status_code})")
    for problem in body["warnings"]:
        print(f"warning: {problem['path']}: {problem['message']}")
    number = body["version"]["number"]
    if body["created"]:
        print(f"published {body['integration']} version {number}")
    else:
        print(f"{body['integration']} is unchanged: version {number} stays current")


def add_new_arguments(new: argparse.ArgumentParser) -> None:
    """The arguments of ``new``."""
    new.add_argument("folder", help="The folder to create (it must be empty).")
    new.add_argument("--name", help="The integration's name (default: the folder's name).")
    new.add_argument(
        "--organization",
        default=DEFAULT_ORGANIZATION,
        help="The owning organization's id or subdomain.",
    )
    new.add_argument("--force", action="store_true", help="Write into a non-empty folder.")


def add_path_arguments(action: argparse.ArgumentParser) -> None:
    """The integration folder (or manifest) and ``--env-file`` of ``check``, ``publish``..."""
    action.add_argument(
        "path", nargs="?", default=".", help="Integration folder or manifest file (default .)"
    )
    action.add_argument(
        "--env-file",
        help="A dotenv file resolving ${{ env.NAME }} secrets; its values win over the "
        "process environment.",
    )


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="docplatform-integration",
        description="Start, check and publish docplatform integrations.",
    )
    actions = root.add_subparsers(dest="action", required=True, metavar="ACTION")
    add_new_arguments(actions.add_parser("new", help="Scaffold a new integration folder."))
    check = actions.add_parser("check", help="Validate a manifest and report every problem.")
    publish = actions.add_parser("publish", help="Check, bundle and upload a new version.")
    for action in (check, publish):
        add_path_arguments(action)
    publish.add_argument("--api", help="The REST API, e.g. https://HOST/api/v1 (DOCPLATFORM_API).")
    publish.add_argument("--token", help="A personal API token, dpt_... (DOCPLATFORM_TOKEN).")
    return root


def main(argv: list[str] | None = None) -> int:
    options = parser().parse_args(argv)
    try:
        {"new": run_new, "check": run_check, "publish": run_publish}[options.action](options)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
