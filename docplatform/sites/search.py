"""Search over the pages of spaces: the current revision of each. A site searches the spaces
it lists (its public ones); an organization's conversations are matched against all of its
spaces (``conversations.selectors``). PostgreSQL's full-text search (English stemming, titles
weighted above bodies, ranked) where the database is PostgreSQL; elsewhere (SQLite) pages whose
title or Markdown contains the words, case-insensitively, titles first.

Two ways of matching, one search: every word of the query (the site's search box), or, with
``at_least``, the pages holding at least that many of its words, those holding the most
first (a conversation's words: no page holds them all).

A site's search never shows a visitor what adaptive content hides from them: a page whose
condition does not hold for their claims is never a hit, and a page with adaptive sections is a
hit only when the text they see of it (its title and the sections shown to them) matches, so a
hidden section's words neither find a page nor appear in a snippet. Likewise a block's fence
(its integration, block and props, JSON no reader sees) never makes a page a hit. The
organization's people (conversations) see every page and section."""

import html
import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.utils.html import strip_tags

from ..documents.adaptive import for_visitor, page_shown
from ..documents.reading import page_document
from ..models import Page, Site, Space
from ..page_versions import current_pages
from ..rendering import Document
from .selectors import listed_spaces

MAX_QUERY_LENGTH = 200
MAX_HITS = 20
#: Pages a search looks at, at most, for its hits (adaptive content may hide matches).
MAX_SCANNED = 500
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


def site_search(site: Site, query: str, claims: dict | None = None) -> list[SearchHit]:
    """The pages of the site's listed spaces that match ``query`` for a visitor with
    ``claims`` (None: a visitor without any), best first (at most MAX_HITS)."""
    return spaces_search(listed_spaces(site), query, claims=claims or {})


def spaces_search(
    spaces: QuerySet,
    query: str,
    *,
    at_least: int | None = None,
    limit: int = MAX_HITS,
    claims: dict | None = None,
) -> list[SearchHit]:
    """The pages of ``spaces``' current revisions that match ``query``, best first (at most
    ``limit``): holding every word of it, or, with ``at_least``, at least that many of its
    words (all of them when it has fewer), the pages holding the most first. ``claims``: a
    site visitor's, whose adaptive content is applied; None: the organization's people, who
    see every page and section."""
    words = query.split()
    if not words:
        return []
    spaces = {space.pk: space for space in spaces.exclude(current_revision=None)}
    pages = current_pages(list(spaces))
    if at_least is not None:
        found = _holding_most_words(pages, words, min(at_least, len(words)))
    elif connection.vendor == "postgresql":
        found = _full_text(pages, query)
    else:
        found = _contains_every_word(pages, words)
    hits = []
    for page in found[:MAX_SCANNED]:
        if claims is not None and not page_shown(page.condition, claims):
            continue
        document = page_document(page)
        if claims is None:
            seen = document.selected({section.index for section in document.sections})
        else:
            seen = for_visitor(document, claims)
        if (
            at_least is None
            and (document.sections or document.blocks)
            and not _matches(f"{page.title}\n{_text(seen)}", query, words)
        ):
            continue  # it matched only in what is not shown: a hidden section, a block's fence
        hits.append(SearchHit(spaces[page.space_id], page, _snippet(seen, words)))
        if len(hits) == limit:
            break
    return hits


def _matches(text: str, query: str, words: list[str]) -> bool:
    """Whether ``text`` matches the query as the database's search does."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT to_tsvector(%s::regconfig, %s) @@ websearch_to_tsquery(%s::regconfig, %s)",
                [SEARCH_CONFIG, text, SEARCH_CONFIG, query],
            )
            return bool(cursor.fetchone()[0])
    folded = text.casefold()
    return all(word.casefold() in folded for word in words)


def _full_text(pages: QuerySet, query: str) -> QuerySet:
    from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

    document = SearchVector("title", weight="A", config=SEARCH_CONFIG) + SearchVector(
        "body", weight="B", config=SEARCH_CONFIG
    )
    wanted = SearchQuery(query, search_type="websearch", config=SEARCH_CONFIG)
    return (
        pages.annotate(document=document, rank=SearchRank(document, wanted))
        .filter(document=wanted)
        .order_by("-rank", "space__title", "position", "path")
    )


def _holding_most_words(pages: QuerySet, words: list[str], at_least: int) -> QuerySet:
    """Pages holding at least ``at_least`` of ``words``, the most first: each word found as
    the site's search finds it (PostgreSQL: stemmed, in the title or body's text search
    document; SQLite: in the title or Markdown, case-insensitively)."""
    if connection.vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

        document = SearchVector("title", weight="A", config=SEARCH_CONFIG) + SearchVector(
            "body", weight="B", config=SEARCH_CONFIG
        )
        queries = [SearchQuery(word, config=SEARCH_CONFIG) for word in words]
        pages = pages.annotate(document=document)
        holds = [When(document=wanted, then=1) for wanted in queries]
        anyone = queries[0]
        for wanted in queries[1:]:
            anyone |= wanted
        tie_break = ["-rank"]
        pages = pages.annotate(rank=SearchRank(document, anyone))
    else:
        holds = [When(Q(title__icontains=word) | Q(body__icontains=word), then=1) for word in words]
        in_title = Q()
        for word in words:
            in_title |= Q(title__icontains=word)
        pages = pages.alias(
            title_first=Case(When(in_title, then=0), default=1, output_field=IntegerField())
        )
        tie_break = ["title_first"]
    held = sum(
        (Case(when, default=0, output_field=IntegerField()) for when in holds),
        start=Value(0),
    )
    return (
        pages.alias(held=held)
        .filter(held__gte=at_least)
        .order_by("-held", *tie_break, "space__title", "position", "path")
    )


def _contains_every_word(pages: QuerySet, words: list[str]) -> QuerySet:
    for word in words:
        pages = pages.filter(Q(title__icontains=word) | Q(body__icontains=word))
    in_title = Q()
    for word in words:
        in_title |= Q(title__icontains=word)
    title_first = Case(When(in_title, then=0), default=1, output_field=IntegerField())
    return pages.alias(title_first=title_first).order_by(
        "title_first", "space__title", "position", "path"
    )


def _text(document: Document) -> str:
    """The plain text of a document (without its blocks and its headings' "#" links)."""
    shown = _HEADING_ANCHOR.sub("", document.with_blocks({}))
    return " ".join(html.unescape(strip_tags(shown)).split())


def _snippet(document: Document, words: list[str]) -> tuple[str, str, str]:
    """Up to SNIPPET_LENGTH characters of the page's text (as the visitor sees it) around
    the first place a word of the query starts (stemmed matches start with the same
    letters), else its beginning."""
    text = _text(document)
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
