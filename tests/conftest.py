"""The cast: alice owns org A and its project; bob is a viewer in alice's project; charlie is in org B.

Fixtures give API clients for accounts (session auth) and for org API keys (Bearer).
"""

import sys

import pytest
from celery.signals import task_retry
from rest_framework.test import APIClient

from projects.access import actor_for_account
from projects.models import ProjectRole
from projects.services import api_key_create, org_membership_set, project_create, project_member_add

from .factories import AccountFactory, OrgFactory


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
