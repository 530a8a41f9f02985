"""The roles' table at the command line's door: ``manage.py integration`` acts as the person
``--as`` names, under the same rule as the API and the marketplace (its own people whose role
does not allow it are refused naming who may, another organization's find nothing, and
nothing is written); ``manage.py webhooks`` acts as the operator, whom the audit log
records. Once in a process of its own, as people run it."""

import io

import pytest
from django.core.management import CommandError, call_command

from docplatform import access
from docplatform.access import Action
from docplatform.audit.models import AuditEntry
from integrations.models import Installation
from tests.factories import IntegrationFactory, MembershipFactory
from tests.integrations.doors import PEOPLE, written
from tests.processes import manage_py

#: command -> (its action, its arguments but --as, given the world)
COMMANDS = {
    "install": (Action.INSTALL, lambda w: ["writer", "--org", "acme"]),
    "configure": (Action.CONFIGURE, lambda w: [w.tool_installation.pk, "--set", "label=Docs"]),
    "pause": (Action.PAUSE, lambda w: [w.hook.pk]),
    "resume": (Action.PAUSE, lambda w: [w.hook.pk]),
    "uninstall": (Action.UNINSTALL, lambda w: [w.hook.pk]),
}


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("person", PEOPLE)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_integration_command_acts_as_the_table_says(world, command, person):
    action, arguments = COMMANDS[command]
    user = world.people[person]
    before = written()
    args = ["integration", command, *arguments(world), "--as", user.username]

    if person != "outsider" and person in access.TABLE[action]:
        call_command(*args, stdout=io.StringIO())
        return
    with pytest.raises(CommandError) as refused:
        call_command(*args, stdout=io.StringIO())
    assert refused.value.returncode == 1
    if person == "outsider":
        assert "no such" in str(refused.value).lower()
    elif action == Action.INSTALL:
        assert str(refused.value) == access.install_refusal(world.organization, writes=True)
    else:
        assert str(refused.value) == access.refusal(action)
    assert written() == before


@pytest.mark.django_db
def test_the_webhooks_command_acts_as_the_operator(world, capsys):
    with pytest.raises(SystemExit):
        call_command("webhooks", "--help")
    assert "as the operator" in " ".join(capsys.readouterr().out.split())

    call_command("webhooks", "rotate-secret", world.hook.pk, stdout=io.StringIO())

    (row,) = AuditEntry.objects.filter(action="webhook.secret_rotated")
    assert (row.actor_kind, row.actor_user, row.actor_label) == ("operator", None, "operator")
    assert row.target_id == world.hook.pk and row.details == {}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_reader_installing_from_the_shell_is_refused_and_an_admin_installs(organization):
    reader = MembershipFactory(organization=organization, role="reader").user
    admin = MembershipFactory(organization=organization, role="admin").user
    IntegrationFactory(name="writer", visibility="public", scopes=["space:content:write"])
    install = ("integration", "install", "writer", "--org", "acme", "--as")

    refused = manage_py(*install, reader.username)
    assert refused.returncode == 1, refused.stderr
    assert access.refusal(Action.INSTALL) in refused.stderr
    assert not Installation.objects.exists() and not AuditEntry.objects.exists()

    installed = manage_py(*install, admin.username)
    assert installed.returncode == 0, installed.stderr
    installation = Installation.objects.get()
    (row,) = AuditEntry.objects.all()
    assert (row.action, row.actor_user, row.target_id) == (
        "installation.created",
        admin,
        installation.pk,
    )
