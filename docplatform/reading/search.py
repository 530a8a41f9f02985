"""Search over the pages of spaces, the current revision of each: the one search service. A site
searches the spaces it lists (its public ones, ``site_search``); the platform's search box the
spaces a person may read (``member_search``: ``access.spaces_visible_to``); an organization's
conversations are matched against all of its spaces (``conversations.selectors``).

It reads the search index written with each page version (``search_index``), never the pages'
Markdown: on PostgreSQL the versions' stored vectors through their GIN index, ranked
(``ts_rank``, titles weighted above text) within the query that finds them, in each space's
search language, the query read as a web search (``websearch_to_tsquery``: "quoted phrases",
or, -word); on SQLite the FTS5 table, ranked by ``bm25`` (titles ten times the text). Snippets
come from the database too (``ts_headline``; FTS5's ``snippet``), as text: the words found are
marked by the template, everything escaped.

Two ways of matching, one search: every word of the query (the search boxes), or, with
``at_least``, the pages holding at least that many of its words, those holding the most first
(a conversation's words: no page holds them all).

A site's search never shows a visitor what adaptive content hides from them: a page whose
condition does not hold for their claims is never a hit, and a page with adaptive sections is a
hit only when the text they see of it (its title and the sections shown to them) matches, so a
hidden section's words neither find a page nor appear in a snippet. A block's fence (its
integration, block and props, JSON no reader sees) is never indexed. The organization's people
(in-app search, conversations) see every page and section."""

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import connection
from django.db.models import Case, F, FloatField, IntegerField, Q, QuerySet, Value, When

from ..access import spaces_visible_to
from ..models import CURRENT, Page, Space
from ..page_versions import current_pages
from ..rendering import plain_text
from ..search_index import FTS_TABLE, document_text
from ..visitor_rates import wait_seconds
from .adaptive import for_visitor, page_shown
from .document import page_document

MAX_QUERY_LENGTH = 200
MAX_HITS = 20
#: Pages a search looks at, at most, for its hits (adaptive content may hide matches): read
#: from the index in two batches, the second only when the first did not give enough hits.
MAX_SCANNED = 500
SNIPPET_LENGTH = 200
#: Around the words a snippet marks (in no page's text: they are taken out of it first).
_MARK, _UNMARK = "\ue000", "\ue001"
_HEADLINE = f"StartSel={_MARK}, StopSel={_UNMARK}, MinWords=15, MaxWords=35"


@dataclass(frozen=True)
class SearchHit:
    space: Space
    page: Page
    #: The text around the words found, as pieces alternately plain and found (the first
    #: plain): shown escaped, the found ones marked; ``"".join`` gives the text.
    snippet: tuple[str, ...]


def rate_refusal(address: str) -> tuple[str, int] | None:
    """Count a search from the client ``address`` (``SITE_RATES["search"]``, as feedback is
    counted): None when it is within the rate, else what to tell them and the seconds until
    they may search again (the 429's Retry-After)."""
    wait = wait_seconds("search", address)
    if not wait:
        return None
    return f"Too many searches from your address: try again in {wait} seconds.", wait


def query_problem(query: str) -> str | None:
    """Why ``query`` (``?q=``) cannot be searched, or None."""
    if len(query) > MAX_QUERY_LENGTH:
        return f"at most {MAX_QUERY_LENGTH} characters"
    if "\x00" in query:
        return "holds characters that are not text"
    return None


def member_search(actor, query: str) -> list[SearchHit]:
    """The pages of the spaces ``actor`` may read in the platform (their organizations'),
    matching ``query``, best first; every section shown."""
    return spaces_search(spaces_visible_to(actor), query)


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
    spaces = {space.pk: space for space in spaces.exclude(current_revision=None)}
    if not words or not spaces:
        return []
    if at_least is not None:
        found = _holding_most_words(spaces, words, min(at_least, len(words)))
        candidates = ((page, None) for page in found[:MAX_SCANNED])
    else:
        candidates = _matching(spaces, query, words, limit)
    hits = []  # (page, the text seen of it, its snippet when the index's holds)
    for page, snippet in candidates:
        if claims is not None and not page_shown(page.condition, claims):
            continue
        document = page_document(page)
        hiding = claims is not None and bool(document.sections)
        text = plain_text(for_visitor(document, claims)) if hiding else document_text(document)
        text = text.translate(_UNMARKED)
        space = spaces[page.space_id]
        if hiding and at_least is None and not _matches(f"{page.title}\n{text}", query, space):
            continue  # it matched only in what is not shown to them: a hidden section
        hits.append((page, text, None if hiding else snippet))
        if len(hits) == limit:
            break
    snippets = _snippets(hits, spaces, query, words, headline=at_least is None)
    return [
        SearchHit(spaces[page.space_id], page, snippet)
        for (page, _, _), snippet in zip(hits, snippets, strict=True)
    ]


