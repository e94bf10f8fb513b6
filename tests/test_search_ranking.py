"""Ranking without the database (memory/search/ranking.py): hand-made hits in, scores and orders out."""

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from memory.search.ranking import (
    Hit,
    diversify,
    fit_budget,
    order_near_duplicates,
    query_terms,
    rescaled,
    score_hits,
    similarities,
)


@pytest.fixture
def weights(settings):
    """The seed weights, whatever the environment says: relevance = .7 vector + .3 keyword;
    final = .5 relevance + .3 confidence + .2 scope priority (SEARCH_RANKING=seed)."""
    settings.SEARCH_RANKING = "seed"
    settings.SEARCH_VECTOR_WEIGHT = 0.7
    settings.SEARCH_KEYWORD_WEIGHT = 0.3
    settings.SEARCH_RELEVANCE_WEIGHT = 0.5
    settings.SEARCH_CONFIDENCE_WEIGHT = 0.3
    settings.SEARCH_SCOPE_WEIGHT = 0.2
    settings.SEARCH_VECTOR_FLOOR = None


def row(pk, content="", **extra):
    return {"id": pk, "content": content, "confidence": 1.0, "scope": "user", **extra}


def test_the_grouping_orders_versions_newest_first():
    """Unit check of the near-duplicate step on hand-built hits."""
    t0 = timezone.now()

    def hit(pk, score, content, days):
        row = {"id": pk, "content": content, "memory_type": "fact", "occurred_at": t0 - timedelta(days=days)}
        row["created_at"] = row["occurred_at"]
        return Hit(row=row, vector_similarity=0.9, keyword_raw=0, score=score)

    hits = [
        hit(1, 0.9, "user lives in Beijing", 300),
        hit(2, 0.8, "user likes tea", 1),
        hit(3, 0.7, "user lives in Shanghai", 2),
    ]
    out = order_near_duplicates(hits, {(1, 3): 0.93}, "multilingual-e5-small")
    # The group keeps its places (1st and 3rd); the newest takes the first, the unrelated one stays put.
    assert [h.id for h in out] == [3, 2, 1]


def test_events_keep_their_own_places():
    """A later event does not make an earlier one out of date: no newest-first reordering between events."""
    t0 = timezone.now()

    def hit(pk, score, content, days, memory_type="event"):
        row = {
            "id": pk,
            "content": content,
            "memory_type": memory_type,
            "occurred_at": t0 - timedelta(days=days),
        }
        row["created_at"] = row["occurred_at"]
        return Hit(row=row, vector_similarity=0.9, keyword_raw=0, score=score)

    first = hit(1, 0.9, "Nate won his first video game tournament", 300)
    other = hit(2, 0.8, "Nate likes coconut milk ice cream", 100)
    fourth = hit(3, 0.7, "Nate won his fourth video game tournament", 2)
    out = order_near_duplicates([first, other, fourth], {(1, 3): 0.93}, "multilingual-e5-small")
    assert [h.id for h in out] == [1, 2, 3]
    assert {h.group for h in out} == {None}
    # The same pair stated as facts is ordered as versions, newest first.
    facts = [
        hit(1, 0.9, first.row["content"], 300, "fact"),
        other,
        hit(3, 0.7, fourth.row["content"], 2, "fact"),
    ]
    assert [h.id for h in order_near_duplicates(facts, {(1, 3): 0.93}, "multilingual-e5-small")] == [3, 2, 1]


def test_diversify_moves_a_second_phrasing_below_something_new():
    def hit(pk, value, vector):
        row = {"id": pk, "content": str(pk), "memory_type": "fact", "occurred_at": None, "created_at": None}
        return Hit(
            row=row,
            vector_similarity=0.9,
            keyword_raw=0,
            score=value,
            rank_value=value,
            embedding=np.array(vector, "f4"),
        )

    same = [1.0, 0.0, 0.0]
    hits = [
        hit(1, 0.80, same),
        hit(2, 0.79, same),
        hit(3, 0.78, [0.0, 1.0, 0.0]),
        hit(4, 0.50, [0.0, 0.0, 1.0]),
    ]
    order = diversify(hits, similarities(hits), "multilingual-e5-small")
    # The copy of the first drops below the distinct third; nothing is dropped.
    assert [hits[i].id for i in order] == [1, 3, 2, 4]
    # Far apart, the copy keeps its place: the penalty is at most DIVERSITY (0.1) x the relevance weight (1
    # in the fused match the default ranking trades).
    hits[2].score = hits[2].rank_value = 0.65
    assert [hits[i].id for i in diversify(hits, similarities(hits), "multilingual-e5-small")] == [1, 2, 3, 4]


def test_rescaled_maps_the_floor_to_zero_and_clips():
    assert rescaled(None, 0.75) == 0.0
    assert rescaled(0.875, 0.75) == pytest.approx(0.5)
    assert rescaled(0.75, 0.75) == 0.0
    assert rescaled(0.5, 0.75) == 0.0  # below the floor: nothing, not negative
    assert rescaled(1.2, 0.0) == 1.0
    assert rescaled(0.3, 0.0) == pytest.approx(0.3)


