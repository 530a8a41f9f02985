"""The trigger function of ``docplatform.change_feed``: a table's trigger
``docplatform_notify_change(kind, column)`` sends ``kind:value`` (the written row's
``column``) on the feed's channel; after a ``TRUNCATE``, ``*``. PostgreSQL only: SQLite has
no feed."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION docplatform_notify_change() RETURNS trigger AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('docplatform_changes', '*');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('docplatform_changes', TG_ARGV[0] || ':' || (to_jsonb(OLD) ->> TG_ARGV[1]));
    ELSE
        PERFORM pg_notify('docplatform_changes', TG_ARGV[0] || ':' || (to_jsonb(NEW) ->> TG_ARGV[1]));
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
DROP = "DROP FUNCTION IF EXISTS docplatform_notify_change()"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("docplatform", "0025_page_search"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
