"""Keys a Citus cluster can distribute by org_id (core.distribution): UNIQUE (id, org_id) on every tenant
table of this app, and composite foreign keys `(x_id, org_id) REFERENCES parent (id, org_id)` in place of
Django's single-column ones between tenant tables.

The project list of a restricted key (the table Django made for ApiKey.projects) becomes the model
ApiKeyProject on the same table and gains the key's org_id, filled from the key; a row whose project is
in another org than its key stops the migration (the composite keys would refuse it anyway)."""

import django.db.models.deletion
from django.db import migrations, models

from core.distribution import composite_fk
from core.rls import tenant_policy

MISMATCHED_KEY_PROJECTS = """
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM projects_apikey_projects kp JOIN projects_apikey k ON k.id = kp.apikey_id
             JOIN projects_project p ON p.id = kp.project_id WHERE p.org_id <> k.org_id) THEN
    RAISE EXCEPTION 'projects_apikey_projects: an API key lists a project of another organization';
  END IF;
END $$;
"""

FOREIGN_KEYS = [
    ("projects_projectmembership", "project_id", "projects_project"),
    ("projects_apikey_projects", "apikey_id", "projects_apikey"),
    ("projects_apikey_projects", "project_id", "projects_project"),
]


def id_org(model: str, table: str) -> migrations.AddConstraint:
    return migrations.AddConstraint(
        model_name=model, constraint=models.UniqueConstraint(fields=("id", "org"), name=f"{table}_id_org")
    )


class Migration(migrations.Migration):
    dependencies = [("projects", "0003_idempotency_keys")]

    operations = [
        # The through table exists already: tell Django's state about it, touch nothing.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiKeyProject",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "apikey",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="projects.apikey",
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="projects.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "projects_apikey_projects",
                        "unique_together": {("apikey", "project")},
                    },
                ),
                migrations.AlterField(
                    model_name="apikey",
                    name="projects",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="api_keys",
                        through="projects.ApiKeyProject",
                        to="projects.project",
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="apikeyproject",
            name="org",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="projects.organization",
            ),
        ),
        migrations.RunSQL(MISMATCHED_KEY_PROJECTS, migrations.RunSQL.noop),
        migrations.RunSQL(
            "UPDATE projects_apikey_projects kp SET org_id = k.org_id FROM projects_apikey k WHERE k.id = kp.apikey_id;",
            migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="apikeyproject",
            name="org",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="projects.organization"
            ),
        ),
        migrations.RunSQL(*tenant_policy("projects_apikey_projects")),
        id_org("orgmembership", "projects_orgmembership"),
        id_org("project", "projects_project"),
        id_org("projectmembership", "projects_projectmembership"),
        id_org("apikey", "projects_apikey"),
        id_org("apikeyproject", "projects_apikey_projects"),
        id_org("idempotencykey", "projects_idempotencykey"),
        # Django's single-column keys between tenant tables go; the composite ones below take their place.
        migrations.AlterField(
            model_name="projectmembership",
            name="project",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="memberships",
                to="projects.project",
            ),
        ),
        migrations.AlterField(
            model_name="apikeyproject",
            name="apikey",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="projects.apikey",
            ),
        ),
        migrations.AlterField(
            model_name="apikeyproject",
            name="project",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="projects.project",
            ),
        ),
    ] + [migrations.RunSQL(*composite_fk(*fk)) for fk in FOREIGN_KEYS]
