"""What a public endpoint's call keeps read (``kept_installations``): each process reads an
installation once while nothing of it changes, and a change committed anywhere (the
installation's row, its organization installation's, its selected spaces, its integration's)
is read at the very next call, with no wait; within a transaction every call reads. The
tables' triggers tell the change feed (``docplatform.change_feed``) of each write."""

import pytest
import requests
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from docplatform.change_feed import EVERYTHING, ChangeFeed, feed
from integrations.endpoint_selectors import installation_for_call, selected_spaces_of
from integrations.environment import installation_public_endpoint
from integrations.gateway.failures import ClientFault
from integrations.kept_installations import kept_installations
from integrations.models import Installation
from integrations.services import integration_publish_folder
from integrations.services.installations import (
    installation_create,
    installation_pause,
    installation_resume,
    installation_select_spaces,
    installation_uninstall,
)
from integrations.services.public_endpoints import installation_endpoint_target
from tests.factories import SpaceFactory
from tests.integrations.conftest import minimal_manifest

pytestmark = [
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY: PostgreSQL"),
]


def installation_reads(installation_id: str) -> int:
    """The statements reading installations that a kept read of ``installation_id`` ran."""
    with CaptureQueriesContext(connection) as read:
        assert installation_for_call(installation_id, kept=True) is not None
    return sum('FROM "integrations_installation"' in query["sql"] for query in read)


def paused(installation_id: str) -> bool:
    try:
        installation_endpoint_target(installation_id)
    except ClientFault as fault:
        assert fault.code == "installation_paused"
        return True
    return False


CODE = (
    "from docplatform_sdk import Response, create_integration\n"
    "integration = create_integration(fetch=lambda request, context: Response.json({}))\n"
)


@pytest.fixture
def installed(write_integration, org_admin, organization):
    manifest = minimal_manifest(name="kept-reads", script="main.py")
    root = write_integration(manifest, {"main.py": CODE}, folder="kept-reads")
    integration = integration_publish_folder(path=root, publisher=org_admin).version.integration
    return installation_create(user=org_admin, integration=integration, organization=organization)


def test_an_unchanged_installation_is_read_once(installed):
    assert installation_reads(installed.pk) == 1
    for _ in range(3):
        assert installation_reads(installed.pk) == 0
    first, again = (installation_for_call(installed.pk, kept=True) for _ in range(2))
    assert first is not again and first.integration is not again.integration  # its own
    assert (again.pk, again.integration.name, again.status) == (
        installed.pk,
        "kept-reads",
        installed.status,
    )


def test_each_call_is_given_instances_of_its_own_which_change_nothing_kept(installed):
    assert installation_reads(installed.pk) == 1  # kept: the calls below are given copies
    first = installation_for_call(installed.pk, kept=True)
    version = first.integration.released_version
    number = version.number
    assert version.integration is first.integration  # the copy is whole: one integration
    first.status = "tampered"
    first.integration.title = "tampered"
    version.number = -1
    first.integration.development_version = None
    assert version.bundle  # a deferred field, read for this call only
    again = installation_for_call(installed.pk, kept=True)
    assert again.integration.released_version is not version
    assert (again.status, again.integration.title) == (
        installed.status,
        installed.integration.title,
    )
    assert again.integration.released_version.number == number
    assert again.integration.development_version_id == installed.integration.development_version_id
    assert "bundle" in again.integration.released_version.get_deferred_fields()


def test_a_call_through_the_host_leaves_the_kept_values_as_read(runtime, installed):
    for _ in range(2):  # the first keeps it, the second runs on a copy of the kept one
        answer = requests.get(installation_public_endpoint(installed) + "/x", timeout=20)
        assert answer.status_code == 200
    kept = kept_installations._kept[installed.pk].instance
    read = installation_for_call(installed.pk)  # read now, not kept
    for held, fresh in (
        (kept, read),
        (kept.integration, read.integration),
        (kept.integration.released_version, read.integration.released_version),
    ):
        assert held.__dict__.keys() - {"_state"} == fresh.__dict__.keys() - {"_state"}
        for name in fresh.__dict__.keys() - {"_state"}:
            assert getattr(held, name) == getattr(fresh, name), name


