"""Search that reads an index (``docplatform.search_index``): each space's search language,
each page version's search vector with a GIN index over the current versions' on PostgreSQL,
and on SQLite an FTS5 table of the versions; both filled for the versions there are."""

import django.contrib.postgres.search
from django.db import migrations, models

import docplatform.models

CURRENT = 2**31 - 1
FTS_TABLE = "docplatform_page_search"


def index_existing(apps, schema_editor):
    from docplatform import search_index

    Space = apps.get_model("docplatform", "Space")
    Page = apps.get_model("docplatform", "Page")
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        # A row (its Markdown, HTML and vector: 3.5 KB for 1 KB of text) is larger than
        # PostgreSQL keeps inline, and it moves the largest value out of line: the vector.
        # Ranking thousands of matches would then fetch each from the TOAST table; MAIN keeps
        # the vector in the row and moves the Markdown and HTML out (only hits read them).
        schema_editor.execute(
            "ALTER TABLE docplatform_page ALTER COLUMN search_vector SET STORAGE MAIN"
        )
        schema_editor.execute(
            "CREATE INDEX page_search_idx ON docplatform_page USING gin (search_vector) "
            f"WHERE valid_to = {CURRENT}"
        )
    elif vendor == "sqlite":
        schema_editor.execute(
            f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(page_id UNINDEXED, title, body, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
    else:
        return
    for space in Space.objects.only("pk", "search_language").iterator():
        pages = Page.objects.filter(space_id=space.pk).only(*search_index.FILL_FIELDS)
        if vendor == "postgresql":
            search_index.vectors_fill(pages.iterator(), space.search_language)
            continue
        rows = [(page.pk, page.title, search_index.page_text(page)) for page in pages.iterator()]
        insert = f"INSERT INTO {FTS_TABLE} (page_id, title, body) VALUES (%s, %s, %s)"  # noqa: S608
        with schema_editor.connection.cursor() as cursor:
            cursor.executemany(insert, rows)


def drop_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS page_search_idx")
    elif vendor == "sqlite":
        schema_editor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


class Migration(migrations.Migration):
    dependencies = [
        ("docplatform", "0024_event_cursor_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="space",
            name="search_language",
            field=models.CharField(
                default=docplatform.models.default_search_language,
                editable=False,
                help_text="PostgreSQL's text search configuration of its pages (english, "
                "german, simple...).",
                max_length=63,
            ),
        ),
        migrations.AddField(
            model_name="page",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(editable=False, null=True),
        ),
        migrations.RunPython(index_existing, drop_index),
    ]
