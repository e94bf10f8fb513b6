"""Ranking, without the database: the seed formula, conversation neighbours, diversity, near-duplicate
order and the token budget. Every function here takes hits and returns hits or an order, so each can be
tested on hand-made rows (tests/test_search_ranking.py)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
from django.conf import settings

from core.text import estimate_tokens, has_cjk, keyword_tokens

from ..dedup import differs_materially
from ..thresholds import duplicate_threshold, related_threshold
from . import query_map

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
    coverage: float = 0.0  # inverse-document-frequency share of the query's terms this memory holds
    lift: float = 0.0  # cosine above its language pair's background level (ranking.Backdrop)
    keyword_share: float = 0.0  # BM25 over the best candidate's
    fused: float = 0.0  # the two sides fused (the order within one search); the seed's relevance itself
    background: float = 0.0  # the fused match of a memory at its search's background level (Backdrop)
    # What diversify trades against redundancy: the seed's score, or the fused match with the same
    # adjustments as the score (a probability saturates near 1, where a share of it would reorder at will).
    rank_value: float = 0.0
    language_pair: str = "en-en"
    group: int | None = None
    neighbour_of: int | None = None
    stale: bool = False  # an older version of a fact a newer hit states (see current_first)
    # The hits this one was paired with as a version of one fact (version_groups), not the whole group.
    paired: set[int] = field(default_factory=set, repr=False)
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
            "keyword_coverage": round(self.coverage, 4),
            "vector_lift": round(self.lift, 4),
            "keyword_share": round(self.keyword_share, 4),
            "language_pair": self.language_pair,
            "fused": round(self.fused, 4),
            "background": round(self.background, 4),
            "relevance": round(self.relevance, 4),
            "confidence": round(self.confidence, 4),
            "scope_priority": self.scope_priority,
            "stale": self.stale,
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
        terms[english_term(token) if _ASCII_WORD.fullmatch(token) else (token, False)] = None
    return list(terms)


def english_term(word: str) -> tuple[str, bool]:
    """An English word as a query term: of four letters or more, cut to a crude stem and matched as a prefix."""
    if len(word) < 4:
        return word, False
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)], True
    return word, True


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


# Calibrated relevance per embedding model. The two sides are fused as the seed fuses them (vector 0.7,
# keyword 0.3: SEARCH_VECTOR_WEIGHT / SEARCH_KEYWORD_WEIGHT), with two changes that make the fusion mean the
# same in every language (score_hits):
# - the vector side is the cosine over its language pair's background: e5 scores two texts of one language
#   higher than a text and its translation, so a Chinese question's English answer lost to any Chinese
#   memory. Each pair (query language - memory language, "zh" for text with Chinese characters, "en" for any
#   other) is measured against the median of its own LIFT_REFERENCE best cosines among the candidates, then
#   put back on the query's own-language level (cosine - level[pair] + level[query-query]);
# - the keyword side is the geometric mean of BM25 over the best candidate's (how the match ranks here) and
#   the coverage (the inverse-document-frequency share of the query's terms the memory holds): the best of
#   weak word matches (a short filler sharing one common word) no longer counts as a full match.
# The fused match over the background's (what a memory at the background level with no word in common
# would get) is then read as P(relevant) = 1 / (1 + exp(-(a + b * (fused - background)))), one logistic per
# model, fitted on the tuning half of the bilingual set (bench/bilingual.py --fit) and checked on its
# held-out half and on LoCoMo. Within one search the order is the fused order; the probability only gives
# the score its meaning (the floor, `threshold`, the version gap).
CALIBRATION = {"multilingual-e5-small": (-5.21, 32.44)}
LIFT_REFERENCE = 20  # the median of this many best cosines of a language pair is its background level
# Where unrelated texts sit per model (same language, across languages): the median cosine of the
# candidates that do not answer, 0.819 / 0.755 on the bilingual set's tuning half and 0.817 on LoCoMo (all
# English). A language pair seen fewer than PRIOR_COUNT times among the candidates (a new subject with two
# memories, the one English memory of a Chinese subject) is completed up to that count with these, so a
# lone memory is measured against where unrelated texts sit, not against itself.
UNRELATED_COSINES = {"multilingual-e5-small": (0.82, 0.755)}
PRIOR_COUNT = 5
# The same with the query mapped alone (query_map: the model's common and language directions projected out
# of the query, the cosine put back on the model's scale), fitted and measured on the same tuning half with
# SEARCH_QUERY_MAP_WEIGHT 1: one language level, as the map intends (0.813 in one language, 0.817 across),
# and a calibration within the fit's noise of the model's own. A search weighs each pair of figures as its
# vector side weighs the two cosines (calibration, unrelated_cosines).
MAPPED_CALIBRATION = {"multilingual-e5-small": (-5.19, 32.05)}
MAPPED_UNRELATED_COSINES = {"multilingual-e5-small": (0.813, 0.817)}


def _language_gap(prior: tuple | None, table: tuple | None) -> float:
    """The gap between where unrelated texts sit in one language and across languages, for a calibrated model
    under the relevance ranking; 0 otherwise."""
    if prior is None or table is None or settings.SEARCH_RANKING == SEED:
        return 0.0
    return prior[0] - prior[1]


def cross_language_offset(model: str) -> float:
    """How much nearer than its raw cosine a memory in another language than another memory is taken when a
    hit's nearest hits are told (neighbour_similarities): the model's own gap between the languages."""
    return _language_gap(UNRELATED_COSINES.get(model), CALIBRATION.get(model))


def query_language_offset(model: str) -> float:
    """How much nearer a memory in another language than the query is taken among the vector side's
    candidates (sql.fetch_rows): the same gap between the query and the memories, which the query map
    (query_map) closes for the most part."""
    return _language_gap(unrelated_cosines(model), calibration(model))


# How far each side of the fusion is trusted in one search: as far as its best match stands out from the
# rest, in full from TRUST_LIFT (the best cosine over its language pair's level) and TRUST_COVERAGE (the
# share of the query's inverse document frequency the best BM25 match holds). Among a few dozen memories
# the best BM25 match is often a filler sharing one common word ("too", "喜欢") at full BM25-over-the-best
# strength, and in a long conversation a question whose best cosine barely clears the others' has no
# vector answer (LoCoMo dev: the best cosine is the answer for 8% of the questions with a lift under
# 0.02, 26% between 0.02 and 0.04, 55% above). Chosen on the bilingual tuning half (R@1 0.764 -> 0.790
# offline; TRUST_LIFT 0.02-0.03 tie there, 0.04 loses paraphrase R@1) and checked on LoCoMo dev.
TRUST_LIFT = 0.03
TRUST_COVERAGE = 0.3
MIN_TRUST = 0.1  # a side never trusted at all would leave its hits unordered
# A hit's keyword match counts as far as its own vector match stands out as much as the best one's (its lift over
# the best lift), but never under this share of it: a memory sharing one incidental word with the question
# ("morning", "football", "work") and meaning something else no longer beats the memory that answers it in
# other words. All kinds R@1, ten read bilingual sets 0.786 -> 0.793 (paraphrase 0.833 -> 0.846, "now" 0.747 ->
# 0.760, keyword and code-mixed unchanged); three never-read sets 0.796 -> 0.800; LoCoMo dev R@10 0.759 ->
# 0.765. At 0.5: the read sets 0.793 too but LoCoMo R@1 0.399 -> 0.375.
KEYWORD_LIFT_SHARE = 0.75
# A memory about another person's attribute ("用户的妈妈住在绵阳", "The user's parents live in Edison") answers
# a question that does not name that person ("我现在住在哪") only at this share of its fused match (holder,
# people_asked). Chosen on the second version probe ("now" R@1 0.583 -> 0.708 at 0.9 and at 0.8; 0.8 lost a
# paraphrase and half a multi-hop question at R@5); the tuning half, the held-out half and the first probe
# are unchanged at 0.9.
HOLDER_DISCOUNT = 0.9
# A search answers nothing when its best hit's calibrated relevance is under the model's floor (a question
# about a topic the subject never mentioned); when it answers, hits down to RELEVANCE_KEEP x the floor stay.
# With multilingual-e5-small the two kinds overlap: on the tuning half a floor of 0.02 leaves 16% of the
# negative questions empty and answers 99.6% of the others, 0.03 gives 24% / 98.9%, 0.1 gives 58% / 94.8%,
# 0.3 gives 89% / 78.5% (bench/bilingual.py --fit). The default keeps the answers (a missed memory costs
# more than a weak one shown) and still answers nothing for text unlike anything stored ("xyzzy"); callers
# who want silence over recall pass a higher `threshold`. Models without a calibration have no default floor.
RELEVANCE_FLOORS = {"multilingual-e5-small": 0.02}
# Hits under the floor after the first: kept (0) so a second part of a two-part question still comes back.
RELEVANCE_KEEP = 0.0
SEED = "seed"  # SEARCH_RANKING value of seed 000's formula


@dataclass(frozen=True)
class Weights:
    """How a hit's final score is made, read from the settings once per search rather than once per row.

    seed: final = relevance·0.5 + confidence·0.3 + scope_priority·0.2 (the SEARCH_*_WEIGHT settings).
    relevance (the default): final = relevance + confidence·c + scope·s, where the adjustment is at most
    SEARCH_ADJUSTMENT in all, shared between confidence and scope as the seed weights share it (3:2): a
    memory at confidence 1 gains nothing, one at 0 loses c; a session memory gains s, a user memory
    nothing. So confidence and scope break ties between comparably relevant hits and never override
    relevance."""

    seed: bool
    relevance: float
    confidence: float
    scope: float


def final_weights() -> Weights:
    confidence, scope = settings.SEARCH_CONFIDENCE_WEIGHT, settings.SEARCH_SCOPE_WEIGHT
    if settings.SEARCH_RANKING == SEED:
        return Weights(True, settings.SEARCH_RELEVANCE_WEIGHT, confidence, scope)
    share = settings.SEARCH_ADJUSTMENT / (confidence + scope) if confidence + scope > 0 else 0.0
    return Weights(False, 1.0, confidence * share, scope * share)


def final_score(h: Hit, weights: Weights | None = None) -> None:
    w = weights or final_weights()
    h.confidence = float(h.row["confidence"])
    h.scope_priority = SCOPE_PRIORITY.get(h.row["scope"], 0.6)
    # The people's feedback (MemoryItem.feedback, in (-1, 1): memory.feedback.signal) times
    # SEARCH_FEEDBACK_WEIGHT (0.05) in both: it reorders close results, never lifts an unrelated memory.
    h.feedback = max(-1.0, min(1.0, float(h.row.get("feedback") or 0.0)))
    feedback = settings.SEARCH_FEEDBACK_WEIGHT * h.feedback
    if w.seed:
        h.score = (
            w.relevance * h.relevance + w.confidence * h.confidence + w.scope * h.scope_priority + feedback
        )
        h.rank_value = h.score
        return
    scope = (h.scope_priority - SCOPE_PRIORITY["user"]) / (SCOPE_PRIORITY["session"] - SCOPE_PRIORITY["user"])
    adjusted = min(
        1.0, max(0.0, h.relevance + w.confidence * (min(1.0, h.confidence) - 1.0) + w.scope * scope)
    )
    # In [0, 1] with room for the feedback at both ends (neutral feedback: the middle of its band).
    h.score = to_score(adjusted) + feedback
    h.rank_value = h.fused + (adjusted - h.relevance) + feedback


def to_score(relevance: float) -> float:
    """Where a relevance (after confidence and scope) with neutral feedback lands on the score's scale."""
    band = settings.SEARCH_FEEDBACK_WEIGHT
    return (1.0 - 2 * band) * relevance + band


