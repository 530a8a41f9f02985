"""The outbox moves into the host, last step: Delivery and DrainRequest leave this app's
state (they are docplatform's since docplatform 0003). State only: no table is dropped."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0009_outbox_tables_to_docplatform"),
        ("docplatform", "0003_outbox"),
        ("webhooks", "0002_attempt_delivery_in_docplatform"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Delivery"),
                migrations.DeleteModel(name="DrainRequest"),
            ]
        ),
    ]
