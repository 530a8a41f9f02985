"""The rows a personal API token's check reads (``selectors.kept_tokens``) tell the change feed
(``docplatform.change_feed``) of their changes: a token's row (``apitoken:id``: revoked,
expired, used, deleted) and its user's (``user:id``: made inactive, deleted); a ``TRUNCATE``
of either, everything. PostgreSQL only."""

from django.conf import settings
from django.db import migrations

from docplatform.change_feed import triggers_create, triggers_drop


def _triggers(apps):
    user = apps.get_model(settings.AUTH_USER_MODEL)
    return (
        (apps.get_model("docplatform", "ApiToken")._meta.db_table, "apitoken", "id"),
        (user._meta.db_table, "user", user._meta.pk.column),
    )


def create(apps, schema_editor):
    triggers_create(schema_editor, _triggers(apps))


def drop(apps, schema_editor):
    triggers_drop(schema_editor, _triggers(apps))


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("docplatform", "0027_delivery_attempt_started"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
