"""Keys a Citus cluster can distribute by org_id (core.distribution): UNIQUE (id, org_id) on every tenant
table of this app, and composite foreign keys `(x_id, org_id) REFERENCES parent (id, org_id)` in place of
Django's single-column ones between tenant tables (deferred like Django's; a null key is not checked)."""

import django.db.models.deletion
from django.db import migrations, models

from core.distribution import composite_fk

FOREIGN_KEYS = [
    ("profiles_projectprofile", "project_id", "projects_project"),
    ("profiles_profilerevision", "project_id", "projects_project"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("profiles", "0002_profile_sources"),
        ("projects", "0004_composite_org_keys"),
    ]

    operations = [
        migrations.AlterField(
            model_name="profilerevision",
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
            model_name="projectprofile",
            name="project",
            field=models.OneToOneField(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="profile",
                to="projects.project",
            ),
        ),
        migrations.AddConstraint(
            model_name="profilerevision",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="profiles_profilerevision_id_org"),
        ),
        migrations.AddConstraint(
            model_name="projectprofile",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="profiles_projectprofile_id_org"),
        ),
        migrations.AddConstraint(
            model_name="userprofile",
            constraint=models.UniqueConstraint(fields=("id", "org"), name="profiles_userprofile_id_org"),
        ),
    ] + [migrations.RunSQL(*composite_fk(*fk)) for fk in FOREIGN_KEYS]
