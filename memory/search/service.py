"""memory_search: the memories most useful for a query that the actor may read, best first, in a budget.

How the candidates are gathered is in sql.py, how they are ranked in ranking.py."""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from dataclasses import dataclass, field

import numpy as np
from cachetools import TTLCache
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from core.text import CJK_CHAR, has_cjk
from projects.access import Actor

from ..embeddings import EmbeddingError, cached_provider_for
from ..selectors import MemoryFilters
from . import query_map
from .access_counts import access_recorder
from .crosslingual import translations
from .ranking import (
    NEIGHBOUR_STEPS,
    RELEVANCE_KEEP,
    SEED,
    VERSION_GAP,
    Backdrop,
    Hit,
    add_neighbours,
    before_what,
    current_first,
    diversify,
    fit_budget,
    keyword_text,
    neighbour_lenders,
    order_near_duplicates,
    previous_first,
    query_language_offset,
    query_terms,
    question_time,
    relevance_floor,
    score_hits,
    similar_pairs,
    similarities,
    version_groups,
)
from .sql import decode_json, fetch_rows, filter_sql, ids_statement, keyword_keys, run_statements

log = logging.getLogger(__name__)

# The longest query text accepted (API, tools, context): any text up to it is answered, and a long one
# costs about what a short one does. The embedding model reads the query's first EMBED_QUERY_UNITS "units"
# (its full 512 tokens cost about a second on two cores; a question is at the start of a paste): a Chinese,
# Japanese or Korean character is about one of the model's tokens, a Latin character about a quarter of one,
# so 256 Latin characters or 64 Chinese ones, either about 70 ms (256 Chinese characters took 150-250 ms). The
# keyword side reads the first KEYWORD_QUERY_CHARS (tokenised, at most ranking.MAX_QUERY_TERMS distinct terms).
MAX_QUERY_CHARS = 32_000
EMBED_QUERY_UNITS = 64
KEYWORD_QUERY_CHARS = 600


def embed_part(query: str) -> str:
    """The start of the query the embedding model reads: EMBED_QUERY_UNITS, a CJK character one, others 1/4."""
    if len(query) <= EMBED_QUERY_UNITS:
        return query
    units = 0.0
    for k, char in enumerate(query):
        units += 1.0 if CJK_CHAR.match(char) else 0.25
        if units > EMBED_QUERY_UNITS:
            return query[:k]
    return query


def keyword_part(query: str) -> str:
    """The query's first KEYWORD_QUERY_CHARS characters, to the end of the word there: a word longer than
    that (stored as one hashed token) is still found whole."""
    if len(query) <= KEYWORD_QUERY_CHARS:
        return query
    space = re.search(r"\s", query[KEYWORD_QUERY_CHARS:])
    return query if space is None else query[: KEYWORD_QUERY_CHARS + space.start()]


# Each side brings at least this many candidates per result asked for (4 gave the same LoCoMo recall).
CANDIDATES_PER_RESULT = 3


class SearchError(ValueError):
    """The query cannot be run as asked (bad input the serializer could not catch)."""


@dataclass
class SearchResult:
    hits: list[Hit]
    took_ms: float
    embed_ms: float = 0.0
    model: str = ""
    candidates: int = 0
    notes: list[str] = field(default_factory=list)


