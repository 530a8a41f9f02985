"""The tables a public endpoint's call reads (``kept_installations``) tell the change feed
(``docplatform.change_feed``) of their changes: an installation's row (``installation:id``),
its selected spaces (``installation:`` the installation's id), an integration's row
(``integration:id``); a ``TRUNCATE`` of any of them, everything. PostgreSQL only."""

from django.db import migrations

#: (table, kind, column) of each row trigger.
TRIGGERS = (
    ("integrations_installation", "installation", "id"),
    ("integrations_installation_selected_spaces", "installation", "installation_id"),
    ("integrations_integration", "integration", "id"),
)


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, kind, column in TRIGGERS:
        schema_editor.execute(
            f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION docplatform_notify_change('{kind}', '{column}')"
        )
        schema_editor.execute(
            f"CREATE TRIGGER {table}_truncated AFTER TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION docplatform_notify_change()"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, _kind, _column in TRIGGERS:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_changed ON {table}")
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_truncated ON {table}")


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0014_listing_review"),
        ("docplatform", "0026_change_feed"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