def test_score_hits_applies_the_seed_formula_and_sorts(weights):
    strong = Hit(row=row(1, confidence=1.0, scope="session"), vector_similarity=0.95, keyword_raw=2.0)
    wordy = Hit(row=row(2, confidence=0.5, scope="user"), vector_similarity=None, keyword_raw=4.0)
    weak = Hit(row=row(3, confidence=1.0, scope="project"), vector_similarity=0.7, keyword_raw=0.0)
    hits = [wordy, weak, strong]

    score_hits(hits, "multilingual-e5-small")

    assert [h.id for h in hits] == [1, 3, 2]
    # vector (0.95 - 0.75) / 0.25 = 0.8; keyword 2 / 4 = 0.5; relevance .7 * .8 + .3 * .5 = 0.71
    assert (strong.vector, strong.keyword, strong.relevance) == pytest.approx((0.8, 0.5, 0.71))
    assert strong.score == pytest.approx(0.5 * 0.71 + 0.3 * 1.0 + 0.2 * 1.0)  # 0.855
    # no vector: keyword alone, the best keyword score of the candidates is 1
    assert (wordy.vector, wordy.keyword, wordy.relevance) == pytest.approx((0.0, 1.0, 0.3))
    assert wordy.score == pytest.approx(0.5 * 0.3 + 0.3 * 0.5 + 0.2 * 0.6)  # 0.42
    # below the model's floor and no words in common: only confidence and scope count
    assert (weak.vector, weak.relevance) == (0.0, 0.0)
    assert weak.score == pytest.approx(0.3 * 1.0 + 0.2 * 0.8)  # 0.46


def test_score_hits_takes_the_raw_cosine_of_a_model_without_a_floor(weights, settings):
    hit = Hit(row=row(1), vector_similarity=0.6, keyword_raw=0.0)
    score_hits([hit], "text-embedding-3-small")
    assert hit.vector == pytest.approx(0.6)
    assert hit.score == pytest.approx(0.5 * 0.7 * 0.6 + 0.3 + 0.2 * 0.6)  # 0.63
    settings.SEARCH_VECTOR_FLOOR = 0.5  # a configured floor applies to every model
    score_hits([hit], "text-embedding-3-small")
    assert hit.vector == pytest.approx(0.2)


def test_fit_budget_keeps_the_order_and_skips_what_does_not_fit():
    hits = [
        Hit(row=row(1, "a" * 40), vector_similarity=None, keyword_raw=0),  # 10 tokens
        Hit(row=row(2, "b" * 400), vector_similarity=None, keyword_raw=0),  # 100 tokens
        Hit(row=row(3, "c" * 20), vector_similarity=None, keyword_raw=0),  # 5 tokens
        Hit(row=row(4, "用户住在上海"), vector_similarity=None, keyword_raw=0),  # 6 tokens, one per character
    ]
    assert [h.id for h in fit_budget(hits, top_k=3, max_tokens=20)] == [1, 3]  # 4 is past top_k
    assert [h.tokens for h in hits] == [10, 100, 5, 0]
    assert [h.id for h in fit_budget(hits, top_k=4, max_tokens=20)] == [1, 3]  # 10 + 5 + 6 > 20
    assert [h.id for h in fit_budget(hits, top_k=4, max_tokens=21)] == [1, 3, 4]
    assert [h.id for h in fit_budget(hits, top_k=4, max_tokens=121)] == [1, 2, 3, 4]
    assert fit_budget(hits, top_k=0, max_tokens=1000) == []


def test_query_terms_stem_english_words_to_prefixes_and_keep_the_rest_exact():
    assert query_terms("Painted paintings quickly; runs EDU-2291 the 用户过敏") == [
        ("paint", True),  # "paintings" stems to the same prefix and is not repeated
        ("quick", True),
        ("runs", True),  # a stem shorter than four letters would match too much: kept whole
        ("edu-2291", False),
        ("edu", False),
        ("2291", False),
        ("用", False),
        ("户", False),
        ("过", False),
        ("敏", False),
        ("用户", False),
        ("户过", False),
        ("过敏", False),
    ]  # "the" is a stop word
    assert query_terms("") == []


def test_similarities_are_cosines_with_zero_for_a_hit_without_a_vector():
    hits = [
        Hit(row=row(1), vector_similarity=None, keyword_raw=0, embedding=np.array([1.0, 0.0], "f4")),
        Hit(row=row(2), vector_similarity=None, keyword_raw=0, embedding=np.array([0.0, 2.0], "f4")),
        Hit(row=row(3), vector_similarity=None, keyword_raw=0, embedding=np.array([3.0, 3.0], "f4")),
        Hit(row=row(4), vector_similarity=None, keyword_raw=0),
    ]
    sims = similarities(hits)
    half = 1 / np.sqrt(2)
    expected = [[0, 0, half, 0], [0, 0, half, 0], [half, half, 0, 0], [0, 0, 0, 0]]
    assert np.allclose(sims, expected, atol=1e-6)
    assert similarities(hits[2:]).tolist() == [[0.0, 0.0], [0.0, 0.0]]  # one vector: nothing to compare


def test_row_medians_are_numpys_medians_without_the_nans():
    import numpy as np

    from memory.search.ranking import _row_medians

    rng = np.random.default_rng(7)
    for _ in range(200):
        rows = rng.random((int(rng.integers(1, 30)), int(rng.integers(3, 30))))
        for row in rows:  # a hit's own cosine (the diagonal) and sometimes one more left out
            row[rng.integers(0, len(row), size=int(rng.integers(0, 3)))] = np.nan
        rows = rows[np.sum(~np.isnan(rows), axis=1) >= 1]
        if len(rows):
            count = np.sum(~np.isnan(rows), axis=1)
            assert np.array_equal(_row_medians(rows, count), np.nanmedian(rows, axis=1))
