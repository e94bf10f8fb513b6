"""Keys a Citus cluster can distribute by org_id (core.distribution): UNIQUE (id, org_id) on every tenant
table of this app, and composite foreign keys `(x_id, org_id) REFERENCES parent (id, org_id)` in place of
Django's single-column ones between tenant tables (deferred like Django's; a null key is not checked)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.distribution import composite_fk

FOREIGN_KEYS = [
    ("memory_memoryitem", "project_id", "projects_project"),
    ("memory_memoryitem", "superseded_by_id", "memory_memoryitem"),
    ("memory_memoryitem", "created_by_key_id", "projects_apikey"),
    ("memory_memoryrevision", "item_id", "memory_memoryitem"),
    ("memory_extractionjob", "project_id", "projects_project"),
    ("memory_extractionjob", "created_by_key_id", "projects_apikey"),
    ("memory_injectionlog", "project_id", "projects_project"),
    ("memory_memoryfeedback", "memory_id", "memory_memoryitem"),
    ("memory_memoryfeedback", "injection_id", "memory_injectionlog"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0005_store_items"),
        ("projects", "0004_composite_org_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="extractionjob",
            name="created_by_key",
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
            model_name="extractionjob",
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
        migrations.AlterField(
            model_name="injectionlog",
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
        migrations.AlterField(
            model_name="memoryfeedback",
            name="injection",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="feedback_rows",
                to="memory.injectionlog",
            ),
        ),
        migrations.AlterField(
            model_name="memoryfeedback",
            name="memory",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="feedback_rows",
                to="memory.memoryitem",
            ),
        ),
        migrations.AlterField(
            model_name="memoryitem",
            name="created_by_key",
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
            model_name="memoryitem",
            name="project",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="memories",
                to="projects.project",
            ),
        ),
        migrations.AlterField(
            model_name="memoryitem",
            name="superseded_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="supersedes",
                to="memory.memoryitem",
            ),
        ),
        migrations.AlterField(
            model_name="memoryrevision",
            name="item",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="revisions",
                to="memory.memoryitem",
            ),
        ),
        migrations.AddConstraint(
            model_name="embeddingconfig",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_embeddingconfig_id_org"),
        ),
        migrations.AddConstraint(
            model_name="extractionjob",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_extractionjob_id_org"),
        ),
        migrations.AddConstraint(
            model_name="injectionlog",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_injectionlog_id_org"),
        ),
        migrations.AddConstraint(
            model_name="llmconfig",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_llmconfig_id_org"),
        ),
        migrations.AddConstraint(
            model_name="memoryfeedback",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_memoryfeedback_id_org"),
        ),
        migrations.AddConstraint(
            model_name="memoryitem",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_memoryitem_id_org"),
        ),
        migrations.AddConstraint(
            model_name="memorypause",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_memorypause_id_org"),
        ),
        migrations.AddConstraint(
            model_name="memoryrevision",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_memoryrevision_id_org"),
        ),
        migrations.AddConstraint(
            model_name="reembedjob",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_reembedjob_id_org"),
        ),
        migrations.AddConstraint(
            model_name="storeitem",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="memory_storeitem_id_org"),
        ),
    ] + [migrations.RunSQL(*composite_fk(*fk)) for fk in FOREIGN_KEYS]