def _weighted(own: tuple | None, mapped: tuple | None, model: str) -> tuple | None:
    """A figure of the model's own query and of the mapped one, weighted as the vector side weighs them."""
    share = query_map.weight(model)
    if own is None or mapped is None or share <= 0:
        return own
    return tuple((1 - share) * a + share * b for a, b in zip(own, mapped, strict=True))


def calibration(model: str) -> tuple | None:
    return _weighted(CALIBRATION.get(model), MAPPED_CALIBRATION.get(model), model)


def unrelated_cosines(model: str) -> tuple[float, float] | None:
    """Where a query's unrelated memories sit, in one language and across (UNRELATED_COSINES)."""
    return _weighted(UNRELATED_COSINES.get(model), MAPPED_UNRELATED_COSINES.get(model), model)


def relevance_floor(model: str) -> float:
    """The default threshold of a hybrid search, as a score: SEARCH_MIN_SCORE when set, else the model's
    calibrated floor (a relevance) where it lands on the score's scale."""
    if settings.SEARCH_MIN_SCORE is not None:
        return settings.SEARCH_MIN_SCORE
    if settings.SEARCH_RANKING == SEED or calibration(model) is None:
        return 0.0
    return to_score(RELEVANCE_FLOORS.get(model, 0.0))


def language(text: str) -> str:
    return "zh" if has_cjk(text) else "en"


