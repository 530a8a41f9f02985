"""A conversation no page answered is marked answered once a page that matches it is written:
every new revision queues the matching of its organization's conversations, which a real
worker runs."""

from datetime import UTC, datetime

import pytest

from docplatform.conversations.models import Conversation
from docplatform.conversations.services import REMATCH_TASK, conversation_ingest
from docplatform.revisions import space_content_update
from tests.conftest import wait_until
from tests.factories import SpaceFactory


def unanswered(installation) -> Conversation:
    conversation, _ = conversation_ingest(
        organization=installation.organization,
        installation_id=installation.pk,
        posted_by="Helpdesk",
        external_id="t-9",
        subject="Invoices in euros",
        messages=[
            {
                "role": "user",
                "text": "Can I pay invoices in euros?",
                "time": datetime(2026, 3, 1, tzinfo=UTC),
            }
        ],
    )
    assert conversation.answered is False
    return conversation


INVOICES = [{"path": "euros", "title": "Paying invoices", "body": "Invoices in euros: yes."}]


@pytest.mark.slow
def test_a_page_written_later_marks_it_answered(celery_worker, helpdesk, settings):
    settings.CONVERSATIONS_REMATCH_DELAY = 0.5
    conversation = unanswered(helpdesk)
    space_content_update(
        space=SpaceFactory(organization=helpdesk.organization, title="Billing"), pages=INVOICES
    )
    wait_until(lambda: Conversation.objects.get(pk=conversation.pk).answered)


def test_a_change_queues_the_matching_only_where_there_are_conversations(
    private_broker, helpdesk, globex_helpdesk, django_capture_on_commit_callbacks, settings
):
    settings.CONVERSATIONS_REMATCH_DELAY = 60
    unanswered(helpdesk)
    with django_capture_on_commit_callbacks(execute=True):
        space_content_update(
            space=SpaceFactory(organization=globex_helpdesk.organization), pages=INVOICES
        )
    assert REMATCH_TASK not in private_broker.tasks("default")
    with django_capture_on_commit_callbacks(execute=True):
        space_content_update(space=SpaceFactory(organization=helpdesk.organization), pages=INVOICES)
    assert private_broker.tasks("default").count(REMATCH_TASK) == 1
    # Another change within the delay: the run already due will see it.
    with django_capture_on_commit_callbacks(execute=True):
        space_content_update(space=SpaceFactory(organization=helpdesk.organization), pages=INVOICES)
    assert private_broker.tasks("default").count(REMATCH_TASK) == 1