def test_each_change_committed_is_read_at_the_next_call(installed, org_admin, organization):
    assert not paused(installed.pk)
    installation_pause(user=org_admin, installation=installed)
    assert paused(installed.pk)
    installation_resume(user=org_admin, installation=installed)
    assert not paused(installed.pk)

    chosen = SpaceFactory(organization=organization)
    installation_select_spaces(
        user=org_admin, installation=installed, space_selection="selected", spaces=[chosen]
    )
    assert selected_spaces_of(installation_for_call(installed.pk, kept=True)) == [chosen.pk]

    Installation.objects.filter(pk=installed.pk).update(configuration={"written": "directly"})
    assert installation_for_call(installed.pk, kept=True).configuration == {"written": "directly"}

    installed.integration.title = "Renamed"
    installed.integration.save(update_fields=["title"])
    assert installation_for_call(installed.pk, kept=True).integration.title == "Renamed"

    installation_uninstall(user=org_admin, installation=installed)
    with pytest.raises(ClientFault) as gone:
        installation_endpoint_target(installed.pk)
    assert gone.value.code == "not_found"


def test_a_change_to_the_organization_installation_reaches_those_below(
    installed, org_admin, organization, space
):
    below = installation_create(
        user=org_admin, integration=installed.integration, organization=organization, space=space
    )
    assert not paused(below.pk) and installation_reads(below.pk) == 0
    installation_pause(user=org_admin, installation=installed)
    assert paused(below.pk)
    chosen = SpaceFactory(organization=organization)
    installation_select_spaces(
        user=org_admin, installation=installed, space_selection="selected", spaces=[chosen]
    )
    assert selected_spaces_of(installation_for_call(below.pk, kept=True)) == [chosen.pk]


def test_within_a_transaction_every_call_reads(installed):
    installation_reads(installed.pk)
    with transaction.atomic():
        assert installation_reads(installed.pk) == 1
        Installation.objects.filter(pk=installed.pk).update(status=Installation.Status.PAUSED)
        assert paused(installed.pk)  # its own write, not yet committed, seen
    assert paused(installed.pk)


def test_when_the_feed_cannot_vouch_every_call_reads(installed, settings):
    installation_reads(installed.pk)
    settings.DATABASE_CHANGE_FEED = False
    assert installation_reads(installed.pk) == 1
    assert installation_reads(installed.pk) == 1
    settings.DATABASE_CHANGE_FEED = True
    feed.close()  # a feed connected anew vouches for nothing kept before
    assert installation_reads(installed.pk) == 1


def test_each_table_tells_the_feed_of_its_writes(installed, org_admin, organization):
    changes: list[str] = []
    own = ChangeFeed()
    own.subscribe(changes.append)
    own.synced()
    integration, pk = installed.integration, installed.pk
    writes = [
        (lambda: integration.save(update_fields=["title"]), f"integration:{integration.pk}"),
        (lambda: Installation.objects.filter(pk=pk).update(configuration={}), f"installation:{pk}"),
        (
            lambda: installation_select_spaces(
                user=org_admin,
                installation=installed,
                space_selection="selected",
                spaces=[SpaceFactory(organization=organization)],
            ),
            f"installation:{pk}",
        ),
        (lambda: installed.selected_spaces.clear(), f"installation:{pk}"),  # a row deleted
    ]
    try:
        for write, expected in writes:
            changes.clear()
            write()
            own.synced()
            assert expected in changes, changes
        changes.clear()
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE integrations_installation_selected_spaces")
        own.synced()
        assert EVERYTHING in changes  # others' writes may come too: a worker's, meanwhile
    finally:
        own.close()