def language_pair(query_language: str, content: str) -> str:
    """The query's language and the memory's, "zh-en" and the like (Backdrop's levels are per pair)."""
    return f"{query_language}-{language(content)}"


@dataclass(frozen=True)
class Backdrop:
    """What one search's candidates look like: each language pair's background cosine, the query's own
    level and the fused match a background memory gets; turns a fused match into a calibrated relevance."""

    levels: dict
    level: float
    background: float
    table: tuple | None
    # At least PRIOR_COUNT candidates with a vector: the background was measured, not assumed. Under that
    # the relevance floor does not apply (a subject with three memories has no field for one to stand out
    # from, and e5-small cannot tell a lone related memory from an unrelated one by its cosine).
    measured: bool = False
    # How far each side is trusted in this search (0-1, see TRUST_LIFT): the fused match is
    # vector_weight * vector_trust * vector + keyword_weight * keyword_trust * keyword.
    vector_trust: float = 1.0
    keyword_trust: float = 1.0
    # The speakers of the transcript lines among the candidates that the question names (speaker,
    # speakers_named), and whether it asks when (asks_when): see mismatch.
    named: frozenset = frozenset()
    when: bool = False

    @classmethod
    def of(cls, hits: list[Hit], query_language: str, model: str, table: tuple | None) -> Backdrop:
        by_pair: dict[str, list[float]] = {}
        for h in hits:
            if h.vector_similarity is not None:
                by_pair.setdefault(h.language_pair, []).append(h.vector_similarity)
        prior = unrelated_cosines(model)
        levels = {}
        for pair, sims in by_pair.items():
            top = sorted(sims, reverse=True)[:LIFT_REFERENCE]
            if prior is not None and len(top) < PRIOR_COUNT:
                asked, stored = pair.split("-")
                top += [prior[0] if asked == stored else prior[1]] * (PRIOR_COUNT - len(top))
            levels[pair] = float(np.median(top))
        own = f"{query_language}-{query_language}"
        if own in levels or prior is None:
            level = levels.get(own, max(levels.values(), default=0.0))
        else:
            level = prior[0]
        vector_trust = keyword_trust = 1.0
        if table is not None:
            # Each side counts as far as its best match stands out: the best cosine over its language pair's
            # level, the best BM25 match's coverage of the query.
            lift = max((max(sims) - levels[pair] for pair, sims in by_pair.items()), default=0.0)
            vector_trust = min(1.0, max(MIN_TRUST, lift / TRUST_LIFT))
            best = max(hits, key=lambda h: h.keyword_raw, default=None)
            coverage = best.coverage if best is not None and best.keyword_raw > 0 else 0.0
            keyword_trust = min(1.0, max(MIN_TRUST, coverage / TRUST_COVERAGE))
        background = (
            settings.SEARCH_VECTOR_WEIGHT * vector_trust * rescaled(level, vector_floor(model))
            if levels
            else 0.0
        )
        measured = sum(len(sims) for sims in by_pair.values()) >= PRIOR_COUNT
        return cls(levels, level, background, table, measured, vector_trust, keyword_trust)

    def vector_side(self, h: Hit, floor: float) -> float:
        """The hit's cosine rescaled from the model's floor: put on the query's own-language level (see
        CALIBRATION) when calibrated, raw for the seed and the one-sided baselines. Sets the hit's lift."""
        if h.vector_similarity is None:
            return 0.0
        pair_level = self.levels.get(h.language_pair, self.level)
        h.lift = h.vector_similarity - pair_level
        cosine = h.vector_similarity if self.table is None else h.lift + self.level
        return rescaled(cosine, floor)

    def mismatch(self, h: Hit) -> float:
        """The share of its match a hit of the wrong kind keeps: HOLDER_DISCOUNT for a transcript line said by
        a speaker other than the one(s) the question names, and again for a memory that says no time when
        the question asks when (says_when); 1 for the others."""
        share = 1.0
        content = h.row["content"]
        if self.named and speaker(content) not in self.named:
            share *= HOLDER_DISCOUNT
        if self.when and not says_when(content):
            share *= HOLDER_DISCOUNT
        return share

    def read(self, h: Hit, fused: float) -> None:
        """Give the hit this fused match and the relevance it reads as."""
        h.fused = fused
        h.background = self.background
        h.relevance = self.relevance(fused)

    def relevance(self, fused: float) -> float:
        """P(relevant) of a fused match (the fused match itself for an uncalibrated model or the seed)."""
        if self.table is None:
            return fused
        a, b = self.table
        z = a + b * (fused - self.background)
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def lender_weights(model: str) -> tuple[float, float, float, float, float, float]:
    """Weights of the subject statement's lender order (sql._NEAR_CTE), in the order score_hits ranks:
    (rescaled vector, BM25 / best, cosine, keyword coverage, confidence, scope priority)."""
    w = final_weights()
    v, k = settings.SEARCH_VECTOR_WEIGHT, settings.SEARCH_KEYWORD_WEIGHT
    if w.seed:
        return (w.relevance * v, w.relevance * k, 0.0, 0.0, w.confidence, w.scope)
    # The fused order without the language pairs' levels (the statement does not know them), the keyword
    # side's geometric mean taken as the mean of its two parts, and without the adjustments, which are small
    # beside it.
    if calibration(model) is None:
        return (v, 0.0, 0.0, k, 0.0, 0.0)
    return (v, k / 2, 0.0, k / 2, 0.0, 0.0)


