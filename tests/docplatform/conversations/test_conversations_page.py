"""The Conversations page: admins see what integrations posted, newest first, with the pages
that match each one or the mark that none does; hostile text stays text."""

import pytest
from django.urls import reverse

from docplatform.conversations.services import conversation_ingest
from docplatform.revisions import space_content_update
from marketplace.scopes import scope_label
from tests.factories import SpaceFactory

PAGE = "/orgs/acme/conversations/"
NOT_ANSWERED = "Not answered by the documentation yet"


def ingest(installation, external_id, subject, *texts, url=""):
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    messages = [
        {
            "role": "user" if n % 2 == 0 else "agent",
            "text": text,
            "time": start + timedelta(minutes=n),
        }
        for n, text in enumerate(texts)
    ]
    return conversation_ingest(
        organization=installation.organization,
        installation_id=installation.pk,
        posted_by=f"Helpdesk (installation {installation.pk})",
        external_id=external_id,
        subject=subject,
        messages=messages,
        url=url,
    )[0]


@pytest.fixture
def conversations(helpdesk, guide):
    """The older one answered by the guide, the newer one not, with hostile text."""
    answered = ingest(
        helpdesk,
        "t-1",
        "Webhook secret rotation",
        "How do I rotate the signing secret?",
        "See the guide.",
        url="https://support.example.com/t/1",
    )
    unanswered = ingest(
        helpdesk,
        "t-2",
        "<script>alert('subject')</script> Invoices",
        "<img src=x onerror=alert(1)> can I pay invoices in euros?",
    )
    return {"answered": answered, "unanswered": unanswered}


def test_admins_see_conversations_with_their_matching_pages(
    client, org_admin, conversations, guide
):
    client.force_login(org_admin)
    response = client.get(PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    newer = html.index(f'id="conversation-{conversations["unanswered"].pk}"')
    older = html.index(f'id="conversation-{conversations["answered"].pk}"')
    assert newer < older  # newest first
    answered_card = html[older:]
    assert reverse("docs:page", args=[guide.pk, "webhooks/secrets"]) in answered_card
    assert "Rotating a webhook signing secret" in answered_card
    assert NOT_ANSWERED not in answered_card
    assert 'href="https://support.example.com/t/1"' in answered_card
    unanswered_card = html[newer:older]
    assert NOT_ANSWERED in unanswered_card
    assert "Pages that match" not in unanswered_card
    assert (
        f'<li class="conversation unanswered" id="conversation-{conversations["unanswered"].pk}"'
        in html
    )


def test_hostile_text_is_shown_as_text(client, org_admin, conversations):
    client.force_login(org_admin)
    html = client.get(PAGE).content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(&#x27;subject&#x27;)&lt;/script&gt; Invoices" in html
    assert "&lt;img src=x onerror=alert(1)&gt; can I pay invoices in euros?" in html


def test_the_filter_keeps_the_unanswered(client, org_admin, conversations):
    client.force_login(org_admin)
    html = client.get(PAGE, {"unanswered": "1"}).content.decode()
    assert f'id="conversation-{conversations["unanswered"].pk}"' in html
    assert f'id="conversation-{conversations["answered"].pk}"' not in html
    assert "1 conversation" in html


def test_a_page_written_later_answers_a_conversation(client, org_admin, conversations, guide):
    """The pages shown are searched afresh; the filter's mark follows once matched again
    (the task the content hook queues: ``test_conversations_rematch``)."""
    space_content_update(
        space=SpaceFactory(organization=guide.organization, title="Billing"),
        pages=[{"path": "currencies", "title": "Paying invoices", "body": "Invoices in euros."}],
    )
    client.force_login(org_admin)
    html = client.get(PAGE).content.decode()
    assert NOT_ANSWERED not in html
    assert "Paying invoices" in html


def test_admins_find_it_in_the_top_bar_others_do_not(client, people, conversations):
    link = f'href="{PAGE}"'
    client.force_login(people["admin"])
    assert link in client.get("/orgs/acme/members/").content.decode()
    client.force_login(people["member"])
    assert link not in client.get("/orgs/acme/members/").content.decode()


@pytest.mark.parametrize(("who", "status"), [("member", 403), ("reader", 403), ("outsider", 404)])
def test_members_readers_and_outsiders_are_refused(client, people, conversations, who, status):
    client.force_login(people[who])
    response = client.get(PAGE)
    assert response.status_code == status
    assert "Invoices" not in response.content.decode()
    if status == 403:
        assert "Only the organization&#x27;s admins may read the support conversations" in (
            response.content.decode()
        )


def test_anonymous_visitors_are_sent_to_sign_in(client, conversations):
    response = client.get(PAGE)
    assert response.status_code == 302
    assert "/login" in response["Location"]


def test_an_empty_page_names_the_permission_as_the_consent_screen_does(client, org_admin):
    client.force_login(org_admin)
    html = client.get(PAGE).content.decode()
    assert "No conversation yet" in html
    assert f'the permission "{scope_label("conversations:ingest")}"' in html


def test_the_consent_screen_says_what_the_scope_grants(client, org_admin, organization):
    """The words an admin consents to are what the scope grants: sending support
    conversations that the organization's admins read (here, and through the API)."""
    from django.utils.html import escape

    from tests.factories import IntegrationFactory

    integration = IntegrationFactory(
        organization=organization, name="desk", scopes=["conversations:ingest"]
    )
    client.force_login(org_admin)
    address = reverse("marketplace:install", args=["acme", integration.name])
    consent = client.get(f"{address}?level=organization").content.decode()
    assert escape("Send support conversations to your organization's admins") in consent
