"""Versions keep their code as a bundle (the script and the modules beside it) and its hash.

Existing versions get a one-file bundle made from their script; nothing is lost."""

import hashlib
import json

from django.db import migrations, models


def script_to_bundle(apps, schema_editor):
    IntegrationVersion = apps.get_model("integrations", "IntegrationVersion")
    for version in IntegrationVersion.objects.exclude(script=None).iterator():
        if not version.script_path:
            continue
        source = bytes(version.script).decode("utf-8")
        document = {"files": {version.script_path: source}, "script": version.script_path}
        data = json.dumps(document, sort_keys=True, ensure_ascii=False).encode()
        IntegrationVersion.objects.filter(pk=version.pk).update(
            bundle=data, bundle_hash=hashlib.sha256(data).hexdigest()
        )


def bundle_to_script(apps, schema_editor):
    IntegrationVersion = apps.get_model("integrations", "IntegrationVersion")
    for version in IntegrationVersion.objects.exclude(bundle=None).iterator():
        document = json.loads(bytes(version.bundle))
        IntegrationVersion.objects.filter(pk=version.pk).update(
            script=document["files"][document["script"]].encode()
        )


class Migration(migrations.Migration):
    dependencies = [("integrations", "0005_drainrequest")]

    operations = [
        migrations.AddField(
            model_name="integrationversion",
            name="bundle",
            field=models.BinaryField(
                blank=True,
                help_text="The code: the script and the Python modules beside it (docplatform_sdk.codebundle, canonical JSON).",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="integrationversion",
            name="bundle_hash",
            field=models.CharField(
                blank=True, help_text="SHA-256 of the bundle: the runtime checks it.", max_length=64
            ),
        ),
        migrations.AlterField(
            model_name="integrationversion",
            name="script_path",
            field=models.CharField(
                blank=True,
                help_text="The entry module of the code; empty: no code.",
                max_length=300,
            ),
        ),
        migrations.RunPython(script_to_bundle, bundle_to_script),
        migrations.RemoveField(model_name="integrationversion", name="script"),
    ]