def score_hits(hits: list[Hit], model: str = "", query: str = "", *, baseline: str = "") -> Backdrop:
    """Score every hit: its relevance (calibrated, or the seed's), then the final score; best first.

    Both sides are normalised to [0, 1] (vector: cosine rescaled from the model's floor; keyword: BM25
    divided by the best candidate's in the seed formula, its geometric mean with the keyword coverage under
    "relevance", the coverage for a model without a calibration) and fused 0.7 / 0.3.
    Under "relevance" the vector side first has its language pair's bias taken out and the fused match is
    read as a calibrated probability (Backdrop, CALIBRATION). Returns the search's Backdrop, which the
    conversation neighbours are scored against.
    """
    floor = vector_floor(model)
    best_kw = max((h.keyword_raw for h in hits), default=0.0)
    vector_weight, keyword_weight = settings.SEARCH_VECTOR_WEIGHT, settings.SEARCH_KEYWORD_WEIGHT
    weights = final_weights()
    query_language = language(query)
    for h in hits:
        h.language_pair = language_pair(query_language, h.row["content"])
    table = None if weights.seed or baseline else calibration(model)
    backdrop = Backdrop.of(hits, query_language, model, table)
    asked = people_asked(query) if table is not None else frozenset()
    if table is not None:
        backdrop = replace(backdrop, named=speakers_named(query, hits), when=asks_when(query))
    for h in hits:
        h.keyword_share = h.keyword_raw / best_kw if best_kw > 0 else 0.0
        h.vector = backdrop.vector_side(h, floor)
    best_lift = max((h.lift for h in hits if h.vector_similarity is not None), default=0.0)
    for h in hits:
        if baseline == "keyword":  # BM25 alone (mode=keyword)
            h.keyword = h.keyword_share
            fused = h.keyword
        elif baseline == "vector":  # the cosine alone (mode=vector)
            fused = h.vector
        else:
            if weights.seed:
                h.keyword = h.keyword_share
            elif table is not None:
                # How the match ranks among the candidates (BM25 over the best) and how much of the query
                # it holds (coverage), geometric mean: the best of weak word matches is not a full match.
                h.keyword = math.sqrt(h.keyword_share * h.coverage)
                if h.vector_similarity is not None and best_lift > 0:  # KEYWORD_LIFT_SHARE
                    h.keyword *= min(1.0, max(KEYWORD_LIFT_SHARE, h.lift / best_lift))
            else:
                h.keyword = h.coverage
            fused = (
                vector_weight * backdrop.vector_trust * h.vector
                + keyword_weight * backdrop.keyword_trust * h.keyword
            )
        if table is not None:
            person = holder(h.row["content"])
            if person and person not in asked:
                fused *= HOLDER_DISCOUNT
            fused *= backdrop.mismatch(h)
        backdrop.read(h, fused)
        final_score(h, weights)
    hits.sort(key=lambda h: (-h.score, -h.id))
    return backdrop


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


def add_neighbours(
    hits: list[Hit],
    top: list[Hit],
    rows: list[dict],
    *,
    model: str,
    query: str = "",
    backdrop: Backdrop | None = None,
) -> list[Hit]:
    """Conversation context: a turn next to a strong match is likely part of the answer.

    Turns stored verbatim from a conversation are short and lean on each other ("Thanks! It stands for
    freedom" answers the question before it). Each of the best hits (`top`, see neighbour_lenders) lends
    its neighbours (the rows stored just before and after it, from the same conversation: same subject,
    session and time) up to SEARCH_NEIGHBOUR_WEIGHT of its fused match, which is then read as a relevance
    against the search's `backdrop` (score_hits' return) like any candidate's. `rows` are the neighbours that
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
    query_language = language(query)
    if backdrop is None:
        backdrop = Backdrop.of(hits, query_language, model, None)
    vector_weight = settings.SEARCH_VECTOR_WEIGHT
    for row in rows:
        if row["id"] in by_id:
            continue
        h = Hit(row=row, vector_similarity=row.pop("vsim"), keyword_raw=0.0, embedding=row.pop("emb"))
        h.language_pair = language_pair(query_language, row["content"])
        h.vector = backdrop.vector_side(h, floor)
        # Not a candidate: no word in common with the query, its vector match alone.
        backdrop.read(h, vector_weight * backdrop.vector_trust * h.vector * backdrop.mismatch(h))
        final_score(h, weights)
        by_id[h.id] = h
        hits.append(h)
    lent = {h.id: h.fused for h in top}
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
            lend *= backdrop.mismatch(n)
            if lend > n.fused:
                backdrop.read(n, lend)
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
    Greedily, each place goes to the hit whose rank value (the seed's score, or the fused match with the
    score's adjustments) minus a penalty times its similarity (cosine rescaled from the model's floor to 1)
    to the closest hit already placed is the highest. The penalty is DIVERSITY x the weight of relevance in
    that value (SEARCH_RELEVANCE_WEIGHT in the seed's score, 1 in the fused match). Nothing is dropped; hits
    only change places within the head.
    """
    if DIVERSITY <= 0 or len(hits) < 3:
        return list(range(len(hits)))
    floor = vector_floor(model)
    # redundancy (cosine rescaled from the floor, clipped to [0, 1]) between every two hits, times the penalty
    redundancy = np.clip((sims - floor) / (1.0 - floor), 0.0, 1.0)
    scores = [h.rank_value for h in hits]
    weight = settings.SEARCH_RELEVANCE_WEIGHT if final_weights().seed else 1.0
    costs = (DIVERSITY * weight * redundancy).tolist()
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
    common = len(wa & wb)
    return common / (len(wa) + len(wb) - common) >= min_overlap  # the Jaccard overlap, without the union


def _when(row: dict):
    return row["occurred_at"] or row["created_at"]


def order_near_duplicates(
    hits: list[Hit], pairs: dict[tuple[int, int], float], model: str, *, versions: bool = True
) -> list[Hit]:
    """Same-time copies collapse to the best; with `versions`, versions of one subject are ordered newest
    first in their places.

    The versions here are any two related hits that share enough words, whatever their relevance: under
    the seed formula that is the version order. The relevance ranking passes versions=False and orders
    versions with version_groups and current_first, which ask that both answer the query: here "The user
    is from Halifax, Nova Scotia" (2023) took the place of "The user's brother Liam is a lobster fisherman
    in Nova Scotia" (2021) for "我兄弟是做什么的", and the answer went to the place of the filler, 8th."""
    dup = duplicate_threshold(model)
    min_overlap = settings.SEARCH_GROUP_MIN_OVERLAP
    parent = {h.id: h.id for h in hits}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_id = {h.id: h for h in hits}
    words = {h.id: _words(h.row["content"]) for h in hits}
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
        if not maybe_copy and (is_event or not versions or find(a) == find(b)):
            continue  # nothing this pair could change
        if not _same_subject(words[a], words[b], min_overlap):
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


# ---- the current fact first -------------------------------------------------------------------------

