"""``publish`` (check, bundle and upload a new version) and ``unpublish`` (a version, or the
whole integration when nothing is installed)."""

import argparse
from pathlib import Path

from ..authoring.bundle import integration_bundle
from .api import UPLOAD_TIMEOUT_SECONDS, Platform
from .folder import add_path_arguments, checked, existing_path, secrets_environment
from .output import print_json, say
from .session import add_api_arguments, platform_for


def publish_folder(platform: Platform, path: Path, env: dict[str, str], *, quiet=False) -> dict:
    """Check the folder here, upload it, and print what the platform made of it (unless
    ``quiet``); the API's answer. Refused when the check or the platform refuses."""
    result = checked(path, env)
    name = result.manifest.name
    bundle = integration_bundle(path, result)
    body = platform.call(
        "POST",
        "integrations/",
        action="publish",
        expect=(200, 201),
        timeout=UPLOAD_TIMEOUT_SECONDS,
        files={"bundle": (f"{name}.zip", bundle, "application/zip")},
    )
    if not quiet:
        for problem in body["warnings"]:
            say(f"warning: {problem['path']}: {problem['message']}", "warning")
        number = body["version"]["number"]
        if body["created"]:
            say(f"published {body['integration']} version {number}", "ok")
        else:
            say(f"{body['integration']} is unchanged: version {number} stays current")
    return body


def run_publish(options) -> None:
    path = existing_path(options.path)
    env = secrets_environment(options.env_file)
    platform = platform_for(options)
    body = publish_folder(platform, path, env, quiet=options.json)
    if options.json:
        print_json(body)


def run_unpublish(options) -> None:
    platform = platform_for(options)
    if options.version is None:
        platform.call("DELETE", f"integrations/{options.name}/", action="unpublish", expect=(204,))
        done = f"unpublished {options.name}: every version is removed"
    else:
        platform.call(
            "DELETE",
            f"integrations/{options.name}/versions/{options.version}/",
            action="unpublish",
            expect=(204,),
        )
        done = f"unpublished {options.name} version {options.version}"
    if options.json:
        print_json({"integration": options.name, "version": options.version, "unpublished": True})
    else:
        say(done, "ok")


def positive_number(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a version number (1, 2, ...)")
    return int(text)


def add_parsers(actions) -> None:
    publish = actions.add_parser("publish", help="Check, bundle and upload a new version.")
    add_path_arguments(publish)
    add_api_arguments(publish, json_help="Print the platform's answer as JSON.")
    publish.set_defaults(run=run_publish)

    unpublish = actions.add_parser(
        "unpublish",
        help="Remove a version, or the whole integration when nothing is installed.",
    )
    unpublish.add_argument("name", help="The integration's name.")
    unpublish.add_argument(
        "--version",
        type=positive_number,
        help="Remove only this version (not the one installations run).",
    )
    add_api_arguments(unpublish, json_help="Print what was removed as JSON.")
    unpublish.set_defaults(run=run_unpublish)
