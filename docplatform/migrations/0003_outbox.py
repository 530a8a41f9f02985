"""The outbox moves into the host, step 2: Delivery and DrainRequest become the docplatform
app's models. State only: integrations 0009 renamed their tables, which keep every row."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("docplatform", "0002_apitoken_expires_at"),
        ("integrations", "0009_outbox_tables_to_docplatform"),
    ]

    state_operations = [
        migrations.CreateModel(
            name="Delivery",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                (
                    "consumer",
                    models.CharField(help_text="The registered consumer's name.", max_length=16),
                ),
                ("event_uuid", models.UUIDField(help_text="The payload's eventId.", unique=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("retrying", "Retrying"),
                            ("succeeded", "Succeeded"),
                            ("failed", "Failed"),
                            ("cancelled", "Cancelled"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                (
                    "attempts",
                    models.PositiveIntegerField(
                        default=0, help_text="Attempts in the current chain."
                    ),
                ),
                (
                    "chain",
                    models.PositiveIntegerField(
                        default=1,
                        help_text="Bumped by each manual redelivery, which starts the attempts anew.",
                    ),
                ),
                ("queued_at", models.DateTimeField(blank=True, null=True)),
                ("lease_expires_at", models.DateTimeField(blank=True, null=True)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.TextField(blank=True)),
                (
                    "duration_ms",
                    models.PositiveIntegerField(
                        blank=True, help_text="How long the last attempt took.", null=True
                    ),
                ),
                (
                    "outcome",
                    models.CharField(
                        blank=True, help_text="What the consumer did.", max_length=200
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("completed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "event",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="docplatform.event",
                    ),
                ),
                (
                    "installation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="integrations.installation",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["status", "queued_at"], name="delivery_open_idx")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("event", "installation"), name="one_delivery_per_event"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="DrainRequest",
            fields=[
                ("consumer", models.CharField(max_length=16, primary_key=True, serialize=False)),
                ("requested_at", models.DateTimeField(blank=True, null=True)),
            ],
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations),
    ]