# A question about the past: "before", "used to", "in 2022", "以前", "之前", "2022年".
_PAST = re.compile(
    r"\b(?:before|used\s+to|previous(?:ly)?|former(?:ly)?|originally|earlier|back\s+(?:in|then)|at\s+the\s+time"
    r"|ago|last\s+year|old\s+(?:one|job|address|place|flat|house|car|phone|company|employer)|until)\b"
    r"|以前|之前|原来|原先|曾经|过去|当时|那时|早先|从前|以往|去年|前任|旧的"
    r"|(?:搬家|跳槽|涨价|买|合租|结婚|毕业|入职|离职|调整|换|改)[^，。？?\s]{0,6}?前(?![端面台天往进])",
    re.I,
)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
# A question about the present: "now", "currently", "these days", "现在", "目前".
_PRESENT = re.compile(
    r"\b(?:now|current(?:ly)?|these\s+days|at\s+the\s+moment|nowadays|still|today)\b|现在|目前|如今|当前|眼下|最近",
    re.I,
)
# Two hits are versions of one fact for this query when their vectors are at least "related"
# (memory.thresholds), they name the same specific attribute (memory.classify.slots, less the broad ones
# that also hold side by side) or the newer one states a change ("now", "switched", "换了",
# memory.dedup.changed), and both answer the query: for a question about the present or the past, any
# two in the head; otherwise only two whose calibrated relevance is within VERSION_GAP and that are each
# other's most similar hit in the head (mutual nearest neighbours). The last condition holds with any
# model's level of unrelated texts: with e5-small unrelated memories reach the "related" cosine, so a
# newer filler saying "switched…" made a true answer "stale" (bilingual tuning half: R@10 0.972 -> 0.985,
# "now" and "past" unchanged, since their questions name the versions they ask about).
VERSION_GAP = 0.25
# The calibrated relevance at which two related hits both answer a question about a time (version_groups).
# Bilingual tuning half, "now" / "past" R@1: 0.533 / 0.600 without it, 0.767 / 0.767 at 0.15 (one
# code-mixed question lost at R@1-R@10), 0.700 / 0.733 at 0.3, 0.633 / 0.733 at 0.5; the version probe
# (bench/data/bilingual_probe.jsonl): 0.483 / 0.400, 0.567 / 0.500, 0.533 / 0.483, 0.533 / 0.467.
VERSION_BOTH_ANSWER = 0.3
# ... and, unless the newer one states a change ("跑鞋换成了 Hoka"), the weaker of the two has at least this share
# of the stronger's relevance: "用户计划明年带Rosie回上海住三个月" (0.34) is no newer version of "用户的翻译报价是每个
# 英文词0.08英镑" (0.99) for "我现在每个词收多少钱？". R@1 "now" / "past": probe5 0.542 -> 0.625, probe9 (never read)
# 0.458 -> 0.500, probe10 0.542 -> 0.583, probe8 0.792 -> 0.750 (a newer value in the other language that states
# no change: "用户用 YNAB 管理预算"), probe3 "past" 0.708 -> 0.750; the other sets unchanged.
VERSION_BOTH_SHARE = 0.5
# For a question about a time, two hits that do not both answer it are versions only when one is among the
# other's this many most similar hits. Tuning half "now" / "past" R@1 0.700 / 0.733 -> 0.633 / 0.700, the
# version probe 0.533 / 0.483 -> 0.550 / 0.617 (2 neighbours: the same R@1, probe R@10 0.970 against 0.976).
VERSION_NEIGHBOURS = 3
_BROAD_SLOTS = {"tool", "schedule", "team", "pet", "price", "language", "preference", "name", "status"}


def question_time(query: str, now_year: int) -> tuple[str, int | None]:
    """("past" | "present" | "", the year it names if any before this one)."""
    years = [int(y) for y in _YEAR.findall(query) if int(y) < now_year]
    if years or _PAST.search(query):
        return "past", (max(years) if years else None)
    return ("present" if _PRESENT.search(query) else ""), None


# "What did I drive before the Tesla?", "Where did I live before Manchester?", "换数位屏之前我是用什么画画的？",
# "我当摄影师之前是干什么的？": the question names the newer value (X) and asks for the one before it. X's words
# and the memory stating X match the question best, so that memory came first.
_BEFORE_EN = re.compile(r"\bbefore\s+(?!(?:that|then|now|this|it)\b)([^?？.!,，]+)", re.I)
_BEFORE_ZH = re.compile(r"([\u4e00-\u9fffA-Za-z0-9 ]{2,12}?)(?:之前|以前|前)(?![端面台天年月周往进])")
_BEFORE_STOP = frozenset("i we my the a an our me us he she they i'd i'm had got".split())


def _related(a: Hit, b: Hit, sim: float, model: str) -> bool:
    """The two hits are at least "related" (memory.thresholds; across languages its cross-lingual level)."""
    from ..dedup import is_cross_lingual

    cross = is_cross_lingual(a.row["content"], b.row["content"])
    return sim >= related_threshold(model, cross_lingual=cross)


def before_what(query: str) -> frozenset[str]:
    """The words of X in a question about the value before X ("before the Tesla", "读博之前"); empty when the
    question names no X ("我以前住在哪", "which phone did I have before?")."""
    match = _BEFORE_EN.search(query)
    if match:
        words = {w for w in _words(match.group(1)) if w.lower() not in _BEFORE_STOP}
        return frozenset(words)
    match = _BEFORE_ZH.search(query)
    if match:
        named = re.sub(r"^(?:我们|我|用户|咱们|咱)", "", match.group(1).strip())
        if len(named) >= 2:
            return _words(named)
    return frozenset()


