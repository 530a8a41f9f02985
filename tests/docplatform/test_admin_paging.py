"""The admin's lists of tables that grow with use count at most ``COUNT_LIMIT`` + 1 rows,
never the whole table, and say when more match: an operator's page costs the same at a
million deliveries as at ten."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from docplatform import admin_paging
from docplatform.audit.models import AuditEntry
from tests.factories import UserFactory

LISTS = [
    "/admin/docplatform/auditentry/",
    "/admin/docplatform/revision/",
    "/admin/docplatform/page/",
    "/admin/docplatform/pagefeedback/",
    "/admin/docplatform/delivery/",
    "/admin/webhooks/deliveryattempt/",
    "/admin/integrations/integrationlog/",
]


@pytest.fixture
def operator(client, db):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def entries(count: int) -> None:
    made = [
        AuditEntry(actor_kind="operator", actor_label="ops", action=f"act.{n}")
        for n in range(count)
    ]
    AuditEntry.objects.bulk_create(made)


@pytest.mark.parametrize("address", LISTS)
def test_no_list_counts_a_whole_table(operator, address):
    with CaptureQueriesContext(connection) as queries:
        response = operator.get(address)
    assert response.status_code == 200
    counts = [q["sql"] for q in queries if re.search(r"COUNT\(\*\)", q["sql"], re.IGNORECASE)]
    assert counts, "the list counts its rows"
    for sql in counts:
        assert f"LIMIT {admin_paging.COUNT_LIMIT + 1}" in sql, sql


def test_below_the_limit_the_count_is_exact_and_past_it_the_list_says_more(operator, monkeypatch):
    entries(3)
    page = operator.get("/admin/docplatform/auditentry/").content.decode()
    assert "3 audit entries" in page
    monkeypatch.setattr(admin_paging, "COUNT_LIMIT", 2)
    page = operator.get("/admin/docplatform/auditentry/").content.decode()
    assert "More than 2 audit entries (the first 2 listed" in page
    assert "3 audit entries" not in page
