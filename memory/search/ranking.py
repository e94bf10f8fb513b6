"""Ranking, without the database: the seed formula, conversation neighbours, diversity, near-duplicate
order and the token budget. Every function here takes hits and returns hits or an order, so each can be
tested on hand-made rows (tests/test_search_ranking.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from django.conf import settings

from core.text import estimate_tokens, keyword_tokens

from ..dedup import differs_materially
from ..thresholds import duplicate_threshold, related_threshold

EVENT = "event"  # memory type whose near-duplicates are separate happenings, not versions
SCOPE_PRIORITY = {"session": 1.0, "project": 0.8, "user": 0.6}
# multilingual-e5-small scores unrelated sentences around 0.75-0.82 (see memory/thresholds.py); other
# models: raw cosine. Tuned on LoCoMo dev (bench/locomo.py): 0.75 beat min-max over the candidates.
VECTOR_FLOORS = {"multilingual-e5-small": 0.75}
NEIGHBOUR_SPAN = 2  # how many rows before and after a match count as its conversation context
# Share of a lend a neighbour gets whatever its own vector match; the rest in proportion to how close its
# vector match comes to its lender's. Tuned on LoCoMo dev together with DIVERSITY (R@10 0.747 -> 0.762).
NEIGHBOUR_UNCONDITIONAL = 0.7
# Maximal marginal relevance over the head: a hit loses this share of the relevance weight times its
# cosine (rescaled from the model's floor) to the most similar hit already placed above it.
DIVERSITY = 0.1


@dataclass
class Hit:
    """One search result with its score and the parts of the score."""

    row: dict
    vector_similarity: float | None
    keyword_raw: float
    vector: float = 0.0
    keyword: float = 0.0
    relevance: float = 0.0
    confidence: float = 0.0
    scope_priority: float = 0.0
    feedback: float = 0.0
    score: float = 0.0
    tokens: int = 0
    group: int | None = None
    neighbour_of: int | None = None
    embedding: np.ndarray | None = field(default=None, repr=False)  # the stored vector (current model)
    id: int = field(init=False)

    def __post_init__(self) -> None:
        self.id = self.row["id"]

    def components(self) -> dict:
        return {
            "vector": round(self.vector, 4),
            "vector_similarity": None if self.vector_similarity is None else round(self.vector_similarity, 4),
            "keyword": round(self.keyword, 4),
            "keyword_bm25": round(self.keyword_raw, 4),
            "relevance": round(self.relevance, 4),
            "confidence": round(self.confidence, 4),
            "scope_priority": self.scope_priority,
            "feedback": round(self.feedback, 4),
        }


# ---- query text -----------------------------------------------------------------------------------


_SUFFIXES = ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "s", "ly")
_ASCII_WORD = re.compile(r"[a-z]+")
# A query's first this many distinct terms are matched: each is a tsquery of its own in the statement, so
# a long query (up to 4000 characters, in bigrams twice as many tokens) must not multiply the work.
MAX_QUERY_TERMS = 100


def query_terms(query: str) -> list[tuple[str, bool]]:
    """Distinct (term, prefix) pairs of the query, in order.

    English words of four letters or more are cut to a crude stem and matched as a prefix
    ("painted" finds "painting"), since the stored tokens are unstemmed; numbers, identifiers and
    Chinese characters and bigrams are matched exactly. The tokens come from the tokeniser that made
    the stored search_tokens (core.text.keyword_tokens), so any script finds its words, and none is long
    enough for PostgreSQL to refuse it. At most MAX_QUERY_TERMS terms.
    """
    terms: dict[tuple[str, bool], None] = {}
    for token in keyword_tokens(query):
        if len(terms) >= MAX_QUERY_TERMS:
            break
        if _ASCII_WORD.fullmatch(token) and len(token) >= 4:
            for suffix in _SUFFIXES:
                if token.endswith(suffix) and len(token) - len(suffix) >= 4:
                    token = token[: -len(suffix)]
                    break
            terms[(token, True)] = None
        else:
            terms[(token, False)] = None
    return list(terms)


# ---- scores ---------------------------------------------------------------------------------------


def vector_floor(model: str) -> float:
    """The cosine below which a vector match counts as nothing (where unrelated texts sit)."""
    if settings.SEARCH_VECTOR_FLOOR is not None:
        return settings.SEARCH_VECTOR_FLOOR
    return VECTOR_FLOORS.get(model, 0.0)


def rescaled(similarity: float | None, floor: float) -> float:
    """A cosine rescaled from the model's floor (0) to 1, clipped; no vector counts as 0."""
    if similarity is None:
        return 0.0
    return min(1.0, max(0.0, (similarity - floor) / (1.0 - floor)))


