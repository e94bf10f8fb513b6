"""The cast: alice owns org A and its project; bob is a viewer in alice's project; charlie is in org B.

Fixtures give API clients for accounts (session auth) and for org API keys (Bearer).

The test database is created and migrated as the tables' owner (DATABASE_OWNER_URL); the tests then
connect as the application's role (DATABASE_URL), so row-level security (core.rls) applies to the whole
suite. Test code itself (factories, assertions on rows) acts across orgs; requests bind their own scope.
"""

import sys

import pytest
from celery.signals import task_retry
from django.db import connection
from rest_framework.test import APIClient

from core import rls
from core.rls.roles import grant_app_role, switch_back, switch_to_owner
from projects.access import actor_for_account
from projects.models import ProjectRole
from projects.services import api_key_create, org_membership_set, project_create, project_member_add

from .factories import AccountFactory, OrgFactory

_app_credentials = {}


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings):
    """Create and migrate the test database as the owner."""
    _app_credentials["saved"] = switch_to_owner(connection)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Then run the tests as the application's role; it may also empty tables (transactional tests flush
    them) and set sequences (tests/test_isolation.py spreads the ids)."""
    with django_db_blocker.unblock():
        grant_app_role(
            connection,
            privileges="SELECT, INSERT, UPDATE, DELETE, TRUNCATE",
            sequences="USAGE, SELECT, UPDATE",
        )
    switch_back(connection, _app_credentials["saved"])
    yield
    switch_to_owner(connection)  # the owner drops the test database


@pytest.fixture(autouse=True)
def all_orgs_in_test_code():
    with rls.all_orgs():
        yield


@pytest.fixture
def org_a(db):
    return OrgFactory(slug="org-a", name="Org A")


@pytest.fixture
def org_b(db):
    return OrgFactory(slug="org-b", name="Org B")


@pytest.fixture
def alice(org_a):
    account = AccountFactory(username="alice")
    org_membership_set(org=org_a, account=account, role="owner")
    return account


@pytest.fixture
def bob(org_a):
    account = AccountFactory(username="bob")
    org_membership_set(org=org_a, account=account, role="member")
    return account


@pytest.fixture
def charlie(org_b):
    account = AccountFactory(username="charlie")
    org_membership_set(org=org_b, account=account, role="owner")
    return account


@pytest.fixture
def alice_actor(alice, org_a):
    return actor_for_account(alice, org_a)


@pytest.fixture
def project(alice_actor, bob):
    """Alice's project 'atlas' in org A; bob is a viewer in it."""
    project = project_create(actor=alice_actor, name="Atlas", slug="atlas")
    project_member_add(actor=alice_actor, project=project, account=bob, role=ProjectRole.VIEWER)
    return project


def client_for(account) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=account)
    return client


def key_client(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture
def alice_client(alice):
    return client_for(alice)


@pytest.fixture
def bob_client(bob):
    return client_for(bob)


@pytest.fixture
def charlie_client(charlie):
    return client_for(charlie)


@pytest.fixture
def key_a(org_a):
    """A read-write API key of org A: (key, client)."""
    key, secret = api_key_create(org=org_a, name="agent-a")
    return key, key_client(secret)


@pytest.fixture
def key_b(org_b):
    key, secret = api_key_create(org=org_b, name="agent-b")
    return key, key_client(secret)


@pytest.fixture
def celery_retries():
    """(task name, countdown) of every Celery retry during the test (a task's apply() runs its retries
    at once, without waiting)."""
    seen = []

    def record(sender=None, reason=None, **kwargs):
        seen.append((sender.name, reason.when))

    task_retry.connect(record, weak=False)
    yield seen
    task_retry.disconnect(record)


def pytest_terminal_summary(terminalreporter):
    """The Schemathesis counts (operations, requests, failures), when tests/test_schemathesis.py ran."""
    module = sys.modules.get("tests.test_schemathesis")
    if module is not None and module.stats["requests"]:
        terminalreporter.write_line(module.summary())