def previous_first(hits: list[Hit], sims: np.ndarray, named: frozenset[str], model: str) -> list[Hit]:
    """For a question about the value before X: the hit holding most of X's words (at least half; the
    best-placed of equals) is the newer value; of the older hits close to it (at least "related", among its
    VERSION_NEIGHBOURS nearest, about the same person), the one with the highest similarity to it plus its own
    fused match goes first, right before it. Nothing else moves.
    `sims` are the hits' similarities in `hits`' order."""
    if not named or len(hits) < 2:
        return hits
    shared = [len(named & _words(h.row["content"])) for h in hits]
    pivot = max(range(len(hits)), key=lambda i: (shared[i], -i))
    if shared[pivot] * 2 < len(named):
        return hits
    p = hits[pivot]
    when, person = _version_time(p.row), holder(p.row["content"])
    older = [
        j
        for j, h in enumerate(hits)
        if j != pivot
        and h.neighbour_of is None
        and _version_time(h.row) < when
        and holder(h.row["content"]) == person
        and _related(p, h, sims[pivot, j], model)
    ]
    # As for versions (version_groups): with e5-small unrelated texts reach "related", so the older one must be
    # among the newer one's VERSION_NEIGHBOURS most similar hits ("用户英文不错，雅思考过7.5分" is "related" to
    # "把奶茶戒了" too).
    near = neighbour_similarities(hits, sims, model)
    close = set(np.argsort(-near[pivot])[: VERSION_NEIGHBOURS + 1].tolist())
    older = [j for j in older if j in close]
    if not older:
        return hits
    # of the older ones close to it, the closest that also answers the question: its similarity to the named one
    # plus its fused match ("用户和 Emily 在夏威夷结婚" is as close to "bought a house in Redmond" as the flat
    # before it, but "where did I live before …" asks for the flat)
    best = max(older, key=lambda j: sims[pivot, j] + hits[j].fused)
    if best < pivot:  # above it already
        return hits
    first = hits[best]
    rest = [h for j, h in enumerate(hits) if j != best]
    first.score = max(first.score, p.score)
    return rest[:pivot] + [first] + rest[pivot:]


def keyword_text(query: str, when: str) -> str:
    """What the keyword side matches of a question: a question about now less its words about now.

    "now" / "现在" say when the answer holds, not what it is about; matched as words they made a memory
    about something else that says "now" ("The user's thesis defense is now set for August", "用户现在主要
    用Cursor写代码") a strong match for "Where do I work now?", and then, answering "as well", the newest
    version of the answer. The vector side still reads the whole question."""
    return _PRESENT.sub(" ", query) if when == "present" else query


def _version_time(row: dict):
    return row.get("valid_from") or row["occurred_at"] or row["created_at"]


# Whose attribute a memory states: the subject's own, or a relative's or a friend's ("用户的妈妈住在绵阳",
# "The user's brother Liam is a lobster fisherman", "Partner João runs a surf school"). Two memories about
# different people are never versions of one fact: the mother's city is not the user's old address.
# Each name maps to one person, so "mum" and "mother" are one holder.
_PEOPLE = {
    "mother": "妈妈 母亲 老妈 mother mom mum mama",
    "father": "爸爸 父亲 老爸 father dad papa",
    "parents": "父母 爸妈 双亲 parents",
    "in-laws": "岳父母 岳父 岳母 公婆 公公 婆婆 in-laws mother-in-law father-in-law parents-in-law",
    "spouse": "老公 丈夫 老婆 妻子 太太 爱人 先生 媳妇 老伴 夫人 内人 另一半 husband wife spouse hubby",
    "partner": "男朋友 女朋友 男友 女友 对象 伴侣 未婚夫 未婚妻 partner boyfriend girlfriend fiance fiancé fiancee fiancée",
    "ex": "前任 前男友 前女友 前妻 前夫 ex ex-wife ex-husband ex-boyfriend ex-girlfriend",
    "child": "儿子 女儿 孩子 小孩 宝宝 闺女 son daughter kid kids child children baby",
    "sibling": "哥哥 姐姐 弟弟 妹妹 兄弟 姐妹 brother sister sibling siblings",
    "grandparent": "爷爷 奶奶 外公 外婆 姥姥 姥爷 grandmother grandma grandfather grandpa grandparents",
    "grandchild": "孙子 孙女 外孙 外孙女 grandson granddaughter grandchildren grandkids",
    "relative": "表弟 表妹 表哥 表姐 堂弟 堂妹 堂哥 堂姐 舅舅 阿姨 叔叔 姑姑 亲戚 cousin aunt uncle niece nephew",
    "friend": "朋友 闺蜜 室友 舍友 邻居 同学 friend friends roommate flatmate housemate neighbour neighbor",
}
_PERSON = {word: person for person, words in _PEOPLE.items() for word in words.split()}
_ZH_PEOPLE = "|".join(sorted((w for w in _PERSON if has_cjk(w)), key=len, reverse=True))
_EN_PEOPLE = "|".join(sorted((re.escape(w) for w in _PERSON if not has_cjk(w)), key=len, reverse=True))
_HOLDER = re.compile(
    rf"^(?:用户|我)?的?({_ZH_PEOPLE})(?!圈)"  # 朋友圈: WeChat Moments, no friend
    rf"|^(?:(?:the\s+)?user['’]s|my|her|his|their)?\s*(?:(?:older|younger|little|big|elder|best|late|step)\s+)?"
    rf"({_EN_PEOPLE})(?:['’]s)?\b",
    re.I,
)


@lru_cache(maxsize=8192)
def holder(text: str) -> str:
    """Whose attribute the memory states: "" for the subject's own, else the person ("mother", "partner")."""
    match = _HOLDER.match(text.strip())
    if match is None:
        return ""
    return _PERSON.get((match.group(1) or match.group(2)).lower(), "")


# How a question names a person ("我妈", "my mum's", "父母"): the holders' words, and the short Chinese forms.
_SHORT_ZH = {
    "妈": "mother",
    "爸": "father",
    "哥": "sibling",
    "姐": "sibling",
    "弟": "sibling",
    "妹": "sibling",
}


def _latin_words(query: str) -> set[str]:
    """The question's Latin words, lower-cased ("caroline" of "Caroline's"): what names are matched against."""
    return set(re.findall(r"[a-z][a-z-]*", query.lower()))


def people_asked(query: str) -> frozenset[str]:
    """The people (holder names) a question mentions."""
    lowered = query.lower()
    words = _latin_words(query)
    found = {
        person for word, person in _PERSON.items() if (word in lowered if has_cjk(word) else word in words)
    }
    found |= {person for char, person in _SHORT_ZH.items() if char in query}
    return frozenset(found)


# A line of a transcript stored as it was said ("Caroline: I went to a support group yesterday", "王磊：我下周
# 去杭州"): a name of one to three capitalised words, or two to four Chinese characters, then a colon.
_SPEAKER = re.compile(r"^(?:([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2})|([\u4e00-\u9fff]{2,4}))\s?[:：]\s*")


@lru_cache(maxsize=8192)
def speaker(text: str) -> str:
    """Who said a transcript line: the first word of its speaker's name, lower-cased ("" when it is none)."""
    match = _SPEAKER.match(text)
    if match is None:
        return ""
    if match.group(1):
        return match.group(1).split()[0].lower()
    return match.group(2)