def score_hits(hits: list[Hit], model: str = "") -> None:
    """Normalise both sides to [0, 1], then apply the seed formula.

    vector: cosine rescaled from the model's floor to 1 (clipped), so a weak best match stays weak;
    keyword: BM25 divided by the best candidate's.
    """
    floor = vector_floor(model)
    best_kw = max((h.keyword_raw for h in hits), default=0.0)
    vector_weight, keyword_weight = settings.SEARCH_VECTOR_WEIGHT, settings.SEARCH_KEYWORD_WEIGHT
    weights = final_weights()
    for h in hits:
        h.vector = rescaled(h.vector_similarity, floor)
        h.keyword = h.keyword_raw / best_kw if best_kw > 0 else 0.0
        h.relevance = vector_weight * h.vector + keyword_weight * h.keyword
        final_score(h, weights)
    hits.sort(key=lambda h: (-h.score, -h.id))


def final_weights() -> tuple[float, float, float]:
    """(relevance, confidence, scope priority) weights, read once per search rather than once per row."""
    return settings.SEARCH_RELEVANCE_WEIGHT, settings.SEARCH_CONFIDENCE_WEIGHT, settings.SEARCH_SCOPE_WEIGHT


def final_score(h: Hit, weights: tuple[float, float, float] | None = None) -> None:
    """Seed 000: final = relevance·0.5 + confidence·0.3 + scope_priority·0.2, plus the people's feedback
    (MemoryItem.feedback, in (-1, 1): memory.feedback.signal) times SEARCH_FEEDBACK_WEIGHT (0.05), so
    feedback moves a memory by less than 0.05 either way: it reorders close results, it never lifts an
    unrelated memory over a relevant one."""
    relevance_weight, confidence_weight, scope_weight = weights or final_weights()
    h.confidence = float(h.row["confidence"])
    h.scope_priority = SCOPE_PRIORITY.get(h.row["scope"], 0.6)
    h.feedback = max(-1.0, min(1.0, float(h.row.get("feedback") or 0.0)))
    h.score = (
        relevance_weight * h.relevance
        + confidence_weight * h.confidence
        + scope_weight * h.scope_priority
        + settings.SEARCH_FEEDBACK_WEIGHT * h.feedback
    )


def _same_conversation(a: dict, b: dict) -> bool:
    """Two memories stored one after the other from one conversation: same subject, scope, session and time."""
    return (
        a["occurred_at"] is not None
        and a["occurred_at"] == b["occurred_at"]
        and a["user_id"] == b["user_id"]
        and a["scope"] == b["scope"]
        and a["session_id"] == b["session_id"]
        and a["project_id"] == b["project_id"]
    )


NEIGHBOUR_STEPS = [d for d in range(-NEIGHBOUR_SPAN, NEIGHBOUR_SPAN + 1) if d]


def neighbour_lenders(hits: list[Hit], head: int) -> list[Hit]:
    """The best `head` hits that may lend to their conversation neighbours (those with an occurred_at)."""
    if settings.SEARCH_NEIGHBOUR_WEIGHT <= 0:
        return []
    return [h for h in hits[:head] if h.row["occurred_at"] is not None]


