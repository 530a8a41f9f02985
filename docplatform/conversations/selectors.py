"""Reads of conversations: an organization's, newest first, and the pages of its spaces that
best match one, found by the sites' search (``reading.search.spaces_search``), never another.

A conversation matches the pages holding at least ``MATCH_AT_LEAST`` of its words: the words
of its subject and of its user's messages (what was asked, not what the agent answered),
without common English words, the first ``MATCH_WORDS`` different ones.
"""

import re

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from ..models import Organization, Space
from ..reading.search import SearchHit, spaces_search
from .models import Conversation

#: The different words of a conversation searched for, at most (its subject's first).
MATCH_WORDS = 12
#: A page matches a conversation when it holds at least this many of those words (all of
#: them when there are fewer).
MATCH_AT_LEAST = 2
#: The pages shown beside a conversation, at most, best first.
MATCHES_SHOWN = 5
#: A word: letters and digits, 3 to 40 of them (longer runs are ids and hashes, not words).
_WORD = re.compile(r"(?<![^\W_])[^\W_]{3,40}(?![^\W_])")
#: Common English words, never searched for (PostgreSQL drops its own; SQLite would match
#: them anywhere).
_COMMON_WORDS = """
    about above after again against all also and any are because been before being below
    between both but can cannot could did does doing down during each few for from further
    get got had has have having hello her here hers herself him himself his how into its
    itself just let like more most much must myself nor not now off once only other ought
    our ours ourselves out over own please same she should some such than thank thanks
    that the their theirs them themselves then there these they this those through too
    under until use using very want was were what when where which while who whom why will
    with would you your yours yourself yourselves
"""
_COMMON = frozenset(_COMMON_WORDS.split())


def conversations_of(organization: Organization, *, unanswered: bool = False) -> QuerySet:
    """The organization's conversations, newest first; only those no page matched when last
    matched with ``unanswered``."""
    rows = Conversation.objects.filter(organization=organization)
    if unanswered:
        rows = rows.filter(answered=False)
    return rows.order_by("-received_at", "-id")


def conversation_in(organization: Organization, conversation_id: str) -> Conversation:
    """One of the organization's conversations; 404 for any other."""
    return get_object_or_404(conversations_of(organization), pk=conversation_id)


def match_words(subject: str, user_text: str) -> list[str]:
    """The words a conversation is matched by (see the module's docstring)."""
    words: list[str] = []
    for word in _WORD.findall(f"{subject}\n{user_text}".lower()):
        if word not in _COMMON and word not in words:
            words.append(word)
            if len(words) == MATCH_WORDS:
                break
    return words


def pages_matching(
    organization_id: str, subject: str, user_text: str, *, limit: int = MATCHES_SHOWN
) -> list[SearchHit]:
    """The pages of the organization's spaces (their current revisions) that best match a
    conversation with this subject and user's text, best first."""
    words = match_words(subject, user_text)
    if not words:
        return []
    spaces = Space.objects.filter(organization_id=organization_id)
    return spaces_search(spaces, " ".join(words), at_least=MATCH_AT_LEAST, limit=limit)


def conversation_matches(conversation: Conversation) -> list[SearchHit]:
    """The pages that best match the conversation now, best first."""
    return pages_matching(
        conversation.organization_id, conversation.subject, conversation.user_text()
    )