def speakers_named(query: str, hits: list[Hit]) -> frozenset[str]:
    """The speakers of the candidates' transcript lines that the question names ("What did Caroline
    research?"). In a conversation a question about one person is answered by that person's lines: on
    LoCoMo dev 928 of the 965 evidence turns of the questions naming one speaker are that speaker's."""
    said = {speaker(h.row["content"]) for h in hits} - {""}
    if not said:
        return frozenset()
    words = _latin_words(query)
    return frozenset(s for s in said if (s in query if has_cjk(s) else s in words))


# A question that asks when ("When did…", "How long ago…", "什么时候", "哪一年") is answered by a memory that
# says when: a date, a day, a relative time ("yesterday", "last week", "去年", "上个月"). On LoCoMo dev 82% of
# the evidence turns among the 20 best hits of such questions say a time, 22% of the other hits.
_ASKS_WHEN = re.compile(
    r"^\W*(?:when|how long|what (?:year|month|date|day|time))\b|什么时候|何时|哪一?年|哪个月|几月|哪一?天|多久|多长时间",
    re.I,
)
_SAYS_WHEN = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|ago|since|recently|lately|(?:week|weekend|month|year|day)s?"
    r"|morning|afternoon|evening|night|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|january|february|march"
    r"|april|may|june|july|august|september|october|november|december|spring|summer|autumn|fall|winter"
    r"|(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)|\d{1,2}[/.-]\d{1,2})\b"
    r"|[昨今明前后][天年]|去年|[上下这本]个?(?:周|星期|月|礼拜)|周[一二三四五六日末]|星期[一二三四五六日天]"
    r"|[\d一二三四五六七八九十两几]+(?:年|月|日|号|天|周|个月|星期)|春节|国庆|寒假|暑假|最近|刚刚|那时|当时",
    re.I,
)


def asks_when(query: str) -> bool:
    return bool(_ASKS_WHEN.search(query))


@lru_cache(maxsize=8192)
def says_when(text: str) -> bool:
    return bool(_SAYS_WHEN.search(text))


# A move told as an event in Chinese ("用户一家搬到了成都高新区", "搬进了新小区"): the new value of where one lives,
# as "moved" is in English (memory.dedup.changed, which the write path shares, does not list it).
_MOVED_ZH = re.compile(r"搬到|搬去|搬进|搬回|搬家")


def states_change(text: str) -> bool:
    """The text states a change of value ("switched to…", "现在…", "搬到了…"), not only a happening."""
    from ..dedup import changed

    return changed(text) or bool(_MOVED_ZH.search(text))


def _same_slot(a: Hit, b: Hit) -> bool:
    """The two name the same specific attribute (memory.classify.slots, less the broad ones)."""
    from ..classify import slots

    return bool((slots(a.row["content"]) & slots(b.row["content"])) - _BROAD_SLOTS)


# A hit's background in one language (neighbour_similarities) is measured from at least this many other hits
# in it; with fewer, it is its background in the other language moved by the model's gap between them.
NEIGHBOUR_LEVEL_COUNT = 3


