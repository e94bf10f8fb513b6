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
ANCHOR_TABLE = "projects_project"  # the co-location group of every distributed table is this one's

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
}

# Django's bookkeeping: read and written on the coordinator only (Citus local tables).
COORDINATOR_TABLES: dict[str, str] = {
    "django_session": "sign-in sessions",
    "django_admin_log": "the Django admin's own log of staff changes",
    "django_migrations": "applied migrations",
}

# Tenant tables (org_id, row-level security, UNIQUE (id, org_id), composite keys into them) that a
# cluster keeps as reference tables all the same.
REFERENCE_TENANT_TABLES: dict[str, str] = {
    "projects_apikey": "a key is found by its prefix and hash before its org is known, and both are unique"
    " across orgs; few rows, written on create, revoke and at most once a minute per key (last_used_at)",
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


# ---- the distribution plan, from the database's own catalog ---------------------------------------------

_TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
_TENANT_TABLES = """
SELECT c.conrelid::regclass::text FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.contype = 'f' AND t.relnamespace = current_schema()::regnamespace AND cardinality(c.conkey) = 1
  AND a.attname = %s AND a.attnotnull AND c.confrelid = 'projects_organization'::regclass
"""
# (table, constraint, kind, columns in key order, referenced table) of the schema's constraints.
_CONSTRAINTS = """
SELECT c.conrelid::regclass::text, c.conname, c.contype,
       ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
       CASE WHEN c.contype = 'f' THEN c.confrelid::regclass::text END
FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
WHERE c.contype IN ('p', 'u', 'f') AND t.relnamespace = current_schema()::regnamespace
ORDER BY 1, 2
"""
# Unique indexes that no constraint owns (Citus needs the distribution column in those too).
_BARE_UNIQUE_INDEXES = """
SELECT i.indrelid::regclass::text, i.indexrelid::regclass::text
FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
WHERE i.indisunique AND t.relnamespace = current_schema()::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
"""


class NotReady(Exception):
    """The schema breaks a rule the distribution needs (tests/test_citus_schema.py says which)."""


def plan(cursor) -> tuple[list[str], list[str]]:
    """(prepare, distribute): the SQL that makes this database's tables a Citus cluster's.

    `prepare` is plain PostgreSQL, run as the tables' owner before distributing: a distributed table's
    unique keys must hold the distribution column, so each tenant table's primary key (id) is dropped
    (UNIQUE (id, org_id) stays, and becomes the replica identity that logical replication and shard
    moves need), and its other unique keys gain org_id (the same rule: every such key already names a
    row of one org). `distribute` is Citus' own calls, parents before children: reference tables, then
    every other tenant table distributed by org_id, co-located with projects_project."""
    col = DISTRIBUTION_COLUMN
    cursor.execute(_TABLES)
    tables = [name for (name,) in cursor.fetchall()]
    cursor.execute(_TENANT_TABLES, [col])
    tenants = {name for (name,) in cursor.fetchall()}
    unclassified = set(tables) - tenants - set(REFERENCE_TABLES) - set(COORDINATOR_TABLES)
    if unclassified:
        raise NotReady(f"tables neither tenant nor listed in core.distribution: {sorted(unclassified)}")
    distributed = tenants - set(REFERENCE_TENANT_TABLES)
    reference = (set(REFERENCE_TABLES) | set(REFERENCE_TENANT_TABLES)) & set(tables)
    cursor.execute(_BARE_UNIQUE_INDEXES)
    bare = [index for table, index in cursor.fetchall() if table in distributed]
    if bare:
        raise NotReady(f"unique indexes without a constraint on distributed tables: {sorted(bare)}")
    cursor.execute(_CONSTRAINTS)
    constraints = cursor.fetchall()

    id_org = {t: n for t, n, k, cols, _ in constraints if k == "u" and sorted(cols) == sorted(["id", col])}
    prepare = []
    for table, name, kind, columns, parent in constraints:
        if table not in distributed or col in columns:
            continue
        if kind == "f":
            if parent in distributed:
                raise NotReady(f"{table}.{name}: a foreign key between tenant tables without {col}")
        elif table not in id_org:
            raise NotReady(f"{table}: no UNIQUE (id, {col})")
        elif kind == "p":
            prepare.append(f"ALTER TABLE {table} DROP CONSTRAINT {name};")
            prepare.append(f"ALTER TABLE {table} REPLICA IDENTITY USING INDEX {id_org[table]};")
        else:
            keys = ", ".join([*columns, col])
            prepare.append(
                f"ALTER TABLE {table} DROP CONSTRAINT {name}, ADD CONSTRAINT {name} UNIQUE ({keys});"
            )

    parents: dict[str, set[str]] = {t: set() for t in tables}
    for table, _, kind, _, parent in constraints:
        if kind == "f" and parent != table:
            parents[table].add(parent)
    distribute = [f"SELECT create_reference_table('{t}');" for t in _parents_first(reference, parents)]
    # Every distributed table in one co-location group, the first one's; projects_project comes first.
    first = ANCHOR_TABLE
    for table in [first, *(t for t in _parents_first(distributed, parents) if t != first)]:
        colocate = "'none'" if table == first else f"'{first}'"
        distribute.append(
            f"SELECT create_distributed_table('{table}', '{col}', colocate_with => {colocate});"
        )
    return prepare, distribute


def _parents_first(group: set[str], parents: dict[str, set[str]]) -> list[str]:
    """The group's tables, each after the tables of the group it points at (alphabetical otherwise)."""
    done: list[str] = []
    left = sorted(group)
    while left:
        ready = [t for t in left if not (parents[t] & set(left)) - {t}]
        if not ready:
            raise NotReady(f"foreign keys in a cycle: {left}")
        done += ready
        left = [t for t in left if t not in ready]
    return done
