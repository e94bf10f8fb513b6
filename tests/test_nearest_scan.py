"""The write path's nearest memories when the vector index serves the order (memory.services.nearest_active).

The HNSW index looks at hnsw.ef_search rows nearest to the vector in the whole table and then filters by
org and subject: without an iterative scan, a subject's near duplicate is missed when other subjects hold
many closer rows, and the duplicate is added as new (seen in a full test run, whose table holds the rows
of earlier tests)."""

import numpy as np
import pytest
from django.db import connection

from memory.models import MemoryItem
from memory.services import nearest_active

from .factories import MemoryItemFactory, OrgFactory

pytestmark = pytest.mark.django_db

MODEL = "multilingual-e5-small"


def _unit(v):
    return (v / np.linalg.norm(v)).tolist()


def test_the_subjects_own_memory_is_found_behind_many_closer_ones(alice_actor, org_a):
    rng = np.random.default_rng(7)
    target = np.zeros(384)
    target[0] = 1.0
    mine = MemoryItemFactory(
        org=org_a,
        user_id="alice",
        content="The user drinks oolong tea",
        embedding_model=MODEL,
        embedding=_unit(target + 0.9 * rng.standard_normal(384) / np.sqrt(384)),
    )
    other = OrgFactory()
    # 3,000 rows of another org, every one closer to the vector than alice's memory.
    MemoryItem.objects.bulk_create(
        [
            MemoryItem(
                org=other,
                user_id=f"u{i % 50}",
                scope="user",
                content=f"note {i}",
                content_hash=f"h{i}",
                memory_type="fact",
                embedding_model=MODEL,
                embedding=_unit(target + 0.3 * rng.standard_normal(384) / np.sqrt(384)),
            )
            for i in range(3000)
        ],
        batch_size=1000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memoryitem")
        # The plan a large table gets: the vector index serves the order.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
    base = {"org": org_a, "user_id": "alice", "scope": "user"}
    found = nearest_active(actor=alice_actor, base=base, embedding=target.tolist(), model=MODEL)
    assert [item.pk for item, _ in found] == [mine.pk]
