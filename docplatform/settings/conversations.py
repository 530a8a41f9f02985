"""Conversations that integrations post (README, "Conversations"): how large one may be.

A post past a bound is refused whole (400 naming ``messages`` or the message's ``text``),
and so is a repost whose new messages would take the kept thread past one.
"""

from .environment import env_number, env_positive

#: Messages in one conversation, at most.
CONVERSATIONS_MAX_MESSAGES = env_positive(int, "CONVERSATIONS_MAX_MESSAGES", 500)
#: Characters in one message's text, at most.
CONVERSATIONS_MAX_MESSAGE_LENGTH = env_positive(int, "CONVERSATIONS_MAX_MESSAGE_LENGTH", 20_000)
#: Characters in all of a conversation's messages together, at most.
CONVERSATIONS_MAX_TOTAL_LENGTH = env_positive(int, "CONVERSATIONS_MAX_TOTAL_LENGTH", 200_000)
#: The most recent conversations of an organization matched again after its documentation
#: changed (what the "unanswered" filter reads); older ones keep their last mark.
CONVERSATIONS_REMATCH_LIMIT = env_positive(int, "CONVERSATIONS_REMATCH_LIMIT", 1000)
#: Seconds the matching waits after a change of the documentation: every change within them
#: is matched by one run (an editor saving a page a minute costs one run a minute, not one a
#: save, whatever the number of conversations).
CONVERSATIONS_REMATCH_DELAY = env_number(float, "CONVERSATIONS_REMATCH_DELAY", 30.0)
