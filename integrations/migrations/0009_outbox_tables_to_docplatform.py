"""The outbox moves into the host (docplatform.events), step 1 of 3: its tables are renamed
to the docplatform app's names, keeping every row. Step 2 (docplatform 0003) gives the models
to the docplatform app, step 3 (webhooks 0002, then integrations 0010) points the attempt log
at them and drops them from this app's state. Each step only renames or moves state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0008_installation_granted_scopes"),
    ]

    operations = [
        migrations.AlterModelTable(name="delivery", table="docplatform_delivery"),
        migrations.AlterModelTable(name="drainrequest", table="docplatform_drainrequest"),
    ]
