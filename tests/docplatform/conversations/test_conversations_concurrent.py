"""Two posts of one external id at once make one conversation: one is created, the other
merges into it (the unique constraint decides, then the row lock)."""

import threading
from datetime import UTC, datetime

import pytest
from django.db import connection

from docplatform.conversations.models import Conversation
from docplatform.conversations.services import conversation_ingest


@pytest.mark.django_db(transaction=True)
def test_two_posts_at_once_make_one_conversation(helpdesk):
    barrier = threading.Barrier(2, timeout=10)
    created, failures = [], []

    def post(text: str):
        try:
            barrier.wait()
            _, new = conversation_ingest(
                organization=helpdesk.organization,
                installation_id=helpdesk.pk,
                posted_by="Helpdesk",
                external_id="same",
                subject="Same thread",
                messages=[{"role": "user", "text": text, "time": datetime(2026, 3, 1, tzinfo=UTC)}],
            )
            created.append(new)
        except Exception as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(text,)) for text in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not failures, failures
    assert sorted(created) == [False, True]
    kept = Conversation.objects.get()
    assert sorted(message["text"] for message in kept.messages) == ["first", "second"]
