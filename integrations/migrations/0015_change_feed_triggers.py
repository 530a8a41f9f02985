"""The tables a public endpoint's call reads (``kept_installations``) tell the change feed
(``docplatform.change_feed``) of their changes: an installation's row (``installation:id``),
its selected spaces (``installation:`` the installation's id), an integration's row
(``integration:id``); a ``TRUNCATE`` of any of them, everything. PostgreSQL only."""

from django.db import migrations

from docplatform.change_feed import triggers_create, triggers_drop

#: (table, kind, column) of each row trigger.
TRIGGERS = (
    ("integrations_installation", "installation", "id"),
    ("integrations_installation_selected_spaces", "installation", "installation_id"),
    ("integrations_integration", "integration", "id"),
)


def create(apps, schema_editor):
    triggers_create(schema_editor, TRIGGERS)


def drop(apps, schema_editor):
    triggers_drop(schema_editor, TRIGGERS)


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0014_listing_review"),
        ("docplatform", "0026_change_feed"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