def add_neighbours(hits: list[Hit], top: list[Hit], rows: list[dict], *, model: str) -> list[Hit]:
    """Conversation context: a turn next to a strong match is likely part of the answer.

    Turns stored verbatim from a conversation are short and lean on each other ("Thanks! It stands for
    freedom" answers the question before it). Each of the best hits (`top`, see neighbour_lenders) lends
    its neighbours (the rows stored just before and after it, from the same conversation: same subject,
    session and time) up to SEARCH_NEIGHBOUR_WEIGHT of its relevance. `rows` are the neighbours that
    were not candidates, fetched under the same filters, so only readable rows come in. Memories without
    an occurred_at, or written one by one, have no neighbours.
    """
    weight = settings.SEARCH_NEIGHBOUR_WEIGHT
    if weight <= 0 or not top:
        return hits
    weights = final_weights()
    unconditional = NEIGHBOUR_UNCONDITIONAL
    by_id = {h.id: h for h in hits}
    floor = vector_floor(model)
    for row in rows:
        if row["id"] in by_id:
            continue
        h = Hit(row=row, vector_similarity=row.pop("vsim"), keyword_raw=0.0, embedding=row.pop("emb"))
        h.vector = rescaled(h.vector_similarity, floor)
        h.relevance = settings.SEARCH_VECTOR_WEIGHT * h.vector
        final_score(h, weights)
        by_id[h.id] = h
        hits.append(h)
    lent = {h.id: h.relevance for h in top}
    for h in top:
        for d in NEIGHBOUR_STEPS:
            n = by_id.get(h.id + d)
            # Every row in between must belong to the same conversation too.
            path = [by_id.get(h.id + i) for i in range(min(d, 0), max(d, 0) + 1)]
            if n is None or not all(p is not None and _same_conversation(h.row, p.row) for p in path):
                continue
            # A neighbour that matches the query nearly as well as its lender gets the whole lend, one that
            # matches nothing NEIGHBOUR_UNCONDITIONAL of it: context is likelier to matter when on topic.
            closeness = min(1.0, n.vector / h.vector) if h.vector > 0 else 1.0
            lend = weight ** abs(d) * lent[h.id] * (unconditional + (1 - unconditional) * closeness)
            if lend > n.relevance:
                n.relevance = lend
                n.neighbour_of = h.id
                final_score(n, weights)
    hits.sort(key=lambda h: (-h.score, -h.id))
    return hits


