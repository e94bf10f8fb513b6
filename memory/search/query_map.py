"""The query's vector as the hybrid ranking reads it: the embedding model's shared directions taken out.

multilingual-e5-small puts every text near one common direction (unrelated sentences score 0.75-0.85), and
the strongest direction along which its texts differ beyond that is their language: a Chinese question
scores every Chinese memory higher than the English one that answers it. A map per model
(`query_maps/<model>.npz`: the directions, made by bench/query_map.py from a pool of stored statements,
no questions) projects them out of the query vector before the search (q' = matrix @ q, normalised). The
stored vectors stay as they are: the cosine of a memory with the mapped query is its cosine with the query
minus what the memory and the query share along the removed directions, so a memory that is merely typical
of the pool, or of the query's language, no longer gains from it.

The mapped cosine has its own scale (unrelated memories near 0 instead of 0.82), so it is put back on the
model's scale as `offset + scale * cosine` (the unrelated level at 0.82, a best match standing out from the
rest by as much as before). The vector side is then SEARCH_QUERY_MAP_WEIGHT of that and the rest the
cosine with the model's own query vector, computed by the search statement as one cosine (QueryMap.apply);
the ranking's figures for it (ranking.calibration, unrelated_cosines) are those of the two, weighted alike.

Used by the hybrid search under the relevance ranking only: the seed formula and the one-sided baselines
(mode=vector, mode=keyword) read the model's own cosine.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

MAPS = Path(__file__).with_name("query_maps")
IDENTITY = (0.0, 1.0)  # (offset, scale) of a query searched as the model embedded it


@dataclass(frozen=True)
class QueryMap:
    matrix: np.ndarray  # (dim, dim), float32: the mapped query is matrix @ q, normalised
    offset: float  # the mapped cosine on the model's scale: offset + scale * cosine
    scale: float

    def apply(self, vector: np.ndarray, weight: float) -> tuple[np.ndarray, tuple[float, float]]:
        """The query vector a search sends, and the (offset, scale) that turn its cosine with a memory into
        (1 - weight) x the cosine with the query + weight x the mapped cosine on the model's scale.

        Both cosines are linear in the (unit) memory vector, so their sum is one cosine with a vector of
        its own, u = (1 - weight) q + weight * scale * q', times |u|, plus weight * offset: the search
        statement computes it as it computes any cosine."""
        query = np.asarray(vector, dtype=np.float32)
        mapped = self.matrix @ query
        norm = float(np.linalg.norm(mapped))
        if not norm or weight <= 0:  # nothing left outside the removed directions, or no share of it
            return query, IDENTITY
        blend = (1 - weight) * query + (weight * self.scale / norm) * mapped
        length = float(np.linalg.norm(blend))
        return (blend / length).astype(np.float32), (weight * self.offset, length)


def path(model: str) -> Path:
    return MAPS / f"{model}.npz"


@functools.cache
def load(model: str) -> QueryMap | None:
    """The model's map, read once per process; None for a model without one (any other embedding model)."""
    file = path(model)
    if not model or "/" in model or not file.is_file():
        return None
    with np.load(file) as data:
        directions = np.asarray(data["directions"], dtype=np.float64)  # orthonormal rows
        offset, scale = float(data["offset"]), float(data["scale"])
    matrix = np.eye(directions.shape[1]) - directions.T @ directions
    return QueryMap(matrix=matrix.astype(np.float32), offset=offset, scale=scale)


def weight(model: str) -> float:
    """The share of the mapped cosine in hybrid searches with this model (SEARCH_QUERY_MAP_WEIGHT under the
    relevance ranking, for a model with a map); 0 when the query is searched as the model embedded it."""
    if settings.SEARCH_RANKING == "seed" or load(model) is None:
        return 0.0
    return settings.SEARCH_QUERY_MAP_WEIGHT


def for_search(model: str, rank: str) -> QueryMap | None:
    """The map a search of this mode applies to its query vector, if any."""
    return load(model) if rank == "hybrid" and weight(model) > 0 else None
