"""``install``: an integration into an organization, a space or a site, with its
configuration given as ``--set KEY=VALUE`` (typed by the manifest's configuration)."""

from ..authoring.values import values_from_texts
from .api import Platform
from .errors import Refused, UsageError
from .output import print_json, say
from .session import add_api_arguments, platform_for

#: The manifest configuration that governs an installation, by its level (the platform's
#: Installation.CONFIGURATION_LEVELS; a space installation falls back to ``site``).
CONFIGURATION_LEVELS = {"organization": "account", "space": "space", "site": "site"}


def configuration_definition(integration: dict, level: str) -> dict:
    configurations = integration.get("configurations") or {}
    definition = configurations.get(CONFIGURATION_LEVELS[level])
    if definition is None and level == "space":
        definition = configurations.get("site")
    return definition or {}


def configuration_values(
    platform: Platform, name: str, level: str, items: list[str], install_token: str | None
) -> dict:
    """``--set`` items typed by the integration's configuration; Refused lists values that
    do not read as their property's type."""
    if not items:
        return {}
    params = {"install_token": install_token} if install_token else {}
    integration = platform.get(f"integrations/{name}/", action="install", **params)
    try:
        values, problems = values_from_texts(configuration_definition(integration, level), items)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if problems:
        for field, reasons in problems.items():
            for reason in reasons:
                platform.show(f"{field}: {reason}")
        raise Refused("install was refused: fix the values above")
    return values


def installation_lines(installation: dict) -> list[str]:
    lines = [f"{installation['id']} {installation['status']}"]
    reasons = installation["statusReasons"]
    return lines + [f"  {reason['path']}: {reason['message']}" for reason in reasons]


def organization_installation(
    platform: Platform, name: str, organization: str | None, *, action: str
):
    """The integration's organization installation in ``organization`` (default: the one
    that owns the integration), and that organization's subdomain."""
    if organization is None:
        organization = platform.get(f"integrations/{name}/", action=action)["organization"]
    where = platform.get(f"orgs/{organization}/", action=action)["subdomain"]
    rows = platform.rows(f"orgs/{where}/installations/", action=action, level="organization")
    return next((row for row in rows if row["integration"] == name), None), where


def space_installation(platform: Platform, name: str, space: str, *, action: str):
    """The integration's installation in ``space`` (None: not installed there)."""
    rows = platform.rows(f"spaces/{space}/installations/", action=action)
    return next((row for row in rows if row["integration"] == name), None)


def install(
    platform: Platform,
    name: str,
    *,
    organization: str | None = None,
    space: str | None = None,
    site: str | None = None,
    items: list[str] = (),
    install_token: str | None = None,
) -> dict:
    """Install ``name``; the installation as the API shows it."""
    if space:
        level, where = "space", f"spaces/{space}/installations/"
    elif site:
        level, where = "site", f"sites/{site}/installations/"
    else:
        level, where = "organization", f"orgs/{organization}/installations/"
    body = {"integration": name}
    values = configuration_values(platform, name, level, list(items), install_token)
    if values:
        body["configuration"] = values
    if install_token:
        body["installToken"] = install_token
    return platform.call("POST", where, action="install", expect=(201,), json=body)


def run_install(options) -> None:
    platform = platform_for(options)
    installation = install(
        platform,
        options.name,
        organization=options.organization,
        space=options.space,
        site=options.site,
        items=options.values,
        install_token=options.install_token,
    )
    if options.json:
        print_json(installation)
        return
    for line in installation_lines(installation):
        say(line)
    say(f"public endpoint: {installation['publicEndpoint']}")


def add_set_argument(parser) -> None:
    """``--set KEY=VALUE`` (repeatable): configuration values of the installation made."""
    parser.add_argument(
        "--set",
        dest="values",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A configuration value (repeatable), read by its property's type; an empty "
        "VALUE unsets it.",
    )


def add_parsers(actions) -> None:
    parser = actions.add_parser(
        "install", help="Install an integration into an organization, a space or a site."
    )
    parser.add_argument("name", help="The integration's name.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--organization", help="Install into this organization (id or subdomain).")
    where.add_argument("--space", help="Install into this space (id); its organization's.")
    where.add_argument("--site", help="Install into this site (id); its organization's.")
    add_set_argument(parser)
    parser.add_argument(
        "--install-token", help="The install link token of an unlisted integration."
    )
    add_api_arguments(parser, json_help="Print the installation as JSON.")
    parser.set_defaults(run=run_install)