def _row_medians(rows: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Each row's median over its `count` values that are not NaN (every row has one): np.nanmedian's figures,
    which it computes through masked arrays at about a millisecond a search."""
    ordered = np.sort(rows, axis=1)  # NaN last
    at = np.arange(len(rows))
    return (ordered[at, (count - 1) // 2] + ordered[at, count // 2]) / 2


def neighbour_similarities(hits: list[Hit], sims: np.ndarray, model: str) -> np.ndarray:
    """The similarities by which a hit's nearest hits are told (version_groups, previous_first): each hit's
    cosine with another over its own background in the other's language (the median of its cosines with the
    other hits of that language), so that the languages compare on one level, as the query's language pairs
    do (Backdrop). With e5-small a Chinese memory's nearest hits are Chinese whatever they say (unrelated pairs
    sit at 0.82 in one language, 0.755 across), so the English new value of a Chinese old one ("The user drives
    a blue Tesla Model 3." / "用户开一辆白色的大众朗逸。") was never among either's nearest, and the old value stayed
    first for "我现在开的是什么车？". Adding the model's gap between the two levels to every pair across languages
    (cross_language_offset), as it did before, made an unrelated Chinese filler the nearest hit of an English
    memory whose own next version was a related English one ("Traded the Odyssey for a used Subaru Outback" /
    "Drives a 2012 Honda Odyssey minivan"): a hit's levels are its own. A language with fewer than
    NEIGHBOUR_LEVEL_COUNT other hits takes its level from the other language's and the model's gap; with neither,
    the gap alone, as before. A hit is never its own neighbour (its diagonal is the lowest). Whether two hits
    are related at all is still read from their own cosine."""
    offset = cross_language_offset(model)
    n = len(hits)
    if not offset or n < 2:
        return sims
    # across languages as dedup.is_cross_lingual has it (one Chinese, the other not), read once per hit
    chinese = np.array([language(h.row["content"]) == "zh" for h in hits])
    others = sims.astype(np.float64)
    np.fill_diagonal(others, np.nan)
    levels = np.full((n, 2), np.nan)  # each hit's background among the English (0) and the Chinese (1) hits
    for side in (0, 1):
        columns = others[:, chinese == bool(side)]
        count = np.sum(~np.isnan(columns), axis=1)
        enough = count >= NEIGHBOUR_LEVEL_COUNT
        if enough.any():
            levels[enough, side] = _row_medians(columns[enough], count[enough])
    own = chinese.astype(int)
    rows = np.arange(n)
    mine, theirs = levels[rows, own], levels[rows, 1 - own]
    neither = np.isnan(mine) & np.isnan(theirs)
    mine = np.where(np.isnan(mine), theirs + offset, mine)
    theirs = np.where(np.isnan(theirs), mine - offset, theirs)
    mine[neither], theirs[neither] = 0.0, -offset
    level = np.where(chinese[None, :] == chinese[:, None], mine[:, None], theirs[:, None])
    near = (sims - level).astype(np.float32)
    np.fill_diagonal(near, -2.0)
    return near


def version_groups(
    hits: list[Hit],
    sims: np.ndarray,
    model: str,
    floor: float,
    *,
    gap: float = VERSION_GAP,
    mutual: bool = True,
) -> list[list[Hit]]:
    """Groups of hits (in `hits`' order) that state one attribute at different times, for this query.

    mutual: two hits pair only when each is the other's most similar hit (see VERSION_GAP)."""
    from ..dedup import changed

    parent = list(range(len(hits)))
    near = neighbour_similarities(hits, sims, model)
    nearest = (np.argmax(near, axis=1) if len(hits) > 1 else np.zeros(len(hits), dtype=int)).tolist()
    close = (
        None if mutual else [set(row.tolist()) for row in np.argsort(-near, axis=1)[:, :VERSION_NEIGHBOURS]]
    )
    # Per hit once: whether it may be a version at all, and its time (the pair loop is quadratic).
    # An event is a happening, not a state, except one that states a change ("Switched to an iPhone 14",
    # "用户换了 iPhone 15 Pro"): that is the attribute's new value, told as the moment it changed.
    able = [h.neighbour_of is None and not h.score < floor for h in hits]
    # An event that states no change ("用户和老伴搬进了温江区的新小区", "Bought a Steam Deck") is a version only for a
    # question about a time, and only of its own most similar hit, which must be it in turn; a line of a
    # transcript ("Caroline: I went to…", speaker) never: it is something said, not the state of an attribute
    # (LoCoMo dev R@1 0.390 -> 0.384 when it was).
    state = [h.row["memory_type"] != EVENT or states_change(h.row["content"]) for h in hits]
    said = [bool(speaker(h.row["content"])) for h in hits]
    times = [_version_time(h.row) for h in hits]
    holders = [holder(h.row["content"]) for h in hits]

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(hits):
        if not able[i]:
            continue
        for j in range(i + 1, len(hits)):
            if not able[j]:
                continue
            b = hits[j]
            if abs(a.relevance - b.relevance) > gap or times[i] == times[j]:
                continue
            # The cheapest test first: with `mutual` only a hit's most similar one can pair with it.
            if mutual and not (nearest[i] == j and nearest[j] == i):
                continue
            if not _related(a, b, sims[i, j], model):
                continue
            if holders[i] != holders[j]:
                continue
            older, newer = (a, b) if times[i] < times[j] else (b, a)
            # For a question about a time, two related hits that both answer it are taken as versions even
            # when neither names the attribute or says what changed ("Drives a Honda Civic" / "Leases a Kia
            # EV6"): the question says that its answer changed.
            both_answer = (
                not mutual
                and min(a.relevance, b.relevance) >= VERSION_BOTH_ANSWER
                and (
                    min(a.relevance, b.relevance) >= VERSION_BOTH_SHARE * max(a.relevance, b.relevance)
                    or states_change(newer.row["content"])
                )
            )
            # Otherwise the two must be close to each other, not just "related": one of them among the
            # other's VERSION_NEIGHBOURS most similar hits, so a newer memory about something else that says
            # "现在…" or "switched…" is not taken for the answer's new version.
            if not mutual and not both_answer and not (j in close[i] or i in close[j]):
                continue
            # A change word alone ("…is now set for August", "switched her Medicare plan") says that
            # something changed, not what: then the two must be each other's most similar hit. So must two
            # that neither name one attribute nor say what changed, for a question about a time.
            mutual_nearest = nearest[i] == j and nearest[j] == i
            if not (state[i] and state[j]) and (mutual or not mutual_nearest or said[i] or said[j]):
                continue
            if (
                both_answer
                or _same_slot(older, newer)
                or mutual_nearest
                and (not mutual or changed(newer.row["content"]))
            ):
                parent[find(j)] = find(i)
                a.paired.add(b.id)
                b.paired.add(a.id)
    groups: dict[int, list[Hit]] = {}
    for i, h in enumerate(hits):
        groups.setdefault(find(i), []).append(h)
    return [g for g in groups.values() if len(g) > 1]


def current_first(
    hits: list[Hit], groups: list[list[Hit]], *, past: bool, year: int | None, floor: float
) -> list[Hit]:
    """The version valid now first; older versions drop below the other relevant hits (nothing is deleted).

    The versions are the group's best-placed member and the members paired with it (Hit.paired): a group
    is joined pair by pair, and a member only paired with another member is no version of the answer.
    For a question about the past the version of that time goes first instead (the newest one stated by
    the end of the year the question names, else the oldest) and nothing drops. The first version takes
    the group's best place and score, and the group's other members follow it right after (in their
    order), not in the places they had: a group can be wrong (a newer memory about something else that
    answers the question too, or says "switched…"), and the answer it put second must stay near the top.
    An older version drops only when the two surely state one attribute (_same_slot: the same specific
    attribute named in both; a change word alone is not enough); it then goes after the last hit at or
    above the floor that does not drop, with a score just under it."""
    if not groups:
        return hits
    out = list(hits)
    stale: list[Hit] = []
    for members in groups:
        ids = {m.id for m in members}
        place = min(i for i, h in enumerate(out) if h.id in ids)
        # The group's best-placed member and the members paired with it take part; the others joined the
        # group through one of those (a newer memory about something else resembling the new version:
        # "热水器…刚换了台新的" beside "换了 iPhone 15 Pro" beside "手机是华为 Mate 40") and are no version of it.
        anchor = out[place]
        able = [m for m in members if m is anchor or anchor.id in m.paired]
        by_time = sorted(able, key=lambda m: (_version_time(m.row), m.score))
        if past:
            if year is not None:
                upto = [m for m in by_time if _version_time(m.row).year <= year]
                first = upto[-1] if upto else by_time[0]
            else:
                first = by_time[0]
        else:
            first = by_time[-1]
        rest = [h for h in out if h.id in ids and h is not first]
        for m in members:  # explain's near_duplicate_group: versions of one fact share it
            m.group = first.id
        first.score = max(m.score for m in members)
        out = [h for h in out if h.id not in ids]
        out[place:place] = [first, *rest]
        if not past:
            for m in rest:
                if _same_slot(m, first):
                    m.stale = True
                    stale.append(m)
    if not stale:
        return out
    kept = [h for h in out if not h.stale]
    last = max((i for i, h in enumerate(kept) if h.score >= floor), default=-1)
    under = min(h.score for h in kept[: last + 1]) if last >= 0 else None
    for m in stale:
        if under is not None:
            m.score = max(0.0, min(m.score, under - 0.001))
    stale.sort(key=lambda m: -m.score)
    return kept[: last + 1] + stale + kept[last + 1 :]
