"""Keys a Citus cluster can distribute by org_id (core.distribution): UNIQUE (id, org_id) on every tenant
table of this app, and composite foreign keys `(x_id, org_id) REFERENCES parent (id, org_id)` in place of
Django's single-column ones between tenant tables (deferred like Django's; a null key is not checked)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.distribution import composite_fk

FOREIGN_KEYS = [
    ("webhooks_webhookendpoint", "project_id", "projects_project"),
    ("webhooks_webhookdelivery", "endpoint_id", "webhooks_webhookendpoint"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0004_composite_org_keys"),
        ("webhooks", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="webhookdelivery",
            name="endpoint",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="deliveries",
                to="webhooks.webhookendpoint",
            ),
        ),
        migrations.AlterField(
            model_name="webhookendpoint",
            name="project",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="projects.project",
            ),
        ),
        migrations.AddConstraint(
            model_name="webhookdelivery",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="webhooks_webhookdelivery_id_org"),
        ),
        migrations.AddConstraint(
            model_name="webhookendpoint",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="webhooks_webhookendpoint_id_org"),
        ),
    ] + [migrations.RunSQL(*composite_fk(*fk)) for fk in FOREIGN_KEYS]
