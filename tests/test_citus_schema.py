"""A schema Citus can distribute by org_id (core.distribution, docs/scaling.md): every tenant table carries
org_id and UNIQUE (id, org_id), every foreign key between tenant tables is composite on org_id, every
other table is a listed reference table. The models and the database's own catalog are both walked, so a
new model or a hand-made key that breaks the rule fails here. Citus itself is not installed: these are
the properties its distribution needs, checked on plain PostgreSQL."""

import re
from io import StringIO

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from audit.models import AuditEvent
from checkpoints.models import Checkpoint, CheckpointArchive, Message, Session
from core.distribution import (
    COORDINATOR_TABLES,
    DISTRIBUTION_COLUMN,
    REFERENCE_TABLES,
    REFERENCE_TENANT_TABLES,
    plan,
)
from core.rls.roles import as_owner
from memory.models import InjectionLog, MemoryFeedback, MemoryItem, MemoryRevision
from memory.search.sql import filter_sql, keyword_keys, search_statement
from memory.selectors import MemoryFilters
from profiles.models import ProfileRevision, ProjectProfile
from projects.access import actor_for_account, actor_for_key, system_actor
from projects.models import ApiKey, ApiKeyProject, Organization, Project, ProjectMembership
from projects.services import api_key_create, project_create, project_delete, project_member_add
from webhooks.models import WebhookDelivery, WebhookEndpoint
from workspace.subjects import subject_forget

from .factories import AccountFactory, MemoryItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db


NOT_DISTRIBUTED = {**REFERENCE_TABLES, **COORDINATOR_TABLES}


def is_tenant(model) -> bool:
    return any(
        f.name == "org" and f.is_relation and f.related_model is Organization and not f.null
        for f in model._meta.concrete_fields
    )


def models_by_table() -> dict[str, type]:
    return {
        m._meta.db_table: m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.managed and not m._meta.proxy
    }


def tenant_tables() -> set[str]:
    return {table for table, model in models_by_table().items() if is_tenant(model)}


