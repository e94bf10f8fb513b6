"""Helpers shared by the search tests: hand-made unit vectors and a search call with the usual filters."""

import math
from contextlib import nullcontext

from django.test import override_settings

from memory.search import memory_search
from memory.selectors import MemoryFilters

DIM = 384


def unit(*pairs) -> list[float]:
    """A unit vector from (axis, weight) pairs."""
    v = [0.0] * DIM
    for axis, weight in pairs:
        v[axis] = weight
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def search(actor, query, vector=None, **kw):
    """memory_search with threshold 0 unless given: hand-made vectors are not the model's calibrated cosines,
    so these tests check the order, not the relevance floor (tests/test_search_relevance.py does). Nor are
    they the model's vectors: the query map (memory/search/query_map.py), made from the model's own, is not
    applied to a hand-made query vector (tests/test_search_query_map.py tests it with the model's)."""
    kw.setdefault("threshold", 0.0)
    filters = MemoryFilters(
        user_id=kw.pop("user_id", "alice"), session_id=kw.pop("session_id", ""), **kw.pop("filters", {})
    )
    hand_made = override_settings(SEARCH_QUERY_MAP_WEIGHT=0.0) if vector is not None else nullcontext()
    with hand_made:
        return memory_search(actor=actor, query=query, filters=filters, query_vector=vector, **kw)


def ids(result):
    return [h.id for h in result.hits]
