"""How the tables would be spread over a Citus cluster: every tenant table by org_id, the rest replicated.

A tenant table is one whose model has `org = ForeignKey("projects.Organization")`. Each carries, besides
the surrogate id Django needs, `UNIQUE (id, org_id)`, and every foreign key from one tenant table to
another is composite, `(x_id, org_id) REFERENCES parent (id, org_id)`: the org of a row and of the row it
points at are the same by the database's own rule, which is what lets Citus keep both on one shard
(co-location by org_id) and check the key there. Django creates single-column foreign keys, which a
distributed table cannot have; such a field says `db_constraint=False` and its migration adds the
composite key with composite_fk() below.

Every other table is listed here, with the reason it is not distributed: tables a tenant table points at
(accounts, the organizations themselves, content types) become Citus reference tables (a copy on every
node, so a join or a foreign key to them stays on the shard); Django's own bookkeeping stays on the
coordinator. tests/test_citus_schema.py walks the models and the database catalog and fails on a table
that is in neither group, or a tenant table that breaks the rule. docs/scaling.md has the plan.
"""

from __future__ import annotations

DISTRIBUTION_COLUMN = "org_id"

# Tables that are not distributed by org_id, and why (database table names).
REFERENCE_TABLES: dict[str, str] = {
    # The tenants themselves: each tenant table's org_id points here.
    "projects_organization": "the organizations: name, slug and settings; every tenant row points at one",
    # Accounts: rows of several orgs point at them (memberships, created_by, audit actors).
    "auth_user": "accounts; an account can belong to several orgs",
    "auth_group": "Django's groups (unused by Engram's roles)",
    "auth_permission": "Django's permission names",
    "auth_user_groups": "Django's account-group links",
    "auth_user_user_permissions": "Django's per-account permissions (unused)",
    "auth_group_permissions": "Django's per-group permissions (unused)",
    "django_content_type": "Django's model names",
    # guardian's per-project grants mirror projects_projectmembership (projects.services is their one
    # writer): account, permission and the project's id as text, no content and no foreign key to a
    # tenant table. Small, read with the account on every permission check.
    "guardian_userobjectpermission": "per-project grants of accounts (ids only, mirrors project memberships)",
    "guardian_groupobjectpermission": "per-project grants of groups (unused)",
    # Django's bookkeeping, read on the coordinator only.
    "django_session": "sign-in sessions (coordinator only)",
    "django_admin_log": "the Django admin's own log of staff changes (coordinator only)",
    "django_migrations": "applied migrations (coordinator only)",
}


def composite_fk(table: str, column: str, parent: str, *, name: str | None = None) -> tuple[str, str]:
    """(forward, reverse) SQL for migrations.RunSQL: `(column, org_id) REFERENCES parent (id, org_id)`.

    Deferred to the end of the transaction like Django's own foreign keys (Django emulates on_delete in
    Python, deleting or nulling the children before the parent); MATCH SIMPLE, so a null `column` is not
    checked, which keeps SET_NULL and nullable keys working."""
    name = name or f"{table}_{column}_org_fk"
    if len(name) > 63:
        raise ValueError(f"constraint name too long for PostgreSQL: {name}")
    col = DISTRIBUTION_COLUMN
    return (
        f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({column}, {col})"
        f" REFERENCES {parent} (id, {col}) DEFERRABLE INITIALLY DEFERRED;",
        f"ALTER TABLE {table} DROP CONSTRAINT {name};",
    )