def _matching(spaces: dict, query: str, words: list[str], limit: int) -> Iterator:
    """(page, its snippet from the index or None) of the pages holding every word, best
    first: a first batch from the index, a second only when the first ran out."""
    first = min(MAX_SCANNED, limit * 2)
    start = 0
    for size in (first, MAX_SCANNED - first):
        if size <= 0:
            return
        if connection.vendor == "postgresql":
            batch = _full_text(spaces, query)[start : start + size]
            batch = [(page, None) for page in batch]
        else:
            batch = _fts(spaces, words, start, size)
        yield from batch
        if len(batch) < size:
            return
        start += size


def _by_language(spaces: dict) -> dict[str, list[str]]:
    languages = defaultdict(list)
    for space in spaces.values():
        languages[space.search_language].append(space.pk)
    return languages


def _indexed(spaces: dict) -> QuerySet:
    """The spaces' current page versions, without what a search does not show."""
    return current_pages(list(spaces)).defer("body")


def _full_text(spaces: dict, query: str) -> QuerySet:
    """PostgreSQL: the pages whose vectors match ``query`` (a web search), ranked in the
    query: per search language, its spaces' rows through the GIN index."""
    from django.contrib.postgres.search import SearchQuery, SearchRank

    matched, ranks = Q(), []
    for language, ids in _by_language(spaces).items():
        wanted = SearchQuery(query, search_type="websearch", config=language)
        matched |= Q(space_id__in=ids, search_vector=wanted)
        ranks.append(When(space_id__in=ids, then=SearchRank(F("search_vector"), wanted)))
    rank = ranks[0].result if len(ranks) == 1 else Case(*ranks, output_field=FloatField())
    return (
        _indexed(spaces)
        .filter(matched)
        .annotate(rank=rank)
        .order_by("-rank", "space__title", "position", "path")
    )


