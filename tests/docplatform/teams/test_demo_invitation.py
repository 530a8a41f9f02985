"""``make run``'s demo data include an open invitation, its link printed: it opens the
invitation's page, and running the command again leaves one open invitation."""

import io
import re
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.test import Client

from docplatform.models import Organization
from docplatform.teams.models import Invitation
from docplatform.teams.selectors import invitations_open
from tests.processes import manage_py

pytestmark = pytest.mark.django_db

LINK = re.compile(r"erin@example\.com is invited to acme as a member: open (\S+) to accept\.")


def seed_demo() -> str:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


@pytest.mark.slow
def test_the_demo_data_print_an_open_invitation_that_works_once_made_again():
    first = LINK.search(seed_demo()).group(1)
    acme = Organization.objects.get(subdomain="acme")
    [open_one] = invitations_open(acme)
    assert (open_one.email, open_one.role) == ("erin@example.com", "member")
    page = Client().get(urlsplit(first).path)
    assert page.status_code == 200 and "Join Acme Inc." in page.content.decode()

    second = LINK.search(seed_demo()).group(1)
    assert second != first
    assert invitations_open(acme).count() == 1
    assert Client().get(urlsplit(first).path).status_code == 410  # the earlier link: revoked
    assert Client().get(urlsplit(second).path).status_code == 200
    assert Invitation.objects.filter(email="erin@example.com").count() == 2


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_make_run_prints_the_demo_invitation_link():
    done = manage_py("seed_demo", timeout=120, PLATFORM_URL="http://127.0.0.1:9000")
    assert done.returncode == 0, done.stderr
    link = LINK.search(done.stdout).group(1)
    assert link.startswith("http://127.0.0.1:9000/invitations/")
    assert Client().get(urlsplit(link).path).status_code == 200
