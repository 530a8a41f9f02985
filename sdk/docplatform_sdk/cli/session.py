"""The options every command that calls the platform shares (``--api``, ``--token``,
``--json``) and the API client they make."""

from .api import Platform, to_stderr
from .credentials import resolved
from .output import say


def add_api_arguments(parser, *, json_help: str | None = None) -> None:
    parser.add_argument(
        "--api",
        help="The REST API, e.g. https://HOST/api/v1 (DOCPLATFORM_API; default: your login).",
    )
    parser.add_argument(
        "--token", help="A personal API token, dpt_... (DOCPLATFORM_TOKEN; default: your login)."
    )
    if json_help:
        parser.add_argument("--json", action="store_true", help=json_help)
    else:
        parser.set_defaults(json=False)


def platform_for(options) -> Platform:
    """The platform the options, the environment or the saved login name; with ``--json``
    the API's reasons for a refusal go to stderr, so stdout holds JSON only."""
    return Platform(resolved(options.api, options.token), show=to_stderr if options.json else say)