def _fts(spaces: dict, words: list[str], start: int, size: int) -> list[tuple[Page, str]]:
    """SQLite: the pages whose FTS5 rows hold every word, ranked by bm25 (titles first), with
    FTS5's snippet of their text."""
    terms = [word for word in words if re.search(r"\w", word)]
    if not terms:
        return []
    match = " ".join('"{}"'.format(term.replace('"', '""')) for term in terms)
    ids = list(spaces)
    sql = (
        f"SELECT p.id, snippet({FTS_TABLE}, 2, %s, %s, %s, 24) FROM {FTS_TABLE} "  # noqa: S608 - names and placeholders only
        f"JOIN docplatform_page p ON p.id = {FTS_TABLE}.page_id "
        "JOIN docplatform_space s ON s.id = p.space_id "
        f"WHERE {FTS_TABLE} MATCH %s AND p.valid_to = %s "
        f"AND p.space_id IN ({', '.join(['%s'] * len(ids))}) "
        f"ORDER BY bm25({FTS_TABLE}, 0, 10.0, 1.0), s.title, p.position, p.path "
        "LIMIT %s OFFSET %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [_MARK, _UNMARK, "…", match, CURRENT, *ids, size, start])
        rows = cursor.fetchall()
    pages = _indexed(spaces).in_bulk([pk for pk, _ in rows])
    return [(pages[pk], snippet) for pk, snippet in rows if pk in pages]


def _matches(text: str, query: str, space: Space) -> bool:
    """Whether ``text`` matches the query as the index's search does."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT to_tsvector(%s::regconfig, %s) @@ websearch_to_tsquery(%s::regconfig, %s)",
                [space.search_language, text, space.search_language, query],
            )
            return bool(cursor.fetchone()[0])
    folded = text.casefold()
    return all(word.casefold() in folded for word in query.split())


def _holding_most_words(spaces: dict, words: list[str], at_least: int) -> QuerySet:
    """Pages holding at least ``at_least`` of ``words``, the most first: each word found as
    the search boxes find it on PostgreSQL (stemmed, in the stored vector, through its index);
    on SQLite in the title or Markdown, case-insensitively."""
    pages = _indexed(spaces)
    if connection.vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchRank

        holds = defaultdict(list)  # word -> its matches, one per search language
        matched, ranks = Q(), []
        for language, ids in _by_language(spaces).items():
            queries = [SearchQuery(word, config=language) for word in words]
            anyone = queries[0]
            for wanted in queries[1:]:
                anyone |= wanted
            matched |= Q(space_id__in=ids, search_vector=anyone)
            ranks.append(When(space_id__in=ids, then=SearchRank(F("search_vector"), anyone)))
            for word, wanted in zip(words, queries, strict=True):
                holds[word].append(Q(space_id__in=ids, search_vector=wanted))
        whens = [When(Q(*options, _connector=Q.OR), then=1) for options in holds.values()]
        rank = ranks[0].result if len(ranks) == 1 else Case(*ranks, output_field=FloatField())
        pages = pages.filter(matched).annotate(rank=rank)
        tie_break = ["-rank"]
    else:
        whens = [When(Q(title__icontains=word) | Q(body__icontains=word), then=1) for word in words]
        in_title = Q()
        for word in words:
            in_title |= Q(title__icontains=word)
        pages = pages.alias(
            title_first=Case(When(in_title, then=0), default=1, output_field=IntegerField())
        )
        tie_break = ["title_first"]
    held = sum(
        (Case(when, default=0, output_field=IntegerField()) for when in whens),
        start=Value(0),
    )
    return (
        pages.alias(held=held)
        .filter(held__gte=at_least)
        .order_by("-held", *tie_break, "space__title", "position", "path")
    )


def _snippets(hits: list, spaces: dict, query: str, words: list[str], *, headline: bool):
    """Each hit's snippet: the index's (FTS5), else PostgreSQL's ``ts_headline`` of the text
    its reader sees (all hits in one statement), else found here (a conversation's words)."""
    texts = [text for _, text, _ in hits]
    if headline and connection.vendor == "postgresql" and hits:
        languages = [spaces[page.space_id].search_language for page, _, _ in hits]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT ts_headline(h.language::regconfig, h.body, "
                "websearch_to_tsquery(h.language::regconfig, %s), %s) "
                "FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS h(body, language, n) "
                "ORDER BY h.n",
                [query, _HEADLINE, texts, languages],
            )
            marked = [row[0] for row in cursor.fetchall()]
        return [_pieces(line, text) for line, text in zip(marked, texts, strict=True)]
    return [
        _pieces(snippet, text) if snippet is not None else _snippet(text, words)
        for (_, _, snippet), text in zip(hits, texts, strict=True)
    ]


_UNMARKED = str.maketrans("", "", _MARK + _UNMARK)


def _pieces(marked: str, text: str) -> tuple[str, ...]:
    """A snippet whose found words are between _MARK and _UNMARK as pieces alternately plain
    and found; "…" where it does not start or end the page's ``text``."""
    head, *rest = marked.split(_MARK)
    pieces = [head]
    for part in rest:
        found, _, after = part.partition(_UNMARK)
        pieces += [found, after]
    plain = "".join(pieces)
    if plain and not plain.startswith("…") and not text.startswith(plain[:40]):
        pieces[0] = "…" + pieces[0]
    if plain and not plain.endswith("…") and not text.endswith(plain[-40:]):
        pieces[-1] += "…"
    return tuple(pieces)


def _snippet(text: str, words: list[str]) -> tuple[str, str, str]:
    """Up to SNIPPET_LENGTH characters of ``text`` around the first place a word of the query
    starts (stemmed matches start with the same letters), else its beginning."""
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
