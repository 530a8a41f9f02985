"""``publish`` (check, bundle and upload a new released version), ``rollback`` (release an
older version again) and ``unpublish`` (a version, or the whole integration when nothing is
installed)."""

import argparse
from pathlib import Path

from ..authoring.bundle import integration_bundle
from ..manifest import MANIFEST_FILENAME
from ..manifest.yamlload import load_manifest_yaml
from .api import UPLOAD_TIMEOUT_SECONDS, Platform
from .errors import UsageError
from .folder import add_path_arguments, checked, existing_path, secrets_environment, stderr
from .output import print_json, say, warn
from .session import add_api_arguments, platform_for

RELEASE, DEVELOPMENT = "release", "development"


def version_label(version: dict) -> str:
    """``version 3``, or ``development version 5``."""
    kind = "development version" if version["channel"] == DEVELOPMENT else "version"
    return f"{kind} {version['number']}"


def published_line(body: dict) -> str:
    """What a publish did, as the author reads it."""
    name, version, released = body["integration"], body["version"], body["releasedVersion"]
    label = version_label(version)
    if body["outcome"] == "unchanged":
        return f"{name} is unchanged: {label} stays current"
    if body["outcome"] == "reused":
        return f"development installations of {name} run {label} again (the same code)"
    if version["channel"] == DEVELOPMENT:
        return (
            f"published {name} {label}: development installations run it, the others "
            f"version {released['number']}"
        )
    return f"published {name} {label}"


def publish_folder(
    platform: Platform, path: Path, env: dict[str, str], *, channel=RELEASE, quiet=False
) -> dict:
    """Check the folder here, upload it on ``channel``, and print what the platform made of
    it (unless ``quiet``); the API's answer. Refused when the check or the platform refuses.
    Quiet (``--json``), what the check prints goes to stderr: stdout holds the JSON alone."""
    result = checked(path, env, say=stderr if quiet else None)
    name = result.manifest.name
    bundle = integration_bundle(path, result)
    body = platform.call(
        "POST",
        "integrations/",
        action="publish",
        expect=(200, 201),
        timeout=UPLOAD_TIMEOUT_SECONDS,
        data={"channel": channel},
        files={"bundle": (f"{name}.zip", bundle, "application/zip")},
    )
    if not quiet:
        # The local check printed its warnings already; the platform's own checks may add some.
        printed = {str(problem) for problem in result.warnings}
        for problem in body["warnings"]:
            text = f"{problem['path']}: {problem['message']}"
            if text not in printed:
                say(f"warning: {text}", "warning")
        say(published_line(body), "ok" if body["created"] else None)
        if body.get("installLink"):
            say(f"install link (other organizations install it through it): {body['installLink']}")
        notice = listing_notice(body)
        if notice:
            warn(notice)
    return body


def listing_notice(body: dict) -> str | None:
    """A public version's review, when other organizations do not see it yet (the
    platform's operators approve public listings)."""
    review = body.get("listing")
    if review and review["status"] == "pending":
        return (
            "public listing: waiting for an operator's review; your organization installs it "
            "now, other organizations once it is approved"
        )
    if review and review["status"] == "rejected":
        return f"public listing: rejected ({review['reason']})"
    return None


def run_publish(options) -> None:
    path = existing_path(options.path)
    env = secrets_environment(options.env_file)
    platform = platform_for(options)
    body = publish_folder(platform, path, env, quiet=options.json)
    if options.json:
        print_json(body)


def manifest_name(path: str) -> str:
    """The ``name`` in the manifest at ``path`` (a folder or the manifest file)."""
    manifest = existing_path(path)
    if manifest.is_dir():
        manifest = manifest / MANIFEST_FILENAME
    if not manifest.is_file():
        raise UsageError(f"{path}: no {MANIFEST_FILENAME} here; give the integration's --name")
    document = load_manifest_yaml(manifest.read_bytes(), manifest.name).document
    name = document.get("name") if isinstance(document, dict) else None
    if not isinstance(name, str) or not name:
        raise UsageError(f"{manifest}: it names no integration; give the integration's --name")
    return name


def run_rollback(options) -> None:
    name = options.name or manifest_name(options.path)
    platform = platform_for(options)
    body = platform.call(
        "POST",
        f"integrations/{name}/versions/{options.version}/release/",
        action="rollback",
    )
    if options.json:
        print_json(body)
        return
    number = body["version"]["number"]
    if not body["released"]:
        say(f"{name} version {number} is current already: nothing changed")
        return
    previous = body["previous"]
    was = f" (it was version {previous['number']})" if previous else ""
    say(f"released {name} version {number} again: every installation runs it{was}", "ok")
    changed = body["changedInstallations"]
    if changed:
        say(f"{changed} installation(s) changed when checked against version {number}")


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
    publish = actions.add_parser(
        "publish", help="Check, bundle and upload a new version: every installation runs it."
    )
    add_path_arguments(publish)
    add_api_arguments(publish, json_help="Print the platform's answer as JSON.")
    publish.set_defaults(run=run_publish)

    rollback = actions.add_parser(
        "rollback", help="Release an older version again: every installation runs it."
    )
    rollback.add_argument("version", type=positive_number, help="The version to release.")
    rollback.add_argument(
        "path",
        nargs="?",
        default=".",
        help="The integration folder (or manifest) naming it (default .)",
    )
    rollback.add_argument("--name", help="The integration's name (default: the manifest's).")
    add_api_arguments(rollback, json_help="Print the platform's answer as JSON.")
    rollback.set_defaults(run=run_rollback)

    unpublish = actions.add_parser(
        "unpublish",
        help="Remove a version, or the whole integration when nothing is installed.",
    )
    unpublish.add_argument("name", help="The integration's name.")
    unpublish.add_argument(
        "--version",
        type=positive_number,
        help="Remove only this version (not one installations run).",
    )
    add_api_arguments(unpublish, json_help="Print what was removed as JSON.")
    unpublish.set_defaults(run=run_unpublish)
