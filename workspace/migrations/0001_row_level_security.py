"""Row-level security on every tenant table (core.rls): a row is there only for its own org's scope.

A table added later with an org column gets its policy in its own migration,
`migrations.RunSQL(*tenant_policy("app_table"))`; tests/test_rls.py fails until it has one. Tables
scoped through a parent and without org_id carry no tenant data of their own and have no policy:
projects_apikey_projects (key and project ids, both rows protected), guardian's object permissions
(account, permission and object id), and the organizations (name and slug)."""

from django.db import migrations

from core.rls import tenant_policy

TENANT_TABLES = [
    "projects_orgmembership",
    "projects_project",
    "projects_projectmembership",
    "projects_apikey",
    "memory_memoryitem",
    "memory_memoryrevision",
    "memory_extractionjob",
    "memory_injectionlog",
    "memory_embeddingconfig",
    "memory_llmconfig",
    "memory_reembedjob",
    "profiles_userprofile",
    "profiles_projectprofile",
    "profiles_profilerevision",
    "checkpoints_session",
    "checkpoints_message",
    "checkpoints_checkpoint",
    "checkpoints_checkpointarchive",
]

# An account finds its own memberships in every org (to pick one) before an org is bound.
OWN_MEMBERSHIP = "account_id = NULLIF(current_setting('engram.account_id', true), '')::bigint"


# Under a policy PostgreSQL evaluates a query's own conditions after the policy's unless their functions
# are leakproof, so a condition that is not cannot drive an index: `search_tokens @@ query` (GIN) and
# InjectionLog's `memory_ids @> ...` (GIN) became scans of the org's rows (240 ms instead of 0.06 ms for
# a keyword lookup on 12,000 rows, bench/search_scale.py). Neither function raises on stored values or
# has side effects; only a superuser may say so, so an owner that is not one skips this (README).
LEAKPROOF = ["pg_catalog.ts_match_vq(tsvector, tsquery)", "pg_catalog.arraycontains(anyarray, anyarray)"]


def leakproof(marked: bool) -> str:
    alter = " ".join(f"ALTER FUNCTION {f} {'' if marked else 'NOT '}LEAKPROOF;" for f in LEAKPROOF)
    return f"DO $$ BEGIN IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN {alter} END IF; END $$;"


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0001_initial"),
        ("memory", "0001_initial"),
        ("profiles", "0001_initial"),
        ("checkpoints", "0002_checkpoint_parent_ref"),
    ]

    operations = [migrations.RunSQL(*tenant_policy(table)) for table in TENANT_TABLES] + [
        migrations.RunSQL(
            f"CREATE POLICY own_memberships ON projects_orgmembership FOR SELECT USING ({OWN_MEMBERSHIP});",
            "DROP POLICY own_memberships ON projects_orgmembership;",
        ),
        migrations.RunSQL(leakproof(True), leakproof(False)),
    ]