def catalog(sql: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def constraints(kind: str) -> list[tuple]:
    """(table, name, [columns], referenced table, [referenced columns], deferrable, deferred, validated)
    of every constraint of a kind ('u', 'p', 'f') on the schema's tables, columns in key order."""
    return catalog(
        """
        SELECT c.conrelid::regclass::text, c.conname,
               ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                     JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
               c.confrelid::regclass::text,
               ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                     JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i),
               c.condeferrable, c.condeferred, c.convalidated
        FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
        WHERE c.contype = %s AND t.relnamespace = current_schema()::regnamespace
        """,
        [kind],
    )


def test_every_model_is_either_a_tenant_table_or_a_listed_reference_table():
    tables = models_by_table()
    assert len(tenant_tables()) >= 26
    unclassified = sorted(t for t, m in tables.items() if not is_tenant(m) and t not in NOT_DISTRIBUTED)
    both = sorted(t for t, m in tables.items() if is_tenant(m) and t in NOT_DISTRIBUTED)
    assert unclassified == [], "tables without org that core.distribution does not list"
    assert both == [], "tenant tables listed among the tables without org"
    assert set(REFERENCE_TENANT_TABLES) <= tenant_tables()


def test_every_table_in_the_database_is_classified():
    """The catalog, not only the models: a table made by hand or by a third-party app is caught too."""
    present = {
        name for (name,) in catalog("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    }
    tenants = tenant_tables()
    assert present >= tenants
    assert sorted(present - tenants - set(NOT_DISTRIBUTED)) == []


def test_every_tenant_table_carries_a_not_null_org_id_and_unique_id_org():
    tenants = tenant_tables()
    org_columns = {
        table: nullable
        for table, nullable in catalog(
            "SELECT table_name, is_nullable FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND column_name = %s",
            [DISTRIBUTION_COLUMN],
        )
    }
    assert sorted(t for t in tenants if org_columns.get(t) != "NO") == [], "tenant tables without org_id"
    unique = {(table, tuple(sorted(cols))) for table, _, cols, *_ in constraints("u") + constraints("p")}
    missing = sorted(t for t in tenants if (t, ("id", DISTRIBUTION_COLUMN)) not in unique)
    assert missing == [], "tenant tables without UNIQUE (id, org_id)"


def test_every_foreign_key_between_tenant_tables_is_composite_on_org_and_deferred():
    tenants = tenant_tables()
    bad = []
    for table, name, cols, parent, parent_cols, deferrable, deferred, validated in constraints("f"):
        if table not in tenants:
            assert parent not in tenants, f"{table} (not a tenant table) points at tenant table {parent}"
            continue
        if table in REFERENCE_TENANT_TABLES:
            assert parent not in tenants or parent in REFERENCE_TENANT_TABLES, (table, name, parent)
        if parent not in tenants:
            continue  # a reference table: on every node, any key works
        pairs = dict(zip(cols, parent_cols, strict=True))
        if not (
            len(cols) == 2
            and pairs.get(DISTRIBUTION_COLUMN) == DISTRIBUTION_COLUMN
            and sorted(parent_cols) == ["id", DISTRIBUTION_COLUMN]
            and deferrable
            and deferred
            and validated
        ):
            bad.append((table, name, cols, parent, parent_cols))
    assert bad == [], "foreign keys between tenant tables that are not (x_id, org_id) -> (id, org_id)"


def test_every_relation_between_tenant_models_has_its_composite_key():
    """The other way round: a model's relation to another tenant model (db_constraint=False, as Django's
    own single-column key is not allowed) has the composite key in the database."""
    tenants = tenant_tables()
    keys = {(table, cols[0], parent) for table, _, cols, parent, *_ in constraints("f") if len(cols) == 2}
    expected, missing = set(), []
    for table, model in models_by_table().items():
        if table not in tenants:
            continue
        for field in model._meta.concrete_fields:
            if field.is_relation and field.related_model._meta.db_table in tenants:
                assert not field.db_constraint, f"{table}.{field.column}: Django's single-column key"
                key = (table, field.column, field.related_model._meta.db_table)
                expected.add(key)
                if key not in keys:
                    missing.append(key)
    assert len(expected) >= 23
    assert missing == []


def check_now():
    """Deferred keys are checked at commit; make PostgreSQL check the pending ones at once."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def refused(write) -> None:
    with pytest.raises(IntegrityError, match="_org_fk"), transaction.atomic():
        write()
        check_now()


def test_the_database_refuses_a_row_whose_parent_is_in_another_org(org_a, org_b):
    """Test code sees every org (core.rls.all_orgs), so no policy is in the way: the keys refuse."""
    project_b = ProjectFactory(org=org_b)
    item_a = MemoryItemFactory(org=org_a)
    MemoryRevision.objects.create(org=org_a, item=item_a, item_ref=item_a.pk, number=1, action="add")
    refused(lambda: MemoryItemFactory(org=org_a, project=project_b, scope="project", user_id=""))
    refused(lambda: MemoryItem.objects.filter(pk=item_a.pk).update(project=project_b))
    refused(lambda: MemoryItem.objects.filter(pk=item_a.pk).update(org=org_b))  # its revision stays in A
    refused(
        lambda: MemoryRevision.objects.create(
            org=org_b, item=item_a, item_ref=item_a.pk, number=2, action="add"
        )
    )
    session = Session.objects.create(org=org_a, session_id="s1", user_id="alice")
    refused(
        lambda: Message.objects.create(org=org_b, session=session, user_id="alice", role="human", content="x")
    )
    key, _ = api_key_create(org=org_a, name="agent")
    refused(lambda: ApiKeyProject.objects.create(org=org_a, apikey=key, project=project_b))
    refused(lambda: ProjectMembership.objects.create(org=org_a, project=project_b, account=AccountFactory()))
    # The same rows within one org are accepted.
    with transaction.atomic():
        Message.objects.create(org=org_a, session=session, user_id="alice", role="human", content="x")
        MemoryRevision.objects.create(org=org_a, item=item_a, item_ref=item_a.pk, number=2, action="add")
        check_now()


@pytest.fixture
def populated(alice, alice_actor, bob, org_a):
    """One of every row that points at another tenant row, all in org A, as the services leave them."""
    project = project_create(actor=alice_actor, name="Atlas", slug="atlas")
    key, _ = api_key_create(org=org_a, name="agent", projects=[project])
    item = MemoryItemFactory(org=org_a, project=project, scope="project", user_id="", created_by_key=key)
    mine = MemoryItemFactory(org=org_a, user_id="alice", created_by_key=key)
    newer = MemoryItemFactory(org=org_a, user_id="alice")
    MemoryItem.objects.filter(pk=mine.pk).update(superseded_by=newer, status="superseded")
    for number, target in enumerate([item, mine, newer], start=1):
        MemoryRevision.objects.create(org=org_a, item=target, item_ref=target.pk, number=number, action="add")
    injection = InjectionLog.objects.create(org=org_a, user_id="alice", project=project, memory_ids=[mine.pk])
    MemoryFeedback.objects.create(
        org=org_a, memory=newer, subject="alice", injection=injection, value="useful"
    )
    MemoryFeedback.objects.create(org=org_a, memory=item, subject="alice", injection=injection, value="wrong")
    session = Session.objects.create(org=org_a, session_id="s1", user_id="alice", project=project)
    Message.objects.create(org=org_a, session=session, user_id="alice", role="human", content="hi")
    parent = Checkpoint.objects.create(org=org_a, session=session, user_id="alice")
    Checkpoint.objects.create(
        org=org_a, session=session, user_id="alice", parent=parent, parent_ref=parent.pk
    )
    CheckpointArchive.objects.create(
        org=org_a, original_id=1, session=session, user_id="alice", payload=b"", created_at=timezone.now()
    )
    ProjectProfile.objects.create(org=org_a, project=project)
    ProfileRevision.objects.create(org=org_a, user_id="alice", project=project)
    endpoint = WebhookEndpoint.objects.create(
        org=org_a, project=project, url="https://hooks.example/a", secret_encrypted="x"
    )
    WebhookDelivery.objects.create(
        org=org_a, endpoint=endpoint, event="memory.created", message_id="msg_1", payload={}
    )
    AuditEvent.objects.create(
        org=org_a,
        actor_kind="key",
        actor_key=key,
        actor_label="agent",
        action="memory.create",
        project=project,
    )
    check_now()
    return project, key


def test_deleting_a_project_still_cascades_and_nulls_under_the_composite_keys(alice, org_a, populated):
    project, key = populated
    project_id = project.pk
    with transaction.atomic():
        project_delete(actor=actor_for_account(alice, org_a), project=project)
        check_now()
    assert not Project.objects.filter(pk=project_id).exists()
    assert not MemoryItem.objects.filter(project_id=project_id).exists()
    assert Session.objects.get(session_id="s1").project_id is None  # SET_NULL
    assert AuditEvent.objects.filter(action="memory.create").get().project_id is None
    assert not ApiKeyProject.objects.filter(apikey=key).exists()
    assert MemoryRevision.objects.filter(item__isnull=True).count() == 1  # the project memory's history stays


def test_forgetting_a_subject_still_works_under_the_composite_keys(alice, org_a, populated):
    with transaction.atomic():
        subject_forget(actor=actor_for_account(alice, org_a), org=org_a, user_id="alice")
        check_now()
    assert not MemoryItem.objects.filter(org=org_a, user_id="alice").exists()
    assert not Session.objects.filter(org=org_a, user_id="alice").exists()


def test_deleting_an_org_and_an_api_key_still_works_under_the_composite_keys(org_a, org_b, populated):
    _, key = populated
    other = MemoryItemFactory(org=org_b)
    with transaction.atomic():
        ApiKey.objects.filter(pk=key.pk).delete()  # SET_NULL on memories, jobs and audit events
        check_now()
    assert not MemoryItem.objects.filter(created_by_key__isnull=False).exists()
    with transaction.atomic():
        Organization.objects.filter(pk=org_a.pk).delete()
        check_now()
    assert list(MemoryItem.objects.values_list("pk", flat=True)) == [other.pk]
    for model in (
        MemoryRevision,
        Session,
        Message,
        Checkpoint,
        WebhookDelivery,
        ProjectProfile,
        ApiKeyProject,
    ):
        assert not model.objects.filter(org_id=org_a.pk).exists(), model


# ---- search on a table distributed by org_id ------------------------------------------------------------

ORG_FILTER = re.compile(r"\borg_id = (\d+)\b")


def scans_of_tenant_tables(plan: dict, tenants: set[str]):
    """(table, the node's conditions) of every scan of a tenant table in an EXPLAIN (FORMAT JSON) plan."""
    if plan.get("Relation Name") in tenants:
        conditions = " ".join(str(plan.get(k, "")) for k in ("Index Cond", "Recheck Cond", "Filter"))
        yield plan["Relation Name"], conditions
    for child in plan.get("Plans", []):
        yield from scans_of_tenant_tables(child, tenants)


def orgs_of_every_scan(sql: str, args: list) -> list[tuple[str, set[str]]]:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, args)
        (plan,) = cursor.fetchone()[0]
    return [
        (table, set(ORG_FILTER.findall(c)))
        for table, c in scans_of_tenant_tables(plan["Plan"], tenant_tables())
    ]


@pytest.mark.parametrize("subject", [True, False], ids=["subject-statement", "index-statement"])
def test_every_read_of_a_search_statement_names_the_org(subject, alice, alice_actor, bob, org_a, org_b):
    """Citus runs a statement on one shard when every distributed table in it is filtered to one value
    of the distribution column: each scan of a tenant table in the search statement's plan (memories,
    and the projects and memberships the access filter reads) carries org_id = the caller's org."""
    project = project_create(actor=alice_actor, name="Atlas", slug="atlas")
    project_member_add(actor=alice_actor, project=project, account=bob, role="viewer")
    key, _ = api_key_create(org=org_a, name="restricted", projects=[project])
    MemoryItemFactory(org=org_a, embedded=True)
    MemoryItemFactory(org=org_b, embedded=True)
    vector = "[" + ",".join(["0.01"] * settings.ENGRAM_EMBEDDING_DIM) + "]"
    actors = {
        "owner": alice_actor,
        "member": actor_for_account(bob, org_a),
        "key": actor_for_key(key),
        "system": system_actor(org_a),
    }
    searches = {
        "subject": MemoryFilters(user_id="alice"),
        "project": MemoryFilters(project=project),
        "subject in project": MemoryFilters(user_id="alice", project=project),
    }
    checked = 0
    for actor_name, actor in actors.items():
        for search_name, filters in searches.items():
            sql, args = search_statement(
                filter_sql(actor, filters),
                org_id=org_a.pk,
                qvec=vector,
                model="m",
                terms=[("note", False), ("coffee", True)],
                candidates=40,
                subject=subject,
                lenders=8,
                keys=keyword_keys(org_a.pk, filters),
            )
            scans = orgs_of_every_scan(sql, args)
            assert scans, (actor_name, search_name)
            unfiltered = [(table, orgs) for table, orgs in scans if orgs != {str(org_a.pk)}]
            assert unfiltered == [], (actor_name, search_name)
            checked += len(scans)
    assert checked >= 24


# ---- the distribution plan (core.distribution.plan, manage.py citus_plan) -------------------------------


def test_the_plan_distributes_every_tenant_table_after_the_tables_it_points_at():
    with connection.cursor() as cursor:
        prepare, distribute = plan(cursor)
    calls = [re.match(r"SELECT (create_\w+)\('(\w+)'", s).groups() for s in distribute]
    distributed = [t for call, t in calls if call == "create_distributed_table"]
    referenced = [t for call, t in calls if call == "create_reference_table"]
    assert sorted(distributed) == sorted(tenant_tables() - set(REFERENCE_TENANT_TABLES))
    assert set(referenced) == (set(REFERENCE_TABLES) | set(REFERENCE_TENANT_TABLES))
    assert distributed[0] == "projects_project"
    order = {t: i for i, t in enumerate(referenced + distributed)}
    for table, _, _, parent, *_ in constraints("f"):
        if table in order and parent in order and parent != table:
            assert order[parent] < order[table], (table, parent)
    assert len(prepare) >= 2 * len(distributed)


@pytest.mark.django_db(transaction=True)
def test_the_plans_postgresql_step_runs_and_the_app_still_writes_and_deletes(org_a, org_b):
    """Step 1 of the plan is plain PostgreSQL: run it (and roll it back), then check that every unique key
    of a table to distribute holds org_id, and that writes, cross-org refusals and cascades still work
    without the single-column primary keys."""
    with connection.cursor() as cursor:
        prepare, distribute = plan(cursor)
    distributed = {re.search(r"'(\w+)'", s).group(1) for s in distribute if "create_distributed_table" in s}
    with as_owner(connection), transaction.atomic():
        with connection.cursor() as cursor:
            for statement in prepare:
                cursor.execute(statement)
        lacking = [
            (table, name, cols)
            for table, name, cols, *_ in constraints("u") + constraints("p")
            if table in distributed and DISTRIBUTION_COLUMN not in cols
        ]
        assert lacking == [], "unique keys without org_id on tables to distribute"
        identity = dict(
            catalog(
                "SELECT relname, relreplident FROM pg_class WHERE relname = ANY(%s)", [sorted(distributed)]
            )
        )
        assert set(identity.values()) == {"i"}, identity
        project = ProjectFactory(org=org_a)
        item = MemoryItemFactory(org=org_a, project=project, scope="project", user_id="")
        MemoryRevision.objects.create(org=org_a, item=item, item_ref=item.pk, number=1, action="add")
        check_now()
        refused(lambda: MemoryItemFactory(org=org_b, project=project, scope="project", user_id=""))
        Project.objects.filter(pk=project.pk).delete()
        check_now()
        assert not MemoryItem.objects.filter(pk=item.pk).exists()
        assert MemoryRevision.objects.get(item_ref=item.pk).item_id is None
        transaction.set_rollback(True)
    with connection.cursor() as cursor:
        assert plan(cursor) == (prepare, distribute)  # rolled back: the schema is as it was


def test_the_command_prints_both_steps():
    out = StringIO()
    call_command("citus_plan", stdout=out)
    text = out.getvalue()
    assert "ALTER TABLE memory_memoryitem DROP CONSTRAINT memory_memoryitem_pkey;" in text
    assert "SELECT create_reference_table('projects_organization');" in text
    assert (
        "SELECT create_distributed_table('memory_memoryitem', 'org_id', colocate_with => 'projects_project');"
        in text
    )
    assert text.index("create_reference_table") < text.index("create_distributed_table")
