import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0010_outbox_models_moved"),
        ("webhooks", "0004_endpoint_state_bulk_redelivery"),
    ]

    operations = [
        migrations.CreateModel(
            name="EndpointThrottle",
            fields=[
                (
                    "installation",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="webhook_throttle",
                        serialize=False,
                        to="integrations.installation",
                    ),
                ),
                ("tokens", models.FloatField(default=0)),
                ("refilled_at", models.DateTimeField(blank=True, null=True)),
                (
                    "not_before",
                    models.DateTimeField(
                        blank=True,
                        help_text="The receiver asked (429 Retry-After) to wait until then.",
                        null=True,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="EndpointLease",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.CharField(max_length=32, unique=True)),
                ("expires_at", models.DateTimeField()),
                (
                    "installation",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="integrations.installation",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["installation", "expires_at"], name="webhooks_lease_expiry"
                    )
                ],
            },
        ),
    ]
