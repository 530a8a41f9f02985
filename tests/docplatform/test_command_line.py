"""The host platform's commands run as operators run them, each in a process of its own:
``manage.py seed_demo``, ``fire_event`` and ``worker_ping`` (``tokens``: test_personal_tokens)."""

import pytest
from django.contrib.auth import get_user_model

from docplatform.events.models import Event
from docplatform.models import Organization, Revision, Site, Space
from tests.factories import OrganizationFactory, SpaceFactory
from tests.processes import manage_py


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_seed_demo_loads_the_demo_data_and_is_idempotent():
    first = manage_py(
        "seed_demo",
        timeout=120,
        PLATFORM_URL="http://127.0.0.1:9000",
        SITES_URL="http://127.0.0.2:9000",
    )
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    integrations, ready, sites = lines[:-3], lines[-3], lines[-2:]
    assert all(line.startswith("integration ") for line in integrations), lines
    # The addresses printed are the ones the platform runs on (make run WEB_PORT=9000).
    assert ready.startswith("Demo data ready. Sign in at http://127.0.0.1:9000/admin/")
    site_ids = {site.pk: site.title for site in Site.objects.all()}
    assert sites == [
        f"Published site {title!r}: http://127.0.0.2:9000/{pk}/" for pk, title in site_ids.items()
    ]
    users = set(get_user_model().objects.values_list("username", flat=True))
    assert {"admin", "alice", "bob", "carol"} <= users
    organizations = set(Organization.objects.values_list("subdomain", flat=True))
    assert {"acme", "globex"} <= organizations

    again = manage_py("seed_demo", timeout=120)
    assert again.returncode == 0, again.stderr
    assert get_user_model().objects.filter(username="alice").count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_fire_event_prints_the_event_and_exits_by_kind_of_failure():
    space = SpaceFactory(organization=OrganizationFactory(subdomain="acme"))
    space.current_revision = Revision.objects.create(space=space, message="first")
    space.save()

    fired = manage_py("fire_event", "space_content_updated", "--space", space.id)
    assert fired.returncode == 0, fired.stderr
    event = Event.objects.get(type="space_content_updated")
    assert fired.stdout.strip() == f"fired space_content_updated {event.id} to 0 installation(s)"
    assert event.payload["revisionId"] == space.current_revision_id

    refused = manage_py("fire_event", "space_content_updated", "--space", space.id, "--set", "x=1")
    assert refused.returncode == 1
    assert refused.stdout.strip().startswith("x: ")
    assert refused.stderr.strip() == "CommandError: the event was not fired"

    unknown = manage_py("fire_event", "space_content_updated", "--space", "nope")
    assert (unknown.returncode, unknown.stderr.strip()) == (
        2,
        "CommandError: --space nope: no such space",
    )
    usage = manage_py("fire_event", "space_content_updated")  # --space or --site is required
    assert usage.returncode == 2
    assert "one of the arguments --space --site is required" in usage.stderr
    assert Space.objects.count() == 1 and Event.objects.count() == 1


@pytest.mark.slow
def test_worker_ping_answered_by_a_worker(celery_worker):
    answered = manage_py("worker_ping", "--timeout", "20")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.startswith("worker ") and " answered in " in answered.stdout


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_ping_without_an_answer_exits_1():
    unanswered = manage_py("worker_ping", "--timeout", "0")
    assert unanswered.returncode == 1
    assert unanswered.stderr.splitlines()[-1] == "CommandError: no worker answered within 0 s"
