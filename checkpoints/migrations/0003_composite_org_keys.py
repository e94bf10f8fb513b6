"""Keys a Citus cluster can distribute by org_id (core.distribution): UNIQUE (id, org_id) on every tenant
table of this app, and composite foreign keys `(x_id, org_id) REFERENCES parent (id, org_id)` in place of
Django's single-column ones between tenant tables (deferred like Django's; a null key is not checked)."""

import django.db.models.deletion
from django.db import migrations, models

from core.distribution import composite_fk

FOREIGN_KEYS = [
    ("checkpoints_session", "project_id", "projects_project"),
    ("checkpoints_message", "session_id", "checkpoints_session"),
    ("checkpoints_checkpoint", "session_id", "checkpoints_session"),
    ("checkpoints_checkpoint", "parent_id", "checkpoints_checkpoint"),
    ("checkpoints_checkpointarchive", "session_id", "checkpoints_session"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("checkpoints", "0002_checkpoint_parent_ref"),
        ("projects", "0004_composite_org_keys"),
    ]

    operations = [
        migrations.AlterField(
            model_name="checkpoint",
            name="parent",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="children",
                to="checkpoints.checkpoint",
            ),
        ),
        migrations.AlterField(
            model_name="checkpoint",
            name="session",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="checkpoints",
                to="checkpoints.session",
            ),
        ),
        migrations.AlterField(
            model_name="checkpointarchive",
            name="session",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="archived_checkpoints",
                to="checkpoints.session",
            ),
        ),
        migrations.AlterField(
            model_name="message",
            name="session",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="messages",
                to="checkpoints.session",
            ),
        ),
        migrations.AlterField(
            model_name="session",
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
            model_name="checkpoint",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="checkpoints_checkpoint_id_org"),
        ),
        migrations.AddConstraint(
            model_name="checkpointarchive",
            constraint=models.UniqueConstraint(
                fields=("id", "org"), name="checkpoints_checkpointarchive_id_org"
            ),
        ),
        migrations.AddConstraint(
            model_name="message",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="checkpoints_message_id_org"),
        ),
        migrations.AddConstraint(
            model_name="session",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="checkpoints_session_id_org"),
        ),
    ] + [migrations.RunSQL(*composite_fk(*fk)) for fk in FOREIGN_KEYS]
