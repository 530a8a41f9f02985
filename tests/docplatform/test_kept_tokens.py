"""Personal tokens kept read by each process (``selectors.kept_tokens``): a working token is
read once while nothing of it changes, and a revocation, a user made inactive or deleted, or
a change made by another process is read at the very next request, with no wait; a token
past its expiry stops at once, kept or not; each request gets a user of its own; within a
transaction every check reads. The tables' triggers tell the change feed of each write."""

import time
from datetime import timedelta

import psycopg
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from docplatform.access import remember_role, role_of
from docplatform.models import ApiToken, Membership
from docplatform.selectors import api_token_working
from docplatform.services import api_token_create, api_token_revoke
from tests.api_helpers import API, api_client

pytestmark = [
    pytest.mark.usefixtures("transactional_db"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY: PostgreSQL"),
]


def token_reads(raw: str) -> tuple[ApiToken | None, int]:
    """What the check of ``raw`` gives, and how many statements read tokens for it."""
    with CaptureQueriesContext(connection) as read:
        token = api_token_working(raw)
    return token, sum('FROM "docplatform_apitoken"' in query["sql"] for query in read)


@pytest.fixture
def raw(org_admin):
    """A token used once: its first use, written to its row (``last_used_at``, kept to the
    minute), makes what a check kept of it stale, as every change to the row does."""
    raw = api_token_create(user=org_admin, name="kept")[1]
    assert api_token_working(raw) is not None
    return raw


def test_a_working_token_is_read_once_and_each_check_gets_instances_of_its_own(raw, org_admin):
    first, reads = token_reads(raw)
    assert reads == 1 and first.user == org_admin
    again, reads = token_reads(raw)
    assert reads == 0
    assert again is not first and again.user is not first.user
    assert (again.pk, again.user.pk, again.user.username) == (
        first.pk,
        org_admin.pk,
        org_admin.username,
    )


def test_a_revoked_token_stops_at_the_next_check(raw):
    assert token_reads(raw)[0] is not None
    assert token_reads(raw)[1] == 0  # kept
    api_token_revoke(token=ApiToken.objects.get())
    assert token_reads(raw) == (None, 1)


def test_a_change_made_by_another_process_is_read_at_the_next_check(raw, org_admin):
    assert api_token_working(raw) is not None
    settings_dict = connection.settings_dict
    with psycopg.connect(
        host=settings_dict["HOST"] or None,
        port=settings_dict["PORT"] or None,
        user=settings_dict["USER"],
        dbname=settings_dict["NAME"],
        password=settings_dict["PASSWORD"] or None,
        autocommit=True,
    ) as other:
        other.execute("UPDATE auth_user SET is_active = false WHERE id = %s", [org_admin.pk])
    assert token_reads(raw) == (None, 1)


def test_a_user_made_inactive_or_deleted_stops_their_tokens_at_once(raw, org_admin):
    assert api_token_working(raw) is not None
    org_admin.is_active = False
    org_admin.save(update_fields=["is_active"])
    assert api_token_working(raw) is None
    org_admin.is_active = True
    org_admin.save(update_fields=["is_active"])
    assert api_token_working(raw) is not None
    org_admin.delete()
    assert api_token_working(raw) is None


def test_a_kept_token_past_its_expiry_stops_without_a_change(org_admin):
    raw = api_token_create(
        user=org_admin, name="brief", expires_at=timezone.now() + timedelta(seconds=1)
    )[1]
    assert token_reads(raw)[0] is not None  # used: its row written
    assert token_reads(raw)[0] is not None
    assert token_reads(raw)[1] == 0  # kept
    time.sleep(1.1)
    assert token_reads(raw) == (None, 0)  # kept, and expired


def test_what_one_request_learns_of_its_user_is_not_the_next_ones(raw, org_admin, organization):
    """A role kept on one request's user (``role_of``) is not what the next request finds:
    a role changed between them is read again."""
    user = api_token_working(raw).user
    assert role_of(user, organization) == "admin"
    remember_role(user, organization.pk, "a role this request made up")
    Membership.objects.filter(user=org_admin, organization=organization).update(role="reader")
    assert role_of(api_token_working(raw).user, organization) == "reader"


def test_within_a_transaction_every_check_reads(raw):
    assert token_reads(raw)[1] == 1
    with transaction.atomic():
        assert token_reads(raw)[1] == 1
        assert token_reads(raw)[1] == 1


def test_the_use_is_recorded_to_the_minute_and_the_api_refuses_a_revoked_token(raw):
    client = api_client(token=raw)
    used_at = ApiToken.objects.get().last_used_at
    assert used_at is not None
    for _ in range(2):
        assert client.get(f"{API}/me/").status_code == 200
    assert ApiToken.objects.get().last_used_at == used_at  # within the minute: not written
    api_token_revoke(token=ApiToken.objects.get())
    refused = client.get(f"{API}/me/")
    assert refused.status_code == 401, refused.json()
