"""The outbox moves into the host, step 3: the attempt log points at docplatform's Delivery.
State only: the database's foreign key already follows the renamed table."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_initial"),
        ("docplatform", "0003_outbox"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="deliveryattempt",
                    name="delivery",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="attempts_log",
                        to="docplatform.delivery",
                    ),
                ),
            ]
        ),
    ]
