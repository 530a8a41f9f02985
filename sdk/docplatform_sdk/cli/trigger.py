"""``trigger EVENT [PATH]``: send the integration's installation a real event of that type,
made by the platform from the event catalogue's sample payload with the installation's own
space or site (``POST installations/{id}/test-events/``), then follow its delivery until it
settles: exit 0 when it succeeded, 1 when it failed, was cancelled or is still open after
``--wait`` seconds.

Which installation: ``--installation ID``; else with ``--space ID`` the integration's
installation in that space, or else its organization installation (the event then happens
in that space); else its installation in ``--organization`` (default: the owning one), the
one ``dev`` makes."""

import argparse
import time

from .api import Platform
from .errors import Refused, UsageError
from .installing import organization_installation, space_installation
from .output import print_json, say
from .publishing import manifest_name
from .session import add_api_arguments, platform_for

#: Delivery statuses that are final.
SETTLED = ("succeeded", "failed", "cancelled")
POLL_SECONDS = 0.2
#: The type ``dev``'s ready command names when the integration receives it.
FIRST_CHOICE = "space_content_updated"


def installation_in_space(platform: Platform, name: str, space: str):
    """The integration's installation in ``space``, else its organization's installation
    (which receives the space's events when its space selection covers it)."""
    found = space_installation(platform, name, space, action="trigger")
    if found is not None:
        return found, f"space {space}"
    organization = platform.get(f"spaces/{space}/", action="trigger")["organization"]
    return organization_installation(platform, name, organization, action="trigger")


def installation_to_trigger(platform: Platform, name: str, options) -> dict:
    if options.installation:
        return platform.get(f"installations/{options.installation}/", action="trigger")
    if options.space:
        installation, where = installation_in_space(platform, name, options.space)
    else:
        installation, where = organization_installation(
            platform, name, options.organization, action="trigger"
        )
    if installation is None:
        raise Refused(f"{name} is not installed in {where}: install it (or run dev) first")
    if installation["integration"] != name:
        raise UsageError(f"installation {installation['id']} is not one of {name}")
    return installation


def trigger_types(platform: Platform, installation_id: str) -> list[str]:
    """The event types a test event to the installation may have."""
    return platform.get(f"installations/{installation_id}/test-events/", action="trigger")["types"]


def ready_command(types: list[str], path: str, space: str | None = None) -> str | None:
    """The ``trigger`` command ``dev`` suggests (None when no event reaches it)."""
    if not types:
        return None
    event_type = FIRST_CHOICE if FIRST_CHOICE in types else types[0]
    where = f" --space {space}" if space else ""
    return f"docplatform-integration trigger {event_type} {path}{where}"


def settled_delivery(platform: Platform, delivery: dict, wait: float) -> dict:
    """The delivery once settled, or as it stands after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while delivery["status"] not in SETTLED and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        delivery = platform.get(f"deliveries/{delivery['id']}/", action="trigger")
    return delivery


def run_trigger(options) -> None:
    name = options.name or manifest_name(options.path)
    platform = platform_for(options)
    installation = installation_to_trigger(platform, name, options)
    body = {"type": options.event}
    if options.space:
        body["space"] = options.space
    if options.site:
        body["site"] = options.site
    delivery = platform.call(
        "POST",
        f"installations/{installation['id']}/test-events/",
        action="trigger",
        expect=(201,),
        json=body,
    )
    if not options.json:
        say(
            f"sent {options.event} to installation {installation['id']}: delivery "
            f"{delivery['id']}, eventId {delivery['eventId']}"
        )
    delivery = settled_delivery(platform, delivery, options.wait)
    if options.json:
        print_json(delivery)
    status = delivery["status"]
    said = f" ({delivery['outcome']})" if delivery["outcome"] else ""
    error = f": {delivery['lastError']}" if delivery["lastError"] else ""
    if status == "succeeded":
        if not options.json:
            say(f"delivery {delivery['id']} succeeded{said}", "ok")
        return
    if status in SETTLED:
        raise Refused(f"delivery {delivery['id']} {status}{said}{error}")
    raise Refused(
        f"delivery {delivery['id']} is still {status} after {options.wait:g} s{error}; "
        f"follow it with: docplatform-integration tail {name}"
    )


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0 to 3600)")
    return value


def add_parsers(actions) -> None:
    trigger = actions.add_parser(
        "trigger",
        help="Send the integration's installation a real event of a type (sample payload) "
        "and wait for its delivery.",
    )
    trigger.add_argument("event", help="The event type, e.g. space_content_updated.")
    trigger.add_argument(
        "path",
        nargs="?",
        default=".",
        help="The integration folder (or manifest) naming it (default .)",
    )
    trigger.add_argument("--name", help="The integration's name (default: the manifest's).")
    where = trigger.add_mutually_exclusive_group()
    where.add_argument("--installation", help="The installation (id) to send it to.")
    where.add_argument(
        "--organization",
        help="Its installation in this organization (id or subdomain; default: the owning one).",
    )
    trigger.add_argument(
        "--space",
        help="The space (id) the event happens in: its installation there, or else "
        "the organization installation.",
    )
    trigger.add_argument("--site", help="The site (id) a site event happens on.")
    trigger.add_argument(
        "--wait",
        type=seconds,
        default=30.0,
        help="Seconds to wait for the delivery to settle (default 30; 0: do not wait).",
    )
    add_api_arguments(trigger, json_help="Print the delivery as JSON once settled.")
    trigger.set_defaults(run=run_trigger)
