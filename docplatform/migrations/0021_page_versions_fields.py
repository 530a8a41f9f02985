"""Page versions (1 of 3): the columns a page version and a numbered revision need, beside the
old ones (``0022`` fills them, ``0023`` drops the per-revision copies' column)."""

import django.db.models.deletion
from django.db import migrations, models

CURRENT = 2**31 - 1


class Migration(migrations.Migration):
    dependencies = [
        ("docplatform", "0020_event_test_flag"),
    ]

    operations = [
        migrations.AddField(
            model_name="revision",
            name="number",
            field=models.PositiveIntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="revision",
            name="page_count",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="page",
            name="space",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="page_versions",
                to="docplatform.space",
            ),
        ),
        migrations.AddField(
            model_name="page",
            name="valid_from",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="page",
            name="valid_to",
            field=models.PositiveIntegerField(default=CURRENT),
        ),
        migrations.AlterField(
            model_name="page",
            name="position",
            field=models.CharField(default="5", max_length=255),
        ),
        # Nullable before it goes (0023), so that it can come back on rows (backwards).
        migrations.AlterField(
            model_name="page",
            name="revision",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="pages",
                to="docplatform.revision",
            ),
        ),
    ]
