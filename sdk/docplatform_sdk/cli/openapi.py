"""``openapi publish NAME FILE``: a new version of one of an organization's OpenAPI documents
(Swagger 2.0, OpenAPI 3.0 or 3.1, JSON or YAML), checked by the platform, which refuses an
invalid document naming where it is wrong."""

from pathlib import Path

from .api import UPLOAD_TIMEOUT_SECONDS, Platform
from .errors import UsageError
from .output import print_json, say
from .session import add_api_arguments, platform_for


def document_text(path: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        return file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None


def organization_of(platform: Platform, organization: str | None) -> str:
    """``organization``, or the caller's only one; a usage error when they have several."""
    if organization:
        return organization
    rows = list(platform.rows("orgs/", action="openapi publish"))
    if len(rows) != 1:
        names = ", ".join(row["subdomain"] for row in rows) or "none"
        raise UsageError(f"give --organization (your organizations: {names})")
    return rows[0]["subdomain"]


def publish(platform: Platform, name: str, text: str, organization: str) -> dict:
    """The version made, as the API shows it."""
    return platform.call(
        "POST",
        f"orgs/{organization}/openapi/",
        action="openapi publish",
        expect=(201,),
        json={"name": name, "content": text},
        timeout=UPLOAD_TIMEOUT_SECONDS,
    )


def run_publish(options) -> None:
    text = document_text(options.file)
    platform = platform_for(options)
    organization = organization_of(platform, options.organization)
    version = publish(platform, options.name, text, organization)
    if options.json:
        print_json(version)
        return
    say(
        f"published {version['name']} version {version['number']} "
        f"(OpenAPI {version['formatVersion']}, {version['size']:,} bytes) in {organization}",
        "ok",
    )


def add_parsers(actions) -> None:
    parser = actions.add_parser("openapi", help="Publish an organization's OpenAPI documents.")
    commands = parser.add_subparsers(dest="openapi_action", required=True, metavar="ACTION")
    publishing = commands.add_parser(
        "publish", help="Publish a file as a new version of an OpenAPI document."
    )
    publishing.add_argument("name", help="The document's name (a slug, e.g. payments-api).")
    publishing.add_argument(
        "file", help="The document: JSON or YAML, OpenAPI 3.0/3.1 or Swagger 2.0."
    )
    publishing.add_argument(
        "--organization",
        help="The organization (id or subdomain); default: yours, when you have one.",
    )
    add_api_arguments(parser=publishing, json_help="Print the version as JSON.")
    publishing.set_defaults(run=run_publish)
