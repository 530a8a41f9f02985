"""The Conversations page of an organization (``/orgs/<subdomain>/conversations/``): the
support conversations its integrations posted, newest first, each with the pages of its
spaces that best match it now, or the mark "not answered by the documentation yet"; a filter
keeps the unanswered ones (as last matched: ``Conversation.answered``). Its admins only
(``Action.READ_CONVERSATIONS``): a member or a reader gets the 403 page naming who may,
anyone else 404. Everything shown is escaped: it is text strangers wrote."""

from datetime import datetime

from django.core.paginator import Paginator

from ..access import Action
from ..pages import OrganizationPage
from .selectors import conversation_matches, conversations_of

PAGE_SIZE = 20


def _thread(conversation) -> list[tuple[str, str, datetime]]:
    return [
        (message["role"], message["text"], datetime.fromisoformat(message["time"]))
        for message in conversation.messages
    ]


class ConversationsPage(OrganizationPage):
    action = Action.READ_CONVERSATIONS
    nav = "conversations"

    def get(self, request):
        unanswered = request.GET.get("unanswered") == "1"
        rows = conversations_of(self.organization, unanswered=unanswered)
        page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
        return self.page(
            "conversations/conversations.html",
            {
                "unanswered": unanswered,
                "page": page,
                "rows": [
                    (conversation, _thread(conversation), conversation_matches(conversation))
                    for conversation in page.object_list
                ],
            },
        )
