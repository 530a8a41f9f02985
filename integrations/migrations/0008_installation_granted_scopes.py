"""Installations keep the scopes their organization granted.

Existing installations are taken to have granted their integration's current scopes: they
keep working exactly as before, and only a later version asking for more waits for an admin."""

from django.db import migrations, models


def grant_current_scopes(apps, schema_editor):
    Installation = apps.get_model("integrations", "Installation")
    Integration = apps.get_model("integrations", "Integration")
    for integration_id, scopes in Integration.objects.values_list("id", "scopes").iterator():
        Installation.objects.filter(integration_id=integration_id).update(
            granted_scopes=list(scopes or [])
        )


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0006_version_bundle"),
        # The OAuth state migration beside it: kept as the one leaf of the graph.
        ("integrations", "0007_oauthstate_issued_to"),
    ]

    operations = [
        migrations.AddField(
            model_name="installation",
            name="granted_scopes",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="The scopes the organization granted (at install, and by an admin's "
                "approval); the installation acts with these of its integration's scopes only "
                "(integrations.policies.effective_scopes).",
            ),
        ),
        migrations.RunPython(grant_current_scopes, migrations.RunPython.noop),
    ]
