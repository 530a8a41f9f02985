"""Writes of conversations: an installation posting one (``conversation_ingest``), and their
"answered" marks matched again after the organization's documentation changed.

**Idempotent per external id.** A conversation is one per (organization, installation,
external id). Posting an external id again answers the same conversation, and merges the
thread by content: a message is its (role, time, text); the post's messages that the kept
thread does not hold yet are added, those it holds are not added twice, and none is ever
removed. So an integration may post the whole thread each time it grows, or only its new
messages; the thread stays ordered by time (messages of one time in the order they came).
The subject and the URL are the latest post's. A message edited at its source (the same role
and time, another text) is a new message here: the thread keeps what was said.

**Nothing half written.** Every field is checked before anything is written; a post whose
merged thread would pass a bound (``CONVERSATIONS_MAX_*``) is refused whole.

**Not in the audit log.** Ingest is high-volume machine traffic that changes nobody's access
and no content: the conversations list is its own record (who posted each one, when).
"""

import logging
from collections import Counter
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction

from ..events.publisher import BrokerUnavailable, publish
from ..models import Organization
from .models import EXTERNAL_ID_MAX_LENGTH, SUBJECT_MAX_LENGTH, URL_MAX_LENGTH, Conversation
from .selectors import pages_matching

logger = logging.getLogger(__name__)

REMATCH_TASK = "docplatform.tasks.rematch_conversations"
_ROLES = tuple(Conversation.Role.values)
_URL = URLValidator(schemes=["http", "https"])


def conversation_ingest(
    *,
    organization: Organization,
    installation_id: str,
    posted_by: str,
    external_id: str,
    subject: str,
    messages: list[dict],
    url: str = "",
) -> tuple[Conversation, bool]:
    """Record a conversation the installation posted, or merge a repost of its external id
    into the one kept (see the module's docstring). ``messages``: ``{"role", "text", "time"}``
    with ``time`` a datetime; ``posted_by``: the installation in words (the token's
    ``actor_label``). Returns the conversation and whether it is new.
    ValidationError naming ``external_id``, ``subject``, ``url``, ``messages`` or
    ``messages.<n>.role``/``.text``/``.time``, with nothing written."""
    _check(external_id=external_id, subject=subject, url=url, messages=messages)
    posted = [_stored(message) for message in messages]
    key = {"organization": organization, "installation_id": installation_id}
    with transaction.atomic():
        kept = _locked(external_id=external_id, **key)
        if kept is None:
            try:
                with transaction.atomic():
                    conversation = Conversation.objects.create(
                        external_id=external_id,
                        subject=subject,
                        url=url,
                        posted_by=posted_by,
                        messages=posted,
                        answered=_answered(organization.pk, subject, posted),
                        **key,
                    )
                return conversation, True
            except IntegrityError:  # posted twice at once: the other post made it first
                kept = _locked(external_id=external_id, **key)
        thread = _merged(kept.messages, posted)
        _check_bounds(thread)
        if (kept.subject, kept.url, kept.messages, kept.posted_by) != (
            subject,
            url,
            thread,
            posted_by,
        ):
            kept.subject, kept.url, kept.messages = subject, url, thread
            kept.posted_by = posted_by
            kept.answered = _answered(organization.pk, subject, thread)
            kept.save()
        return kept, False


def _locked(**key) -> Conversation | None:
    return Conversation.objects.select_for_update(no_key=True).filter(**key).first()


def _check(*, external_id: str, subject: str, url: str, messages: list[dict]) -> None:
    errors: dict[str, list[str]] = {}
    if not external_id.strip():
        errors["external_id"] = ["must not be blank"]
    elif len(external_id) > EXTERNAL_ID_MAX_LENGTH:
        errors["external_id"] = [f"at most {EXTERNAL_ID_MAX_LENGTH} characters"]
    if not subject.strip():
        errors["subject"] = ["must not be blank"]
    elif len(subject) > SUBJECT_MAX_LENGTH:
        errors["subject"] = [f"at most {SUBJECT_MAX_LENGTH} characters"]
    if len(url) > URL_MAX_LENGTH:
        errors["url"] = [f"at most {URL_MAX_LENGTH} characters"]
    elif url:
        try:
            _URL(url)
        except ValidationError:
            errors["url"] = ["must be an http or https URL"]
    for position, message in enumerate(messages):
        where = f"messages.{position}"
        if message["role"] not in _ROLES:
            errors[f"{where}.role"] = [f"must be one of: {', '.join(_ROLES)}"]
        if _utc(message["time"]) is None:
            errors[f"{where}.time"] = ["out of the range of times kept (years 1 to 9999, UTC)"]
        if not message["text"].strip():
            errors[f"{where}.text"] = ["must not be blank"]
        elif len(message["text"]) > settings.CONVERSATIONS_MAX_MESSAGE_LENGTH:
            errors[f"{where}.text"] = [
                f"at most {settings.CONVERSATIONS_MAX_MESSAGE_LENGTH} characters"
            ]
    if not messages:
        errors["messages"] = ["must hold at least one message"]
    else:
        try:
            _check_bounds(messages)
        except ValidationError as error:
            errors.update(error.message_dict)
    if errors:
        raise ValidationError(errors)


