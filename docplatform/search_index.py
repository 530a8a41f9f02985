"""What search finds of a page version, written with it (README, "Search"): its title and the
text its readers see, every adaptive section's text included, never a block's fence (its
integration, block and props: JSON nobody reads) nor a section's condition. A search reads this
index, never the pages' Markdown, so it costs what the index lookup costs, whatever the size of
the spaces.

- PostgreSQL: the version's ``search_vector``, its title weighted A and its text B, in its
  space's ``search_language``, computed by the database in the INSERT that writes the versions
  (one statement per commit, however many pages it writes); a GIN index over the current
  versions' vectors (migration 0025).
- SQLite (the embedded default): a row of the FTS5 table ``FTS_TABLE`` (the version's id, its
  title and text, words stemmed as English), inserted in one more statement per commit.

A version that stops being current keeps its vector or row: searches join on the current
versions. A space's FTS5 rows go with it (``space_rows_delete``). What a page shows depends on
the renderer (``markdown.RENDERER_VERSION``): after a deploy whose renderer shows a page's text
otherwise, ``space_search_reindex`` (``manage.py search_reindex``) indexes the current pages
again from what the new one shows."""

from django.conf import settings
from django.core import checks
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import Value

from .content import rendered
from .markdown import RENDERER_VERSION
from .models import CURRENT, Page, Space
from .rendering import Document, document_from_json, plain_text

#: SQLite's full-text table of page versions (migration 0025 makes it on SQLite only).
FTS_TABLE = "docplatform_page_search"
#: Its columns: the version's id (not indexed), then the two that are, in this order.
FTS_COLUMNS = ("page_id", "title", "body")


def postgresql() -> bool:
    return connection.vendor == "postgresql"


def sqlite() -> bool:
    return connection.vendor == "sqlite"


def document_text(document: Document) -> str:
    """What search finds of a rendered page: the text of every section of it, as the
    organization's people read it, without the boxes naming the sections' conditions."""
    return plain_text(document.selected({section.index for section in document.sections}))


def page_text(page: Page) -> str:
    """What search finds of a version (a rendering by an older renderer is rendered again)."""
    if page.rendered_with == RENDERER_VERSION:
        return document_text(document_from_json(page.html, page.outline))
    fields = rendered(page.body)
    return document_text(document_from_json(fields["html"], fields["outline"]))


def vector(title: str, text: str, language: str):
    """The search vector of a page with ``title`` and ``text`` (an expression the database
    computes: ``setweight(to_tsvector(language, title), 'A') || ...'B'``)."""
    from django.contrib.postgres.search import SearchVector

    return SearchVector(Value(title), weight="A", config=language) + SearchVector(
        Value(text), weight="B", config=language
    )


def versions_insert(versions: list[Page], language: str) -> None:
    """Insert the page ``versions`` (new rows of one space, whose ``search_language`` is
    ``language``) with what search finds of them: on PostgreSQL their vectors in the same
    INSERT; on SQLite their FTS5 rows in one more statement."""
    texts = [page_text(version) for version in versions]
    if postgresql():
        for version, text in zip(versions, texts, strict=True):
            version.search_vector = vector(version.title, text, language)
    Page.objects.bulk_create(versions)
    if postgresql():
        for version in versions:  # the expression is not a value to keep on the object
            version.search_vector = None
    elif sqlite() and versions:
        _fts_insert([(v.pk, v.title, text) for v, text in zip(versions, texts, strict=True)])


def _fts_insert(rows: list[tuple[str, str, str]]) -> None:
    columns = ", ".join(FTS_COLUMNS)
    with connection.cursor() as cursor:
        insert = f"INSERT INTO {FTS_TABLE} ({columns}) VALUES (%s, %s, %s)"  # noqa: S608
        cursor.executemany(insert, rows)


def space_rows_delete(space: Space) -> None:
    """Forget the FTS5 rows of a space about to be deleted (PostgreSQL's vectors go with its
    versions' rows). It reads the whole table (its page ids are not indexed): a space is
    deleted rarely."""
    if sqlite():
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {FTS_TABLE} WHERE page_id IN "  # noqa: S608 - names and placeholders only
                "(SELECT id FROM docplatform_page WHERE space_id = %s)",
                [space.pk],
            )


