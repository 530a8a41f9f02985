import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0006_version_bundle"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="oauthstate",
            name="issued_to",
            field=models.ForeignKey(
                help_text="The member who pressed Connect.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="oauthstate",
            name="consumed_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the flow completed: the property was connected.",
                null=True,
            ),
        ),
    ]
