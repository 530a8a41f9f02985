"""The indexes of the cursor pages (``docplatform.keyset``): an organization's events and an
installation's deliveries, newest first. On PostgreSQL they are built ``CONCURRENTLY``, so a
deployment with millions of events keeps firing them while the index builds (hence a
migration that is not atomic)."""

from django.db import migrations, models


class AddIndexOnline(migrations.AddIndex):
    """AddIndex, built without blocking writes where the database can."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.add_index(model, self.index, concurrently=True)
        else:
            schema_editor.add_index(model, self.index)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.remove_index(model, self.index, concurrently=True)
        else:
            schema_editor.remove_index(model, self.index)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("docplatform", "0023_page_versions_finish"),
        ("integrations", "0014_listing_review"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="event",
            options={"ordering": ["-created_at", "-id"]},
        ),
        AddIndexOnline(
            model_name="delivery",
            index=models.Index(
                fields=["installation", "created_at", "id"], name="delivery_install_page_idx"
            ),
        ),
        AddIndexOnline(
            model_name="event",
            index=models.Index(
                fields=["organization", "created_at", "id"], name="event_org_page_idx"
            ),
        ),
    ]
