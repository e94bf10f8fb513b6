"""Row-level security as defence in depth (core.rls): a query that forgets the org filter finds nothing of
another org, whatever the access module does. The suite connects as the application's role (see
tests/conftest.py), so these are the policies every other test runs under."""

import time

import pytest
from django.apps import apps
from django.db import ProgrammingError, connection, transaction

from core import rls
from memory.models import MemoryItem
from memory.search.access_counts import AccessRecorder
from projects.models import Organization, OrgMembership, Project
from projects.services import org_membership_set

from .conftest import client_for
from .factories import MemoryItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def org_scope(org) -> rls.Scope:
    return rls.Scope(org_id=org.pk)


@pytest.fixture
def rows(org_a, org_b):
    """Two memories of org A and one of org B."""
    return (
        [MemoryItemFactory(org=org_a).pk, MemoryItemFactory(org=org_a).pk],
        [MemoryItemFactory(org=org_b).pk],
    )


def test_it_shows_only_the_bound_orgs_rows_to_a_query_without_an_org_filter(org_a, rows):
    mine, theirs = rows
    with rls.scoped(org_scope(org_a)):
        assert sorted(MemoryItem.objects.values_list("pk", flat=True)) == sorted(mine)
        assert not MemoryItem.objects.filter(pk=theirs[0]).exists(), "org B's memory leaked to org A"
        assert MemoryItem.objects.filter(pk=theirs[0]).update(content="changed") == 0
        assert MemoryItem.objects.filter(pk=theirs[0]).delete()[0] == 0
    assert MemoryItem.objects.get(pk=theirs[0]).content != "changed"


def test_it_shows_nothing_when_no_org_is_bound(rows):
    with rls.scoped(rls.NOTHING):
        assert not MemoryItem.objects.exists()
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memory_memoryitem")
            assert cursor.fetchone()[0] == 0


def test_it_refuses_to_write_a_row_into_another_org(org_a, org_b, rows):
    mine, _ = rows
    with rls.scoped(org_scope(org_a)):
        with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
            MemoryItemFactory(org=org_b)
        with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
            MemoryItem.objects.filter(pk=mine[0]).update(org=org_b)
    assert MemoryItem.objects.filter(org=org_b).count() == 1
    assert MemoryItem.objects.get(pk=mine[0]).org_id == org_a.pk


def test_it_binds_again_after_a_rollback_undid_the_setting(org_a, rows):
    mine, _ = rows
    with rls.scoped(org_scope(org_a)):
        with pytest.raises(RuntimeError), transaction.atomic():
            list(MemoryItem.objects.all())  # sets org A inside the savepoint ...
            raise RuntimeError("roll back")  # ... which is rolled back, and the setting with it
        assert sorted(MemoryItem.objects.values_list("pk", flat=True)) == sorted(mine)
    assert MemoryItem.objects.count() == 3


def test_an_account_sees_its_own_memberships_in_every_org_and_nothing_else(alice, bob, charlie, org_a, org_b):
    org_membership_set(org=org_b, account=alice, role="member")
    ProjectFactory(org=org_a)
    with rls.scoped(rls.Scope(account_id=alice.pk)):
        assert sorted(OrgMembership.objects.values_list("org__slug", "account__username")) == [
            ("org-a", "alice"),
            ("org-b", "alice"),
        ]
        assert not Project.objects.exists()
    with rls.scoped(rls.Scope(org_id=org_b.pk, account_id=alice.pk)):
        assert sorted(OrgMembership.objects.values_list("org__slug", "account__username")) == [
            ("org-a", "alice"),
            ("org-b", "alice"),
            ("org-b", "charlie"),
        ]


def test_a_request_binds_its_own_scope_and_gives_the_callers_back(alice, org_a, org_b, rows):
    org_membership_set(org=org_b, account=alice, role="member")
    client = client_for(alice)
    client.force_login(alice)
    page = client.get("/")
    assert page.status_code == 200
    assert "Org A" in page.content.decode() and "Org B" in page.content.decode()
    _, theirs = rows  # org B's memory of the subject "alice"
    listed = client.get("/api/v1/memories", HTTP_X_ENGRAM_ORG="org-b")
    assert listed.status_code == 200
    assert [row["id"] for row in listed.json()["results"]] == theirs
    assert rls.current() == rls.ALL_ORGS


def test_the_application_role_is_subject_to_the_policies():
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone() == (False, False)
        cursor.execute("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = current_schema()")
        owners = [owner for (owner,) in cursor.fetchall()]
        cursor.execute("SELECT current_user")
        assert cursor.fetchone()[0] not in owners


def test_every_tenant_table_has_a_policy():
    tables = [
        model._meta.db_table
        for model in apps.get_models()
        if any(
            f.is_relation and f.related_model is Organization and f.name == "org" for f in model._meta.fields
        )
    ]
    assert len(tables) >= 18
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND c.relrowsecurity"
            " AND EXISTS (SELECT 1 FROM pg_policies p WHERE p.tablename = c.relname AND p.policyname = 'tenant')",
            [tables],
        )
        protected = {name for (name,) in cursor.fetchall()}
    assert sorted(set(tables) - protected) == [], "tenant tables without a row-level security policy"


@pytest.mark.django_db(transaction=True)
def test_recall_counts_written_off_the_request_thread_reach_the_rows(org_a, settings):
    """The flushing thread is no request's: it writes with every org in view, not with none."""
    settings.SEARCH_ACCESS_FLUSH_SECONDS = 0.05
    item = MemoryItemFactory(org=org_a)
    with rls.scoped(org_scope(org_a)):
        AccessRecorder().record([item.pk, item.pk])
    deadline = time.monotonic() + 10
    while MemoryItem.objects.get(pk=item.pk).access_count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert MemoryItem.objects.get(pk=item.pk).access_count == 2


def test_the_keyword_index_serves_the_application_role(rows):
    """Row-level security does not turn a keyword lookup into a scan of the org's rows."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN SELECT id FROM memory_memoryitem WHERE search_tokens @@ 'note'::tsquery")
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "mem_search_tokens" in plan, plan
