"""A row records the address of the request that caused it (``AuditAddressMiddleware``): the
client's, or the one the trusted proxies name; none for a change made outside a request."""

import pytest

from docplatform.audit.models import AuditEntry
from tests.api_helpers import API, api_client

pytestmark = pytest.mark.django_db

TOKENS = f"{API}/me/tokens/"


def rows_of_a_token_made(user, **request) -> list[AuditEntry]:
    """The rows that making a personal token through the API left."""
    AuditEntry.objects.all().delete()
    response = api_client(user).post(TOKENS, {"name": "ci"}, **request)
    assert response.status_code == 201, response.content
    rows = list(AuditEntry.objects.all())
    assert rows, "making a personal token leaves an audit row"
    return rows


@pytest.mark.slow
def test_a_row_records_the_clients_address(org_member):
    rows = rows_of_a_token_made(org_member, REMOTE_ADDR="203.0.113.7")
    assert {row.address for row in rows} == {"203.0.113.7"}
    assert {row.actor_label for row in rows} == {org_member.username}


@pytest.mark.slow
def test_behind_a_trusted_proxy_the_row_records_the_address_it_names(org_member, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    rows = rows_of_a_token_made(
        org_member, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.4"
    )
    assert {row.address for row in rows} == {"198.51.100.4"}


def test_a_forged_forwarded_for_is_ignored_without_a_trusted_proxy(org_member):
    rows = rows_of_a_token_made(
        org_member, REMOTE_ADDR="203.0.113.7", HTTP_X_FORWARDED_FOR="198.51.100.4"
    )
    assert {row.address for row in rows} == {"203.0.113.7"}
