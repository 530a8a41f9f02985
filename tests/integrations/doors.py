"""The world the role-door tests walk (``test_role_doors*``): acme with one person of each
role and an admin of another organization (the outsider), its own private integration
installed with a new scope awaiting approval and an OAuth button, a webhook in a space with a
failed delivery, a webhook in a site whose endpoint is disabled, and another organization's
public integration that writes; what each door of each plug-in action is; and what "nothing
was written" compares."""

from dataclasses import dataclass
from datetime import timedelta

from django.test import Client
from django.utils import timezone

from docplatform import access
from docplatform.access import Action
from docplatform.audit.models import AuditEntry
from docplatform.events.leases import Result, delivery_claim, delivery_settle
from docplatform.events.models import Delivery, Event
from docplatform.models import Revision
from integrations.models import Installation, Integration, OAuthState
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client
from tests.factories import (
    IntegrationFactory,
    MembershipFactory,
    OrganizationFactory,
    SiteFactory,
    SpaceFactory,
)
from webhooks.models import BulkRedelivery, EndpointState, Replay, SigningSecret
from webhooks.services.endpoints import endpoint_disable
from webhooks.services.ping import webhook_ping_send

#: The people at the doors: one of each role of acme, and an admin of another organization.
PEOPLE = (*access.ROLES, "outsider")
TOOL_CONFIGURATIONS = {
    "account": {
        "properties": {
            "label": {"type": "string", "title": "Label", "description": "d"},
            "slack": {
                "type": "button",
                "title": "Slack",
                "description": "d",
                "button_text": "Connect",
                "callback_url": "/oauth",
            },
        }
    }
}
FORMAT = "%Y-%m-%dT%H:%M"


@dataclass
class World:
    people: dict
    organization: object
    space: object
    tool: Integration  # acme's own, private
    tool_installation: Installation  # asks for a scope not granted yet; Slack connected
    hook: Installation  # a webhook in the space, receiving
    delivery: Delivery  # of the hook, failed: it may be sent again
    site_hook: Installation  # a webhook in a site, its endpoint disabled
    writer: Integration  # another organization's public integration that writes


def world_make(organization, webhook_settings, receiver) -> World:
    """Every door's world (the ``world`` fixture of tests/integrations/conftest.py)."""
    people = {
        role: MembershipFactory(organization=organization, role=role).user for role in access.ROLES
    }
    globex = OrganizationFactory(subdomain="globex")
    people["outsider"] = MembershipFactory(organization=globex, role="admin").user
    admin = people["admin"]
    space = SpaceFactory(organization=organization, title="Handbook")
    space.current_revision = Revision.objects.create(space=space, message="first")
    space.save()
    site = SiteFactory(organization=organization)
    site.spaces.add(space)
    tool = IntegrationFactory(
        name="tool",
        organization=organization,
        visibility="private",
        configurations=TOOL_CONFIGURATIONS,
    )
    tool_installation = installation_create(user=admin, integration=tool, organization=organization)
    # A newer version asks for one more scope: it waits for an admin's approval.
    Integration.objects.filter(pk=tool.pk).update(
        scopes=["space:content:read", "space:content:write"]
    )
    tool_installation.credentials = {"slack": {"access_token": "connected"}}
    tool_installation.save(update_fields=["credentials"])
    webhook = Integration.objects.get(name="webhook")
    hook = installation_create(
        user=admin,
        integration=webhook,
        organization=organization,
        space=space,
        configuration={"url": receiver.url, "space_content_updated": True},
    )
    delivery = delivery_claim(webhook_ping_send(user=admin, installation=hook).pk)
    delivery_settle(delivery, Result.failed(error="HTTP 500", outcome="HTTP 500"))
    site_hook = installation_create(
        user=admin,
        integration=webhook,
        organization=organization,
        site=site,
        configuration={"url": receiver.url, "site_view": True},
    )
    endpoint_disable(installation=site_hook, reason="every attempt failed")
    writer = IntegrationFactory(
        name="writer", organization=globex, visibility="public", scopes=["space:content:write"]
    )
    return World(
        people=people,
        organization=organization,
        space=space,
        tool=Integration.objects.get(pk=tool.pk),
        tool_installation=Installation.objects.get(pk=tool_installation.pk),
        hook=hook,
        delivery=Delivery.objects.get(pk=delivery.pk),
        site_hook=site_hook,
        writer=writer,
    )


def written() -> dict:
    """Everything a refused request must leave as it was."""
    counted = (
        Installation,
        Event,
        Delivery,
        AuditEntry,
        OAuthState,
        SigningSecret,
        BulkRedelivery,
        Replay,
    )
    return {
        **{model.__name__: model.objects.count() for model in counted},
        "installations": list(
            Installation.objects.order_by("pk").values(
                "pk",
                "status",
                "configuration",
                "granted_scopes",
                "space_selection",
                "external_ids",
                "development",
            )
        ),
        "credentials": sorted(
            (str(i.pk), sorted(i.credentials or {})) for i in Installation.objects.all()
        ),
        "deliveries": list(Delivery.objects.order_by("pk").values_list("pk", "status", "chain")),
        "endpoints": list(EndpointState.objects.values_list("pk", "disabled_at")),
        "integrations": list(
            Integration.objects.order_by("pk").values_list(
                "pk", "install_link_token", "released_version_id"
            )
        ),
    }


# --- The doors -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Door:
    """One way to do an action: ``call(client, world)`` gives the response; whoever may do
    all of ``actions`` gets ``success``."""

    name: str
    actions: tuple
    call: object
    success: int

    def __str__(self) -> str:
        return self.name


def the_last_hour() -> dict:
    now = timezone.now()
    return {"since": (now - timedelta(hours=1)).strftime(FORMAT), "until": now.strftime(FORMAT)}


def door(name: str, actions, method: str, address, data=None, success: int = 200) -> Door:
    """``method`` to ``address`` (text, or a function of the world) with ``data`` (the same)."""
    actions = actions if isinstance(actions, tuple) else (actions,)

    def call(client, world):
        where = address(world) if callable(address) else address
        given = data(world) if callable(data) else data
        return getattr(client, method)(where, given)

    return Door(name, actions, call, success)


def api(installation: str, tail: str = ""):
    """The API address ``tail`` below one of the world's installations."""
    return lambda world: f"{API}/installations/{getattr(world, installation).pk}/{tail}"


def page(installation: str, tail: str = ""):
    """The marketplace page ``tail`` below one of the world's installations."""
    return lambda world: (
        f"/marketplace/orgs/acme/installations/{getattr(world, installation).pk}/{tail}"
    )


def of_the_delivery(tail: str = ""):
    return lambda world: page("hook", f"deliveries/{world.delivery.pk}/{tail}")(world)


def refusal_for(door: Door, role: str, organization) -> str | None:
    """What a person with ``role`` is told at ``door`` (None: they may)."""
    for action in door.actions:
        if role not in access.TABLE[action]:
            if action == Action.INSTALL:
                return access.install_refusal(organization, writes=True)
            return access.refusal(action)
    return None


def client_of(person, *, page: bool):
    if not page:
        return api_client(person)
    client = Client()
    client.force_login(person)
    return client
