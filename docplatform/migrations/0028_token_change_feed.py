"""The rows a personal API token's check reads (``selectors.kept_tokens``) tell the change feed
(``docplatform.change_feed``) of their changes: a token's row (``apitoken:id``: revoked,
expired, used, deleted) and its user's (``user:id``: made inactive, deleted); a ``TRUNCATE``
of either, everything. PostgreSQL only."""

from django.conf import settings
from django.db import migrations


def _triggers(apps):
    user = apps.get_model(settings.AUTH_USER_MODEL)
    return (
        (apps.get_model("docplatform", "ApiToken")._meta.db_table, "apitoken", "id"),
        (user._meta.db_table, "user", user._meta.pk.column),
    )


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, kind, column in _triggers(apps):
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
    for table, _kind, _column in _triggers(apps):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_changed ON {table}")
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_truncated ON {table}")


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("docplatform", "0027_delivery_attempt_started"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
