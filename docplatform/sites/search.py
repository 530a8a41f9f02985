"""Search over a site's pages: the current revision of each space the site lists (its public
ones). PostgreSQL's full-text search (English stemming, titles weighted above bodies, ranked)
where the database is PostgreSQL; elsewhere (SQLite) pages whose title or Markdown contains
every word, case-insensitively, titles first."""

import html
import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import Case, IntegerField, Q, QuerySet, When
from django.utils.html import strip_tags

from ..documents.reading import page_document
from ..models import Page, Site, Space
from .selectors import listed_spaces

MAX_QUERY_LENGTH = 200
MAX_HITS = 20
SNIPPET_LENGTH = 200
#: PostgreSQL's text search configuration: English stemming ("installing" finds "install").
SEARCH_CONFIG = "english"
#: The "#" link the renderer adds to each heading: not text of the page.
_HEADING_ANCHOR = re.compile(r'<a [^>]*class="anchor"[^>]*>.*?</a>', re.DOTALL)


@dataclass(frozen=True)
class SearchHit:
    space: Space
    page: Page
    #: Plain text around the first word found, as (before, word, after): shown escaped.
    snippet: tuple[str, str, str]


def query_problem(query: str) -> str | None:
    """Why ``query`` (``?q=``) cannot be searched, or None."""
    if len(query) > MAX_QUERY_LENGTH:
        return f"at most {MAX_QUERY_LENGTH} characters"
    if "\x00" in query:
        return "holds characters that are not text"
    return None


def site_search(site: Site, query: str) -> list[SearchHit]:
    """The pages of the site's listed spaces that match ``query``, best first (at most
    MAX_HITS)."""
    words = query.split()
    if not words:
        return []
    spaces = {space.pk: space for space in listed_spaces(site).exclude(current_revision=None)}
    pages = Page.objects.filter(
        revision_id__in=[space.current_revision_id for space in spaces.values()]
    ).select_related("revision")
    if connection.vendor == "postgresql":
        found = _full_text(pages, query)
    else:
        found = _contains_every_word(pages, words)
    return [
        SearchHit(spaces[page.revision.space_id], page, _snippet(page, words))
        for page in found[:MAX_HITS]
    ]


def _full_text(pages: QuerySet, query: str) -> QuerySet:
    from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

    document = SearchVector("title", weight="A", config=SEARCH_CONFIG) + SearchVector(
        "body", weight="B", config=SEARCH_CONFIG
    )
    wanted = SearchQuery(query, search_type="websearch", config=SEARCH_CONFIG)
    return (
        pages.annotate(document=document, rank=SearchRank(document, wanted))
        .filter(document=wanted)
        .order_by("-rank", "revision__space__title", "position", "path")
    )


def _contains_every_word(pages: QuerySet, words: list[str]) -> QuerySet:
    for word in words:
        pages = pages.filter(Q(title__icontains=word) | Q(body__icontains=word))
    in_title = Q()
    for word in words:
        in_title |= Q(title__icontains=word)
    title_first = Case(When(in_title, then=0), default=1, output_field=IntegerField())
    return pages.alias(title_first=title_first).order_by(
        "title_first", "revision__space__title", "position", "path"
    )


def _snippet(page: Page, words: list[str]) -> tuple[str, str, str]:
    """Up to SNIPPET_LENGTH characters of the page's text around the first place a word of
    the query starts (stemmed matches start with the same letters), else its beginning."""
    shown = _HEADING_ANCHOR.sub("", page_document(page).with_blocks({}))
    text = " ".join(html.unescape(strip_tags(shown)).split())
    letters = [re.sub(r"\W", "", word) for word in words]
    stems = [re.escape(word[: max(3, len(word) - 3)]) for word in letters if word]
    found = re.search(rf"(?:{'|'.join(stems)})\w*", text, re.IGNORECASE) if stems else None
    if found is None:
        return text[:SNIPPET_LENGTH], "", ""
    start = max(0, found.start() - SNIPPET_LENGTH // 3)
    end = found.start() + SNIPPET_LENGTH - (found.start() - start)
    before = ("…" if start else "") + text[start : found.start()]
    after = text[found.end() : end] + ("…" if end < len(text) else "")
    return before, found.group(), after
