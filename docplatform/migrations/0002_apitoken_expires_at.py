from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("docplatform", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(
                blank=True, help_text="When the token stops working; empty: never.", null=True
            ),
        ),
    ]