def similarities(hits: list[Hit]) -> np.ndarray:
    """Cosine between every two hits, in their order (0 where a hit has no vector of the current model)."""
    n = len(hits)
    with_vectors = [i for i, h in enumerate(hits) if h.embedding is not None]
    if len(with_vectors) < 2:
        return np.zeros((n, n), dtype=np.float32)
    matrix = np.array([hits[i].embedding for i in with_vectors], dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    norms[norms == 0] = 1.0
    matrix /= norms[:, None]
    if len(with_vectors) == n:
        out = matrix @ matrix.T
    else:
        out = np.zeros((n, n), dtype=np.float32)
        out[np.ix_(with_vectors, with_vectors)] = matrix @ matrix.T
    np.fill_diagonal(out, 0.0)
    return out


def diversify(hits: list[Hit], sims: np.ndarray, model: str) -> list[int]:
    """Maximal marginal relevance over the head: a second phrasing of what is already shown moves down.

    Returns the new order as positions in `hits`.
    Greedily, each place goes to the hit whose score minus DIVERSITY x relevance weight x its
    similarity (cosine rescaled from the model's floor to 1) to the closest hit already placed is the
    highest. Nothing is dropped; hits only change places within the head.
    """
    if DIVERSITY <= 0 or len(hits) < 3:
        return list(range(len(hits)))
    floor = vector_floor(model)
    penalty = DIVERSITY * settings.SEARCH_RELEVANCE_WEIGHT
    # penalty x redundancy (cosine rescaled from the floor, clipped to [0, 1]) between every two hits
    costs = (penalty * np.clip((sims - floor) / (1.0 - floor), 0.0, 1.0)).tolist()
    scores = [h.score for h in hits]
    cost = [0.0] * len(hits)
    left = list(range(len(hits)))
    order = []
    while left:
        # Ties go to the earlier hit: the higher score, then the newer id (the order hits arrive in).
        best = max(left, key=lambda i: (scores[i] - cost[i], -i))
        left.remove(best)
        order.append(best)
        row = costs[best]
        cost = [c if c >= r else r for c, r in zip(cost, row, strict=True)]
    return order


def similar_pairs(hits: list[Hit], sims: np.ndarray, model: str) -> dict[tuple[int, int], float]:
    """Pairs (smaller id first) of these hits whose vectors are at least 'related' (memory.thresholds)."""
    rows, cols = np.nonzero(np.triu(sims >= related_threshold(model), k=1))
    pairs = {}
    for i, j, sim in zip(rows.tolist(), cols.tolist(), sims[rows, cols].tolist(), strict=True):
        a, b = hits[i].id, hits[j].id
        pairs[(a, b) if a < b else (b, a)] = sim
    return pairs


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """Words and Chinese bigrams (single characters say too little about the subject).

    Remembered per text: the same memories come back search after search, and tokenising is the
    costliest step of the version ordering."""
    return frozenset(t for t in keyword_tokens(text) if len(t) > 1)


def _same_subject(wa: frozenset[str], wb: frozenset[str], min_overlap: float) -> bool:
    if not wa or not wb:
        return True
    return len(wa & wb) / len(wa | wb) >= min_overlap


def _when(row: dict):
    return row["occurred_at"] or row["created_at"]


def order_near_duplicates(hits: list[Hit], pairs: dict[tuple[int, int], float], model: str) -> list[Hit]:
    """Same-time copies collapse to the best; versions of one subject are ordered newest first in their places."""
    dup = duplicate_threshold(model)
    min_overlap = settings.SEARCH_GROUP_MIN_OVERLAP
    parent = {h.id: h.id for h in hits}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_id = {h.id: h for h in hits}
    dropped: set[int] = set()
    for (a, b), sim in sorted(pairs.items(), key=lambda kv: -kv[1]):
        ha, hb = by_id.get(a), by_id.get(b)
        if ha is None or hb is None:
            continue
        maybe_copy = (
            sim >= dup
            and ha.row["memory_type"] == hb.row["memory_type"]
            and ha.row["occurred_at"] == hb.row["occurred_at"]
        )
        # A later event does not make an earlier one out of date: events are never grouped as versions.
        is_event = EVENT in (ha.row["memory_type"], hb.row["memory_type"])
        if not maybe_copy and (is_event or find(a) == find(b)):
            continue  # nothing this pair could change
        if not _same_subject(_words(ha.row["content"]), _words(hb.row["content"]), min_overlap):
            continue
        if maybe_copy and not differs_materially(ha.row["content"], hb.row["content"]):
            worse = hb if (hb.score, hb.id) < (ha.score, ha.id) else ha
            dropped.add(worse.id)
            continue
        if not is_event:
            parent[find(a)] = find(b)
    kept = [h for h in hits if h.id not in dropped]
    groups: dict[int, list[Hit]] = {}
    for h in kept:
        groups.setdefault(find(h.id), []).append(h)
    # A group keeps the places its members earned; inside them the newest goes first, the older follow.
    # Nothing else moves, so a group never pushes an unrelated memory out of the top k.
    out = list(kept)
    position = {h.id: i for i, h in enumerate(kept)}
    for root, members in groups.items():
        if len(members) < 2:
            continue
        places = sorted(position[m.id] for m in members)
        newest_first = sorted(members, key=lambda m: (_when(m.row), m.score), reverse=True)
        for place, member in zip(places, newest_first, strict=True):
            member.group = root
            out[place] = member
    return out


def fit_budget(hits: list[Hit], *, top_k: int, max_tokens: int) -> list[Hit]:
    """Top K, then as many as fit in the token budget (an item too big is skipped, order is kept)."""
    out, used = [], 0
    for h in hits[:top_k]:
        h.tokens = estimate_tokens(h.row["content"])
        if used + h.tokens > max_tokens:
            continue
        used += h.tokens
        out.append(h)
    return out
