"""The query map (memory/search/query_map.py): e5-small's shared and language directions taken out of the
query vector of a hybrid search, the cosine put back on the model's scale by the search statement."""

import numpy as np
import pytest

from memory.embeddings.local import MODEL_NAME, LocalE5Provider
from memory.search import query_map
from memory.search.ranking import cross_language_offset, query_language_offset

MEMORIES = [
    "用户对花生过敏，吃到会起荨麻疹",
    "用户每周二和周四晚上去健身房练力量",
    "用户喝咖啡只喝美式，不加糖不加奶",
    "The user's dog Biscuit is a twelve-year-old border collie",
    "The user works night shifts at a bakery in Leeds",
    "用户的女儿今年上小学二年级",
]


WEIGHT = 0.5


@pytest.fixture(autouse=True)
def relevance_ranking(settings):
    settings.SEARCH_RANKING = "relevance"
    settings.SEARCH_QUERY_MAP_WEIGHT = WEIGHT


def _blended(mapping, query, memory, weight=WEIGHT):
    """What the vector side should be: the cosine with the query and the mapped cosine, weighted."""
    rest = mapping.matrix @ query
    mapped = mapping.offset + mapping.scale * float(memory @ rest) / float(np.linalg.norm(rest))
    return (1 - weight) * float(memory @ query) + weight * mapped


def test_the_map_projects_its_directions_out_of_the_query():
    mapping = query_map.load(MODEL_NAME)
    assert mapping is not None
    data = np.load(query_map.path(MODEL_NAME))
    directions = data["directions"].astype(np.float64)
    assert directions.shape == (2, 384)
    assert np.allclose(directions @ directions.T, np.eye(2), atol=1e-5)  # orthonormal
    assert 0 < mapping.scale < 1 and 0.5 < mapping.offset < 1
    provider = LocalE5Provider()
    query = np.asarray(provider.embed_query("我对什么过敏？"), dtype=np.float32)
    # all of it mapped: the query without the directions, normalised, on the model's scale
    mapped, (offset, scale) = mapping.apply(query, 1.0)
    assert np.linalg.norm(mapped) == pytest.approx(1.0, abs=1e-5)
    assert np.abs(directions @ mapped).max() < 1e-5  # nothing left along the removed directions
    rest = query - directions.T @ (directions @ query)
    assert np.allclose(mapped, rest / np.linalg.norm(rest), atol=1e-5)
    assert (offset, scale) == pytest.approx((mapping.offset, mapping.scale))
    # none of it: the query as it is
    same, similarity = mapping.apply(query, 0.0)
    assert np.array_equal(same, query) and similarity == query_map.IDENTITY
    # a share: one vector whose cosine, as the statement turns it, is the weighted sum of the two
    memories = np.asarray(provider.embed_passages(MEMORIES))
    for weight in (0.3, 0.5):
        sent, (offset, scale) = mapping.apply(query, weight)
        for memory in memories:
            expected = _blended(mapping, query, memory, weight)
            assert offset + scale * float(memory @ sent) == pytest.approx(expected, abs=1e-5)


def test_only_a_hybrid_search_under_the_relevance_ranking_maps_its_query(settings):
    assert query_map.for_search(MODEL_NAME, "hybrid") is not None
    # the one-sided baselines read the model's own cosine
    assert query_map.for_search(MODEL_NAME, "vector") is None
    assert query_map.for_search(MODEL_NAME, "keyword") is None
    assert query_map.load("text-embedding-3-small") is None  # a model without a map
    assert query_map.load("../multilingual-e5-small") is None
    settings.SEARCH_RANKING = "seed"
    assert query_map.for_search(MODEL_NAME, "hybrid") is None
    settings.SEARCH_RANKING = "relevance"
    settings.SEARCH_QUERY_MAP_WEIGHT = 0.0
    assert query_map.for_search(MODEL_NAME, "hybrid") is None


def test_the_mapped_query_closes_the_gap_between_the_languages(settings):
    # e5-small: unrelated memories sit at 0.82 in the query's language and 0.755 in the other one; the map
    # takes the language direction out of the query, so the mapped cosine needs (almost) no offset for it,
    # and the vector side's candidates are taken with the weighted share of the gap. Whether two memories
    # are near each other is read from their own vectors: that gap stays.
    settings.SEARCH_QUERY_MAP_WEIGHT = 1.0
    assert query_language_offset(MODEL_NAME) == pytest.approx(0.0, abs=0.01)
    settings.SEARCH_QUERY_MAP_WEIGHT = 0.5
    assert 0.02 < query_language_offset(MODEL_NAME) < 0.045
    assert cross_language_offset(MODEL_NAME) == pytest.approx(0.065)
    settings.SEARCH_QUERY_MAP_WEIGHT = 0.0
    assert query_language_offset(MODEL_NAME) == pytest.approx(0.065)


def _search(client, query, **extra):
    body = {"query": query, "user_id": "alice", "top_k": 10, "explain": True, "threshold": 0, **extra}
    response = client.post("/api/v1/memories/search", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.mark.parametrize("exact_subject_rows", [5000, 0])  # the subject statement, then the indexes' way
def test_the_search_puts_the_mapped_cosine_on_the_models_scale(alice_client, settings, exact_subject_rows):
    settings.SEARCH_EXACT_SUBJECT_ROWS = exact_subject_rows
    body = {"memories": [{"content": t, "user_id": "alice"} for t in MEMORIES], "infer": False}
    assert alice_client.post("/api/v1/memories/batch", body, format="json").status_code in (200, 201, 207)
    provider = LocalE5Provider()
    stored = dict(zip(MEMORIES, np.asarray(provider.embed_passages(MEMORIES)), strict=True))
    mapping = query_map.load(MODEL_NAME)
    query = "What is my dog's breed?"
    raw = np.asarray(provider.embed_query(query), dtype=np.float32)
    hybrid = _search(alice_client, query)
    assert len(hybrid) == len(MEMORIES)
    for r in hybrid:
        expected = _blended(mapping, raw, stored[r["content"]])
        assert r["explain"]["vector_similarity"] == pytest.approx(expected, abs=1e-3), r["content"]
    assert hybrid[0]["content"] == MEMORIES[3]
    for r in _search(alice_client, query, mode="vector"):  # the baseline: the model's own cosine
        assert r["explain"]["vector_similarity"] == pytest.approx(float(stored[r["content"]] @ raw), abs=1e-3)