def context_and_duplicates(
    hits: list[Hit],
    where_sql: tuple[str, list],
    *,
    qvec: np.ndarray | None,
    model: str,
    top_k: int,
    near: list[dict] | None = None,
    query: str = "",
    floor: float = 0.0,
    backdrop: Backdrop | None = None,
    asked: tuple[str, int | None] = ("", None),
    similarity: tuple[float, float] = query_map.IDENTITY,
) -> list[Hit]:
    """Conversation neighbours (add_neighbours), then the near-duplicate order of the head (top_k * 2).

    `asked` is the question's time (ranking.question_time), which decides how versions are ordered.

    Neighbours that are not candidates come with the subject statement (`near`); after a broad search
    they are fetched in one more round trip, and only when a lender may have some (rows stored at a
    lender's time). The similar pairs of the head are computed here from the vectors the statements
    returned.
    """
    top = neighbour_lenders(hits, top_k)
    known = {h.id for h in hits}
    missing = sorted({h.id + d for h in top for d in NEIGHBOUR_STEPS} - known)
    fetched = []
    if near is not None:
        wanted = set(missing)
        fetched = [row for row in near if row["id"] in wanted]
    elif missing:
        times = sorted({h.row["occurred_at"] for h in top})
        statement = ids_statement(
            where_sql, ids=missing, times=times, qvec=qvec, model=model, similarity=similarity
        )
        fetched = run_statements([statement])[0]
    # A lender lends only to the rows next to it (NEIGHBOUR_STEPS): with none of them among the hits or the
    # fetched rows add_neighbours would change nothing (the hits are in its order already, score_hits').
    if fetched or any(h.id + d in known for h in top for d in NEIGHBOUR_STEPS):
        hits = add_neighbours(hits, top, fetched, model=model, query=query, backdrop=backdrop)
    if len(hits) > 1:
        head = hits[: top_k * 2]
        sims = similarities(head)
        order = diversify(head, sims, model)
        head = [head[i] for i in order]
        sims = sims[np.ix_(order, order)]
        pairs = similar_pairs(head, sims, model)
        place = {h.id: i for i, h in enumerate(head)}
        head = order_near_duplicates(head, pairs, model, versions=settings.SEARCH_RANKING == SEED)
        if settings.SEARCH_RANKING == SEED:
            # The seed formula ranks as it always did: on the bilingual set the version groups below lift
            # "now" questions but cost R@5 overall under it (0.848 against 0.930 held out).
            return head + hits[top_k * 2 :]
        # The current fact first (or, for a question about the past, the version of that time).
        when, year = asked
        # Without a word about time only hits that answer the query (at or above the model's floor whatever
        # the threshold) are versions: a newer memory that merely resembles an answer must not push the
        # answer down as "stale". A question about now or the past asks for the versions themselves.
        version_floor = floor if when else max(floor, relevance_floor(model))
        # The similarities of the head as order_near_duplicates left it: the same pairs' values, reordered.
        kept = [place[h.id] for h in head]
        groups = version_groups(
            head,
            sims[np.ix_(kept, kept)],
            model,
            version_floor,
            gap=1.0 if when else VERSION_GAP,
            mutual=not when,
        )
        head = current_first(head, groups, past=when == "past", year=year, floor=floor)
        # "What did I drive before the Tesla?": the value before the one the question names goes first.
        named = before_what(query) if when == "past" else frozenset()
        if named:
            order = [place[h.id] for h in head]
            head = previous_first(head, sims[np.ix_(order, order)], named, model)
        hits = head + hits[top_k * 2 :]
    return hits


# Subjects found too big for the one-pass statement lately: straight to the indexes for ten minutes.
_big_subjects: TTLCache = TTLCache(maxsize=1024, ttl=600)
_big_lock = threading.Lock()


def _subject_key(actor: Actor, filters: MemoryFilters) -> tuple:
    return (actor.org.pk, filters.user_id)


def _exact_subject(actor: Actor, filters: MemoryFilters) -> bool:
    """Search a subject's own memories in one pass (see sql._SUBJECT_CTES) unless it was found too big lately."""
    if not filters.user_id or filters.project is not None or settings.SEARCH_EXACT_SUBJECT_ROWS <= 0:
        return False
    with _big_lock:
        return _subject_key(actor, filters) not in _big_subjects


def _big_subject(actor: Actor, filters: MemoryFilters) -> None:
    with _big_lock:
        _big_subjects[_subject_key(actor, filters)] = True