def _check_bounds(thread: list[dict]) -> None:
    """The bounds of a whole thread: as posted, and as merged into the one kept."""
    if len(thread) > settings.CONVERSATIONS_MAX_MESSAGES:
        raise ValidationError(
            {"messages": [f"at most {settings.CONVERSATIONS_MAX_MESSAGES} messages"]}
        )
    total = sum(len(message["text"]) for message in thread)
    if total > settings.CONVERSATIONS_MAX_TOTAL_LENGTH:
        raise ValidationError(
            {
                "messages": [
                    f"at most {settings.CONVERSATIONS_MAX_TOTAL_LENGTH} characters of text in "
                    f"all (this thread: {total})"
                ]
            }
        )


def _utc(at: datetime) -> str | None:
    """The time in UTC as ISO 8601, or None when it falls outside what a datetime holds there
    (``9999-12-31T23:00:00-05:00``)."""
    try:
        return at.astimezone(UTC).isoformat(timespec="microseconds")
    except (OverflowError, ValueError):
        return None


def _stored(message: dict) -> dict:
    return {"role": message["role"], "text": message["text"], "time": _utc(message["time"])}


def _identity(message: dict) -> tuple[str, str, str]:
    return message["role"], message["time"], message["text"]


def _merged(kept: list[dict], posted: list[dict]) -> list[dict]:
    """The kept thread with the posted messages it does not hold yet, ordered by time. A
    message said twice at one time is kept twice when posted twice (counted, not set-wise)."""
    held = Counter(_identity(message) for message in kept)
    added = []
    for message in posted:
        if held[_identity(message)]:
            held[_identity(message)] -= 1
        else:
            added.append(message)
    if not added:
        return kept
    return sorted([*kept, *added], key=lambda message: message["time"])


def _answered(organization_id: str, subject: str, thread: list[dict]) -> bool:
    user_text = "\n".join(m["text"] for m in thread if m["role"] == Conversation.Role.USER)
    return bool(pages_matching(organization_id, subject, user_text, limit=1))


# --- Matched again when the documentation changes -------------------------------------------


def conversations_rematch(organization_id: str) -> int:
    """Mark again which of the organization's most recent conversations
    (``CONVERSATIONS_REMATCH_LIMIT``) some page matches now; the number whose mark changed."""
    changed = []
    recent = (
        Conversation.objects.filter(organization_id=organization_id)
        .only("id", "subject", "messages", "answered")
        .order_by("-received_at", "-id")[: settings.CONVERSATIONS_REMATCH_LIMIT]
    )
    for conversation in recent.iterator(chunk_size=100):  # threads are large: a few at once
        answered = _answered(organization_id, conversation.subject, conversation.messages)
        if answered != conversation.answered:
            conversation.answered = answered
            changed.append(conversation)
    Conversation.objects.bulk_update(changed, ["answered"], batch_size=500)
    return len(changed)


def conversations_rematch_on_change(*, space) -> None:
    """The content hook (``hooks.on_space_content_changed``): after the commit, queue the
    matching of the space's organization's conversations, when it has any, to run
    ``CONVERSATIONS_REMATCH_DELAY`` seconds later; the changes meanwhile queue nothing more
    (the cache remembers the run that is due). A broker that is down leaves the marks as they
    were (logged): the next change or post marks them again."""
    organization_id = space.organization_id
    if not Conversation.objects.filter(organization_id=organization_id).exists():
        return
    delay = settings.CONVERSATIONS_REMATCH_DELAY
    due = f"conversations-rematch-due:{organization_id}"

    def queue():
        if delay and not cache.add(due, True, timeout=delay):
            return  # a run is due within the delay: it will see this change
        try:
            publish(REMATCH_TASK, args=[organization_id], countdown=delay or None)
        except BrokerUnavailable:
            cache.delete(due)
            logger.warning("broker unavailable: conversations of %s not rematched", organization_id)

    transaction.on_commit(queue)