def search_languages() -> list[str]:
    """The text search configurations a space may be indexed with: PostgreSQL's; none on
    SQLite, whose index stems English whatever a space says."""
    if not postgresql():
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT cfgname FROM pg_ts_config ORDER BY cfgname")
        return [row[0] for row in cursor.fetchall()]


def language_problem(language: str) -> str | None:
    """Why ``language`` is not a text search configuration of this database, or None (on
    SQLite, which stems English whatever it is set to, any name)."""
    if not postgresql():
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_ts_config WHERE cfgname = %s", [language])
        if cursor.fetchone() is None:
            return f"{language!r} is not a text search configuration of the database"
    return None


@checks.register(checks.Tags.database)
def search_language_exists(app_configs=None, databases=None, **kwargs) -> list[checks.Error]:
    """``SEARCH_LANGUAGE`` must be a text search configuration of the database: every page
    of a space made with another would fail to be written. Checked where the database is
    (``migrate``, ``check --database default``)."""
    if not databases:
        return []
    try:
        problem = language_problem(settings.SEARCH_LANGUAGE)
    except DatabaseError:  # no database to ask: migrate says so itself
        return []
    if problem is None:
        return []
    return [
        checks.Error(
            f"SEARCH_LANGUAGE: {problem}, so no page of a new space could be written.",
            hint="Set SEARCH_LANGUAGE to a name SELECT cfgname FROM pg_ts_config lists, "
            "such as english or simple.",
            id="docplatform.E110",
        )
    ]


@transaction.atomic
def space_search_language_set(*, space: Space, language: str) -> None:
    """Set the space's search language and index its current pages again with it (older
    versions are never searched). ValidationError names ``search_language`` for a
    configuration the database does not have."""
    if problem := language_problem(language):
        raise ValidationError({"search_language": [problem]})
    Space.objects.filter(pk=space.pk).update(search_language=language)
    space.search_language = language
    if postgresql():  # SQLite's index stems English whatever the space says
        space_search_reindex(space=space)


@transaction.atomic
def space_search_reindex(*, space: Space) -> int:
    """Index the space's current pages again from what they show now (each rendered again
    when its stored rendering is an older renderer's), in one transaction, ``FILL_BATCH``
    pages at a time; how many."""
    current = Page.objects.filter(space=space, valid_to=CURRENT).only(*FILL_FIELDS)
    indexed = 0

    def pages():
        nonlocal indexed
        for page in current.iterator(chunk_size=FILL_BATCH):
            indexed += 1
            yield page

    if postgresql():
        vectors_fill(pages(), space.search_language)
    elif sqlite():
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {FTS_TABLE} WHERE page_id IN "  # noqa: S608 - names and placeholders only
                "(SELECT id FROM docplatform_page WHERE space_id = %s AND valid_to = %s)",
                [space.pk, CURRENT],
            )
        batch = []
        for page in pages():
            batch.append((page.pk, page.title, page_text(page)))
            if len(batch) == FILL_BATCH:
                _fts_insert(batch)
                batch = []
        _fts_insert(batch)
    return indexed


#: Versions whose vectors one UPDATE sets (``vectors_fill``), and what it reads of them.
FILL_BATCH = 500
FILL_FIELDS = ("pk", "title", "body", "html", "outline", "rendered_with")


def vectors_fill(pages, language: str) -> None:
    """Set the vectors of existing versions (of one space, whose search language is
    ``language``) on PostgreSQL, one UPDATE per ``FILL_BATCH`` of ``pages`` (their
    ``FILL_FIELDS`` read)."""
    batch = []
    for page in pages:
        batch.append((page.pk, page.title, page_text(page), language))
        if len(batch) == FILL_BATCH:
            _vectors_update(batch)
            batch = []
    if batch:
        _vectors_update(batch)


def _vectors_update(batch: list[tuple[str, str, str, str]]) -> None:
    values = ", ".join(["(%s, %s, %s, %s)"] * len(batch))
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE docplatform_page AS p SET search_vector = "  # noqa: S608 - names and placeholders only
            "setweight(to_tsvector(v.language::regconfig, v.title), 'A') || "
            "setweight(to_tsvector(v.language::regconfig, v.body), 'B') "
            f"FROM (VALUES {values}) AS v(id, title, body, language) WHERE p.id = v.id",
            [value for row in batch for value in row],
        )
