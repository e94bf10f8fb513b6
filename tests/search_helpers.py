"""Helpers shared by the search tests: hand-made unit vectors and a search call with the usual filters."""

import math

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
    filters = MemoryFilters(
        user_id=kw.pop("user_id", "alice"), session_id=kw.pop("session_id", ""), **kw.pop("filters", {})
    )
    return memory_search(actor=actor, query=query, filters=filters, query_vector=vector, **kw)


def ids(result):
    return [h.id for h in result.hits]