def memory_search(
    *,
    actor: Actor,
    query: str,
    filters: MemoryFilters,
    top_k: int = 8,
    max_tokens: int = 1000,
    query_vector: list[float] | None = None,
    record_access: bool = True,
    rank: str = "hybrid",  # "hybrid" | "vector" | "keyword" (the last two are baselines for benchmarks)
    threshold: float | None = None,
) -> SearchResult:
    """The memories most useful for the query that the actor may read, best first, within the budget.

    Hits scoring under `threshold` are left out; None means the default: the embedding model's
    calibrated floor for a hybrid search (ranking.relevance_floor), none for the one-sided baselines."""
    started = time.perf_counter()
    if top_k < 1:
        raise SearchError("top_k must be at least 1.")
    if threshold is not None and not 0 <= threshold <= 1:
        raise SearchError(_("threshold must be between 0 and 1."))
    provider = cached_provider_for(actor.org, filters.user_id)
    model = provider.model_name
    notes: list[str] = []
    embed_ms = 0.0
    qvec = None
    if rank != "keyword" and query.strip():
        if query_vector is None:
            t0 = time.perf_counter()
            try:
                query_vector = provider.embed_query(embed_part(query))
            except EmbeddingError as exc:
                # Keyword search still answers while the embedding provider is down.
                log.warning("query embedding failed, keyword-only search: %s", exc)
                notes.append("embedding unavailable: keyword matches only")
            embed_ms = (time.perf_counter() - t0) * 1000
        if query_vector is not None:
            qvec = np.asarray(query_vector, dtype=np.float32)
    mapping = query_map.for_search(model, rank) if qvec is not None else None
    similarity = query_map.IDENTITY
    if mapping is not None:
        qvec, similarity = mapping.apply(qvec, query_map.weight(model))
    asked = question_time(query, timezone.now().year)
    keyword_query = query
    if rank == "hybrid" and settings.SEARCH_RANKING != SEED:  # the seed formula and BM25-only: every word
        keyword_query = keyword_text(query, asked[0])
    terms = query_terms(keyword_part(keyword_query)) if rank != "vector" else []
    # the query's words in the other language match with them (BM25 alone, the baseline, and the seed do not)
    cross = rank == "hybrid" and settings.SEARCH_RANKING != SEED and settings.SEARCH_CROSS_LINGUAL_TERMS
    candidates = max(settings.SEARCH_CANDIDATES, top_k * CANDIDATES_PER_RESULT)
    where_sql = filter_sql(actor, filters)
    keys = keyword_keys(actor.org.pk, filters)
    subject = _exact_subject(actor, filters)
    fetch = functools.partial(
        fetch_rows,
        where_sql,
        org_id=actor.org.pk,
        qvec=qvec,
        model=model,
        terms=terms,
        candidates=candidates,
        query_cjk=has_cjk(query),
        cross_offset=query_language_offset(model) if rank == "hybrid" else 0.0,
        translations=translations(terms) if cross else None,
        similarity=similarity,
    )
    rows = fetch(subject=subject, lenders=top_k * 2, keys=keys)
    if subject and rows and rows[0]["subject_rows"] >= settings.SEARCH_EXACT_SUBJECT_ROWS:
        _big_subject(actor, filters)  # too many rows to read them all: the indexes' way, now and next time
        subject = False
        rows = fetch(subject=False, keys=keys)
    near = [r for r in rows if not r["candidate"]] if subject else None
    rows = [r for r in rows if r["candidate"]]
    hits = []
    for r in rows:
        hit = Hit(
            row=r,
            vector_similarity=r.pop("vsim"),
            keyword_raw=float(r.pop("bm25") or 0),
            embedding=r.pop("emb"),
        )
        idf, total = float(r.pop("idf") or 0), float(r.pop("idf_total") or 0)
        hit.coverage = min(1.0, idf / total) if total > 0 else 0.0
        hits.append(hit)
    if rank == "vector":
        for h in hits:
            h.keyword_raw = h.coverage = 0.0
    backdrop = score_hits(hits, model, query, baseline="" if rank == "hybrid" else rank)
    if threshold is None:
        # The default: nothing unless the best hit reaches the model's floor, then hits down to a share of
        # it; only once the candidates are enough to measure a background (Backdrop.measured). Without a
        # query vector the scores are keyword coverage alone, not calibrated probabilities.
        gate = relevance_floor(model) if rank == "hybrid" and qvec is not None and backdrop.measured else 0.0
        keep = gate * RELEVANCE_KEEP
    else:
        gate = keep = threshold
    if hits and hits[0].score < gate:
        hits = []
    if rank == "hybrid" and hits:
        hits = context_and_duplicates(
            hits,
            where_sql,
            qvec=qvec,
            model=model,
            top_k=top_k,
            near=near,
            query=query,
            floor=keep,
            backdrop=backdrop,
            asked=asked,
            similarity=similarity,
        )
    if keep > 0:
        hits = [h for h in hits if h.score >= keep or h.stale]
    hits = fit_budget(hits, top_k=top_k, max_tokens=max_tokens)
    decode_json([h.row for h in hits])
    if record_access and hits:
        access_recorder.record([h.id for h in hits])
    took = (time.perf_counter() - started) * 1000
    return SearchResult(
        hits=hits, took_ms=took, embed_ms=embed_ms, model=model, candidates=len(rows), notes=notes
    )
