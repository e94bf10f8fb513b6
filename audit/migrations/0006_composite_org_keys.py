"""Keys a Citus cluster can distribute by org_id (core.distribution): UNIQUE (id, org_id) on every tenant
table of this app, and composite foreign keys `(x_id, org_id) REFERENCES parent (id, org_id)` in place of
Django's single-column ones between tenant tables (deferred like Django's; a null key is not checked)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.distribution import composite_fk

FOREIGN_KEYS = [
    ("audit_auditevent", "actor_key_id", "projects_apikey"),
    ("audit_auditevent", "project_id", "projects_project"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0005_split_and_webhook_actions"),
        ("projects", "0004_composite_org_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditevent",
            name="actor_key",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="projects.apikey",
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="project",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="projects.project",
            ),
        ),
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="audit_auditevent_id_org"),
        ),
    ] + [migrations.RunSQL(*composite_fk(*fk)) for fk in FOREIGN_KEYS]
