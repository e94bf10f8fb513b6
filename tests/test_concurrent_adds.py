"""Identical adds at the same moment store one row (issue 13, finding 8).

Real concurrency: threads, each with its own database connection, post the same batch (or the same
single memory) at once, in committed transactions. The duplicate check is serialised per subject by a
transaction-scoped advisory lock, so the first stores and every other one finds its row.
"""

import threading

import pytest
from django.db import connection

from memory.models import MemoryItem, MemoryRevision
from projects.services import api_key_create

from .conftest import key_client

THREADS = 16
A = {"content": "The user prefers window seats on long flights", "user_id": "u1"}
B = {"content": "The user keeps a paper notebook for meeting notes", "user_id": "u2"}
C = {"content": "The user prefers window seats on long flights", "user_id": "u2"}  # A's text, other subject


def at_once(calls) -> list:
    """Run the calls in threads released together; their results (or exceptions) in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait(timeout=30)
            results[i] = call()
        except Exception as exc:  # reported by the test, not lost in the thread
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


@pytest.fixture
def secret(org_a):
    """An org API key's secret: each thread builds its own client from it."""
    return api_key_create(org=org_a, name="agent")[1]


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_batches_store_each_text_once(secret, org_a):
    def post(order):
        return key_client(secret).post(
            "/api/v1/memories/batch", {"memories": order, "infer": False}, format="json"
        )

    # Half the batches list the subjects the other way round: the locks must not deadlock.
    calls = [(lambda i=i: post([A, B, C] if i % 2 else [C, B, A])) for i in range(THREADS)]
    responses = at_once(calls)
    assert all(getattr(r, "status_code", r) == 200 for r in responses), responses
    rows = list(MemoryItem.objects.filter(org=org_a).values_list("user_id", "content"))
    assert sorted(rows) == sorted((m["user_id"], m["content"]) for m in (A, B, C))
    created = sum(r.json()["created"] for r in responses)
    duplicates = sum(r.json()["duplicate"] for r in responses)
    assert (created, duplicates) == (3, 3 * THREADS - 3)
    ids = {row["duplicate_of"] for r in responses for row in r.json()["results"] if "duplicate_of" in row}
    assert ids == set(MemoryItem.objects.filter(org=org_a).values_list("pk", flat=True))
    assert MemoryRevision.objects.filter(org=org_a, action="add").count() == 3


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_single_adds_store_one_row(secret, org_a):
    def post():
        return key_client(secret).post("/api/v1/memories", A, format="json")

    responses = at_once([post] * THREADS)
    codes = sorted(getattr(r, "status_code", r) for r in responses)
    assert codes == [200] * (THREADS - 1) + [201], responses
    [row] = MemoryItem.objects.filter(org=org_a)
    assert {r.json()["id"] for r in responses} == {row.pk}
