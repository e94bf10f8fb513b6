"""Hybrid retrieval, entirely in PostgreSQL (seed 004 + seed 000).

One SQL statement gathers the candidates of both sides under the same access and subject filters:
- vector: the nearest neighbours (cosine) of the query among vectors of the subject's current embedding
  model;
- keyword: rows sharing any query token in search_tokens (core.text.keyword_tokens: English words,
  Chinese characters and bigrams), scored with BM25 (binary term frequency, since the tsvector holds no
  positions) computed in SQL over the filtered rows.
A subject's own memories (up to SEARCH_EXACT_SUBJECT_ROWS) are read in one pass that gives exact
distances, the keyword statistics and matches, and the conversation neighbours of the candidates, so
the search is one round trip. Bigger subjects and project searches go through the indexes: pgvector
HNSW, whose 0.8 iterative scan (relaxed order) keeps walking the graph until enough rows pass the
filters, and the GIN index or the filter's.

Both sides are normalised to [0, 1] (vector: cosine rescaled from the model's "unrelated" floor to 1;
keyword: BM25 divided by the best candidate's), combined as relevance = 0.7·vector + 0.3·keyword, then
final = 0.5·relevance + 0.3·confidence + 0.2·scope_priority (session 1.0, project 0.8, user 0.6).
Weights are the SEARCH_* settings.

Conversation context: turns stored verbatim from one conversation lean on each other, so each of the
best hits lends part of its relevance (SEARCH_NEIGHBOUR_WEIGHT) to the rows stored just before and after
it when they come from the same conversation (same subject, session and occurred_at).

Near-duplicates among the top candidates (cosine at the model's "related" threshold and shared words):
copies of one type and time collapse to the best; versions with different times keep the places they
earned, but inside those places the newest goes first and the older follow, so a move to Shanghai comes
before the old Beijing address, nothing is deleted and no unrelated memory is pushed out. Events are not
versions of one another (winning a fourth tournament does not make the first one out of date), so they
keep the places they earned. The list is
cut to top_k, then to the token budget.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection
from pgvector.psycopg.vector import VectorBinaryDumper
from psycopg.adapt import Loader
from psycopg.pq import Format

from core.text import estimate_tokens, keyword_tokens
from projects.access import Actor, key_project_ids

from .dedup import differs_materially
from .embeddings import EmbeddingError, cached_provider_for
from .selectors import MemoryFilters, memory_candidates
from .thresholds import duplicate_threshold, related_threshold

log = logging.getLogger(__name__)

EVENT = "event"  # memory type whose near-duplicates are separate happenings, not versions
SCOPE_PRIORITY = {"session": 1.0, "project": 0.8, "user": 0.6}
BM25_K1 = 1.2
BM25_B = 0.3  # short memories: length matters less than for documents (0.3 beat 0.75 on LoCoMo dev)
# Keyword statistics (document count, average length, document frequencies) are taken over at most
# this many filtered rows: exact for a subject's memories, a sample for an org-wide search.
KEYWORD_STATS_ROWS = 5000
KEYWORD_MATCH_ROWS = 2000
# Each side brings at least this many candidates per result asked for (4 gave the same LoCoMo recall).
CANDIDATES_PER_RESULT = 3
KEYWORD_PREFIX = True
# multilingual-e5-small scores unrelated sentences around 0.75-0.82 (see memory/thresholds.py); other
# models: raw cosine. Tuned on LoCoMo dev (bench/locomo.py): 0.75 beat min-max over the candidates.
VECTOR_FLOORS = {"multilingual-e5-small": 0.75}
NEIGHBOUR_SPAN = 2  # how many rows before and after a match count as its conversation context
NEIGHBOUR_KEEP = 0.0  # share of a neighbour's own relevance kept on top of what it is lent
# Share of a lend a neighbour gets whatever its own vector match; the rest in proportion to how close its
# vector match comes to its lender's. Tuned on LoCoMo dev together with DIVERSITY (R@10 0.747 -> 0.762).
NEIGHBOUR_UNCONDITIONAL = 0.7
# Maximal marginal relevance over the head: a hit loses this share of the relevance weight times its
# cosine (rescaled from the model's floor) to the most similar hit already placed above it.
DIVERSITY = 0.1

COLUMNS = [
    "id",
    "content",
    "memory_type",
    "scope",
    "user_id",
    "project_id",
    "session_id",
    "agent_id",
    "skill",
    "source",
    "confidence",
    "visibility",
    "status",
    "pinned",
    "tags",
    "metadata",
    "occurred_at",
    "created_at",
    "version",
]


class SearchError(ValueError):
    """The query cannot be run as asked (bad input the serializer could not catch)."""


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
        }


@dataclass
class SearchResult:
    hits: list[Hit]
    took_ms: float
    embed_ms: float = 0.0
    model: str = ""
    candidates: int = 0
    notes: list[str] = field(default_factory=list)


# ---- query text -----------------------------------------------------------------------------------


_SUFFIXES = ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "s", "ly")
_ASCII_WORD = re.compile(r"[a-z]+")


def query_terms(query: str) -> list[tuple[str, bool]]:
    """Distinct (term, prefix) pairs of the query, in order.

    English words of four letters or more are cut to a crude stem and matched as a prefix
    ("painted" finds "painting"), since the stored tokens are unstemmed; numbers, identifiers and
    Chinese characters and bigrams are matched exactly.
    """
    terms: dict[tuple[str, bool], None] = {}
    for token in keyword_tokens(query):
        if KEYWORD_PREFIX and _ASCII_WORD.fullmatch(token) and len(token) >= 4:
            for suffix in _SUFFIXES:
                if token.endswith(suffix) and len(token) - len(suffix) >= 4:
                    token = token[: -len(suffix)]
                    break
            terms[(token, True)] = None
        else:
            terms[(token, False)] = None
    return list(terms)


def tsquery_text(terms: list[tuple[str, bool]]) -> str:
    """The terms OR-ed as tsquery input; lexemes are quoted, so they are matched verbatim (or as prefixes)."""
    quoted = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" + (":*" if p else "") for t, p in terms]
    return " | ".join(quoted)


def vector_literal(vector) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


# ---- the SQL ------------------------------------------------------------------------------------


def _freeze(value):
    """A hashable stand-in for a filter value (lists, dicts, projects, times)."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str)
    if hasattr(value, "_meta"):  # a model instance (the project)
        return (value._meta.label, value.pk)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _actor_key(actor: Actor) -> tuple:
    """Every actor attribute projects.access.memory_read_q reads in Python; the rest it asks in SQL."""
    if actor.is_key:
        ids = key_project_ids(actor.api_key)
        return ("key", actor.org.pk, actor.api_key.pk, None if ids is None else tuple(ids))
    return ("account", actor.org.pk, actor.account.pk, actor.user_id, actor.is_org_admin)


_WHERE_CACHE: OrderedDict[tuple, tuple[str, tuple]] = OrderedDict()
_WHERE_CACHE_SIZE = 512
_cache_lock = threading.Lock()


def filter_sql(actor: Actor, filters: MemoryFilters) -> tuple[str, list]:
    """The WHERE clause (and its parameters) of memory_candidates: access, subject and filters.

    Compiling it with Django's ORM costs about a millisecond, more than the database needs for most
    searches, so it is compiled once per (actor, filters) and reused. That is safe because the compiled
    SQL is a pure function of the key: the key holds every value the access module and the filters read
    in Python (tests/test_search.py checks it against a fresh compile), memberships and projects are read
    by the SQL itself when it runs, and the expiry check uses the statement's clock (Now()).
    """
    key = (_actor_key(actor), tuple(_freeze(value) for value in vars(filters).values()))  # fields in order
    with _cache_lock:
        cached = _WHERE_CACHE.get(key)
        if cached is not None:
            _WHERE_CACHE.move_to_end(key)
    if cached is None:
        qs = memory_candidates(actor=actor, filters=filters)
        query = qs.query
        sql, params = query.get_compiler(using=qs.db).compile(query.where)
        cached = (sql or "TRUE", tuple(params))
        with _cache_lock:
            _WHERE_CACHE[key] = cached
            while len(_WHERE_CACHE) > _WHERE_CACHE_SIZE:
                _WHERE_CACHE.popitem(last=False)
    return cached[0], list(cached[1])


# The statement is assembled from parts, each with its parameters in textual order.
# Broad searches (a project, or no subject): each side uses its own index (HNSW; GIN or the filter's).
_BROAD_CTES = """
WITH vec AS (
    SELECT "memory_memoryitem"."id" AS id
    FROM "memory_memoryitem"
    WHERE ({where}) AND "memory_memoryitem"."embedding_model" = %s
      AND "memory_memoryitem"."embedding" IS NOT NULL
    ORDER BY "memory_memoryitem"."embedding" <=> %s::vector
    LIMIT %s
), stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(dl)::float8, 1) AS avgdl FROM (
        SELECT coalesce(length("memory_memoryitem"."search_tokens"), 0) AS dl
        FROM "memory_memoryitem" WHERE ({where}) LIMIT %s
    ) s
), kwm AS MATERIALIZED (
    SELECT "memory_memoryitem"."id" AS id,
           length("memory_memoryitem"."search_tokens") AS dl,
           "memory_memoryitem"."search_tokens" AS tokens
    FROM "memory_memoryitem"
    WHERE ({where}) AND "memory_memoryitem"."search_tokens" @@ %s::tsquery
    LIMIT %s
),"""

# A subject's own memories (user and session scope): one pass over its rows gives exact distances, the
# keyword statistics and matches, and the conversation neighbours of every candidate, so the search
# needs no second round trip. Subjects with more than SEARCH_EXACT_SUBJECT_ROWS rows go the broad way.
_SUBJECT_CTES = """
WITH base AS MATERIALIZED (
    SELECT "memory_memoryitem"."id" AS id, "memory_memoryitem"."occurred_at" AS occurred_at,
           "memory_memoryitem"."user_id" AS user_id, "memory_memoryitem"."scope" AS scope,
           "memory_memoryitem"."session_id" AS session_id, "memory_memoryitem"."project_id" AS project_id,
           "memory_memoryitem"."confidence" AS confidence,
           CASE WHEN "memory_memoryitem"."embedding_model" = %s
                THEN "memory_memoryitem"."embedding" <=> %s::vector END AS dist,
           coalesce(length("memory_memoryitem"."search_tokens"), 0) AS dl,
           CASE WHEN "memory_memoryitem"."search_tokens" @@ %s::tsquery
                THEN "memory_memoryitem"."search_tokens" END AS tokens
    FROM "memory_memoryitem"
    WHERE ({where})
    LIMIT %s
), vec AS MATERIALIZED (
    SELECT id FROM base WHERE dist IS NOT NULL ORDER BY dist LIMIT %s
), stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(dl)::float8, 1) AS avgdl FROM base
), kwm AS MATERIALIZED (
    SELECT id, dl, tokens FROM base WHERE tokens IS NOT NULL LIMIT %s
),"""

# Every CTE is materialised and the larger ones are joined through arrays (= ANY, array_position) rather
# than joins, so the plan cannot turn into nested loops over CTE scans whatever the planner estimates
# (prepared statements get generic plans, which guess one row per CTE).
_KEYWORD_CTES = """
terms AS MATERIALIZED (
    SELECT * FROM unnest(%s::text[], %s::tsquery[]) AS t(term, query)
), hits AS MATERIALIZED (
    SELECT kwm.id, kwm.dl, count(*) OVER (PARTITION BY terms.term)::float8 AS df
    FROM kwm JOIN terms ON kwm.tokens @@ terms.query
), kw AS MATERIALIZED (
    SELECT hits.id,
           -- float8 throughout: numeric arithmetic (count, avg and 0.5 literals) costs several times more
           sum(ln(1 + (greatest(stats.n, hits.df) - hits.df + 0.5) / (hits.df + 0.5))
               * (%s + 1) / (1 + %s * (1 - %s + %s * hits.dl / greatest(stats.avgdl, 1)))) AS bm25
    FROM hits CROSS JOIN stats
    GROUP BY hits.id
    ORDER BY bm25 DESC
    LIMIT %s
), cand AS MATERIALIZED (
    SELECT id, max(bm25) AS bm25
    FROM (SELECT id, 0::float8 AS bm25 FROM vec UNION ALL SELECT id, bm25 FROM kw) both_sides
    GROUP BY id
), picked AS MATERIALIZED (
    SELECT array_agg(id) AS ids, array_agg(bm25) AS bm25 FROM cand
)"""

# Rows of the subject stored next to a likely lender (two ids either side) from the same conversation.
# Likely lenders: the best candidates by score_hits' formula (in float8, as Python computes it), with a
# margin over the top_k that neighbour_lenders takes, so rounding can never leave a lender out.
_NEAR_CTE = """, lenders AS MATERIALIZED (
    SELECT b.id, b.occurred_at, b.user_id, b.scope, b.session_id, b.project_id
    FROM base b, picked
    WHERE b.id = ANY(picked.ids) AND b.occurred_at IS NOT NULL
    ORDER BY %s::float8 * (
                 %s::float8 * coalesce(least(1, greatest(0, (1 - b.dist - %s::float8) / (1 - %s::float8))), 0)
                 + %s::float8 * coalesce(
                     picked.bm25[array_position(picked.ids, b.id)] / nullif((SELECT max(bm25) FROM kw), 0), 0))
             + %s::float8 * b.confidence
             + %s::float8 * CASE b.scope WHEN 'session' THEN 1.0 WHEN 'project' THEN 0.8 ELSE 0.6 END DESC,
             b.id DESC
    LIMIT %s
), steps AS MATERIALIZED (
    SELECT l.id + d.step AS id, l.occurred_at, l.user_id, l.scope, l.session_id, l.project_id
    FROM lenders l CROSS JOIN (VALUES (-2), (-1), (1), (2)) AS d(step)
), next_to AS MATERIALIZED (
    SELECT n.id, n.occurred_at, n.user_id, n.scope, n.session_id, n.project_id
    FROM base n, picked
    WHERE n.id = ANY(ARRAY(SELECT id FROM steps)) AND NOT n.id = ANY(coalesce(picked.ids, '{}'))
), near AS MATERIALIZED (
    SELECT DISTINCT n.id
    FROM next_to n JOIN steps s ON s.id = n.id AND n.occurred_at = s.occurred_at AND n.user_id = s.user_id
         AND n.scope = s.scope AND n.session_id = s.session_id
    WHERE n.project_id IS NOT DISTINCT FROM s.project_id
)"""

_SELECT = """
SELECT {columns},
       CASE WHEN m.embedding_model = %s THEN m.embedding END AS emb,
       CASE WHEN m.embedding_model = %s THEN 1 - (m.embedding <=> %s::vector) END AS vsim,
       coalesce(picked.bm25[array_position(picked.ids, m.id)], 0) AS bm25,
       coalesce(m.id = ANY(picked.ids), false) AS candidate,
       (SELECT n FROM stats) AS subject_rows
FROM "memory_memoryitem" m, picked
WHERE m.id = ANY({ids})
"""


# The index path always plans with the real values: whether HNSW or a filter's index serves the vector
# side depends on how many rows the filter leaves, which a generic plan cannot know.
_SCAN_SQL = (
    "SELECT set_config('plan_cache_mode', 'force_custom_plan', true),"
    " set_config('hnsw.iterative_scan', 'relaxed_order', true),"
    " set_config('hnsw.ef_search', %s, true),"
    " set_config('hnsw.max_scan_tuples', %s, true)"
)


def _scan_args(candidates: int) -> list[str]:
    """pgvector 0.8 iterative scans: keep walking the HNSW graph until enough rows pass the filters."""
    return [str(max(40, min(1000, candidates * 2))), str(settings.SEARCH_MAX_SCAN_TUPLES)]


_VECTOR_ADAPTERS: dict[str, tuple[type, type]] = {}


class _VectorLoader(Loader):
    """pgvector's binary format (dim, unused, float4 values, big-endian) as a numpy array."""

    format = Format.BINARY
    oid = 0

    def load(self, data) -> np.ndarray:
        dim = int.from_bytes(bytes(data[:2]), "big")
        return np.frombuffer(data, dtype=">f4", count=dim, offset=4)  # big-endian; similarities() converts


def _vector_adapters(conn) -> tuple[type, type]:
    """Loader and dumper for the vector type of this connection's database (its oid is looked up once).

    The dumper sends a numpy query vector in pgvector's binary format: no text to format or parse."""
    name = connection.settings_dict["NAME"]
    adapters = _VECTOR_ADAPTERS.get(name)
    if adapters is None:
        oid = conn.execute("SELECT 'vector'::regtype::oid").fetchone()[0]
        adapters = _VECTOR_ADAPTERS[name] = (
            type("VectorLoader", (_VectorLoader,), {"oid": oid}),
            type("VectorDumper", (VectorBinaryDumper,), {"oid": oid}),
        )
    return adapters


def _run(statements: list[tuple[str, list]]) -> list[list[dict]]:
    """Several statements in one round trip, the rows of each as dicts.

    psycopg's pipeline mode sends them together and syncs once at the end, so PostgreSQL runs them in one
    (implicit) transaction: set_config(..., true) in the first holds for the others and ends with them,
    without BEGIN and COMMIT round trips (inside an atomic block they simply join its transaction).
    Parameters are bound on the server and each statement is prepared, so a search shape the connection
    has run before skips parsing, and PostgreSQL may reuse its plan (see PostgreSQL's plan_cache_mode).
    """
    connection.ensure_connection()
    conn = connection.connection
    cursors = []
    with connection.wrap_database_errors:
        vector_loader, vector_dumper = _vector_adapters(conn)
        with conn.pipeline():
            for sql, params in statements:
                cursor = psycopg.Cursor(conn)
                cursor.adapters.register_loader(vector_loader.oid, vector_loader)
                cursor.adapters.register_loader("jsonb", _RawJsonb)
                cursor.adapters.register_dumper(np.ndarray, vector_dumper)
                # Binary results: loading text through Django's adapters cost more than the query.
                cursor.execute(sql, params, prepare=True, binary=True)
                cursors.append(cursor)
        out = []
        for cursor in cursors:
            with cursor:
                names = [c.name for c in cursor.description]
                out.append([dict(zip(names, row, strict=True)) for row in cursor.fetchall()])
    return out


def _fetch(
    where_sql: tuple[str, list],
    *,
    qvec: np.ndarray | None,
    model: str,
    terms: list[tuple[str, bool]],
    candidates: int,
    subject: bool,
    lenders: int = 0,
) -> list[dict]:
    """Candidates of both sides, scored by SQL (vector similarity, BM25), as dicts.

    Rows carry `candidate` (False for a conversation neighbour the subject statement brought along) and
    `subject_rows` (how many rows the subject statement read, capped at SEARCH_EXACT_SUBJECT_ROWS).
    The subject statement brings the neighbours of the best `lenders` candidates.
    """
    where, params = where_sql
    tsq = tsquery_text(terms) if terms else None
    vec_limit = candidates if qvec is not None else 0
    keyword_args = [
        [t for t, _ in terms],
        [tsquery_text([term]) for term in terms],
        BM25_K1,
        BM25_K1,
        BM25_B,
        BM25_B,
        candidates,
    ]
    columns = ", ".join(f'm."{c}"' for c in COLUMNS)
    select_args = [model, model, qvec]
    if subject:
        sql = (
            _SUBJECT_CTES.format(where=where)
            + _KEYWORD_CTES
            + _NEAR_CTE
            + _SELECT.format(columns=columns, ids="picked.ids || ARRAY(SELECT id FROM near)")
        )
        args = [
            model,
            qvec,
            tsq,
            *params,
            settings.SEARCH_EXACT_SUBJECT_ROWS,
            vec_limit,
            KEYWORD_MATCH_ROWS,
            *keyword_args,
            *_lender_args(model, lenders),
            *select_args,
        ]
        return _run([(sql, args)])[0]
    sql = _BROAD_CTES.format(where=where) + _KEYWORD_CTES + _SELECT.format(columns=columns, ids="picked.ids")
    args = [
        *params,
        model,
        qvec,
        vec_limit,
        *params,
        KEYWORD_STATS_ROWS,
        *params,
        tsq,
        KEYWORD_MATCH_ROWS if tsq else 0,
        *keyword_args,
        *select_args,
    ]
    _, rows = _run([(_SCAN_SQL, _scan_args(candidates)), (sql, args)])
    return rows


class _RawJsonb(Loader):
    """jsonb as its text (binary format: a version byte, then the text); parsed only for the results."""

    format = Format.BINARY

    def load(self, data) -> str:
        return bytes(data[1:]).decode()


def _lender_args(model: str, lenders: int) -> list:
    """Parameters of _NEAR_CTE's ranking: score_hits' weights and floor, and how many lenders to keep."""
    floor = vector_floor(model)
    relevance, confidence, scope = final_weights()
    vector, keyword = settings.SEARCH_VECTOR_WEIGHT, settings.SEARCH_KEYWORD_WEIGHT
    return [relevance, vector, floor, floor, keyword, confidence, scope, lenders]


def _decode(rows: list[dict]) -> list[dict]:
    for row in rows:
        for name in ("tags", "metadata"):
            if isinstance(row[name], str):
                row[name] = json.loads(row[name])
    return rows


_IDS_SQL = """
SELECT {columns},
       CASE WHEN "memory_memoryitem".embedding_model = %s THEN "memory_memoryitem".embedding END AS emb,
       CASE WHEN "memory_memoryitem".embedding_model = %s
            THEN 1 - ("memory_memoryitem".embedding <=> %s::vector) END AS vsim
FROM "memory_memoryitem"
WHERE ({where}) AND "memory_memoryitem"."id" = ANY(%s) AND "memory_memoryitem"."occurred_at" = ANY(%s)
"""


def _ids_statement(
    where_sql: tuple[str, list], *, ids: list[int], times: list, qvec: np.ndarray | None, model: str
) -> tuple[str, list]:
    """Rows by id stored at one of these times, under the same access and subject filters as the search."""
    where, params = where_sql
    columns = ", ".join(f'"memory_memoryitem"."{c}"' for c in COLUMNS)
    return _IDS_SQL.format(columns=columns, where=where), [model, model, qvec, *params, ids, times]


# ---- ranking --------------------------------------------------------------------------------------


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
    """Seed 000: final = relevance·0.5 + confidence·0.3 + scope_priority·0.2."""
    relevance_weight, confidence_weight, scope_weight = weights or final_weights()
    h.confidence = float(h.row["confidence"])
    h.scope_priority = SCOPE_PRIORITY.get(h.row["scope"], 0.6)
    h.score = (
        relevance_weight * h.relevance + confidence_weight * h.confidence + scope_weight * h.scope_priority
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
                n.relevance = lend + NEIGHBOUR_KEEP * n.relevance
                n.neighbour_of = h.id
                final_score(n, weights)
    hits.sort(key=lambda h: (-h.score, -h.id))
    return hits


def context_and_duplicates(
    hits: list[Hit],
    where_sql: tuple[str, list],
    *,
    qvec: np.ndarray | None,
    model: str,
    top_k: int,
    near: list[dict] | None = None,
) -> list[Hit]:
    """Conversation neighbours (add_neighbours), then the near-duplicate order of the head (top_k * 2).

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
        statement = _ids_statement(where_sql, ids=missing, times=times, qvec=qvec, model=model)
        fetched = _run([statement])[0]
    hits = add_neighbours(hits, top, fetched, model=model)
    if len(hits) > 1:
        head = hits[: top_k * 2]
        sims = similarities(head)
        order = diversify(head, sims, model)
        head = [head[i] for i in order]
        pairs = similar_pairs(head, sims[np.ix_(order, order)], model)
        hits = order_near_duplicates(head, pairs, model) + hits[top_k * 2 :]
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


# ---- the selector -----------------------------------------------------------------------------


_BIG_SUBJECTS: OrderedDict[tuple, float] = OrderedDict()
_BIG_SUBJECTS_SIZE = 1024
_BIG_SUBJECT_SECONDS = 600.0


def _subject_key(actor: Actor, filters: MemoryFilters) -> tuple:
    return (actor.org.pk, filters.user_id)


def _exact_subject(actor: Actor, filters: MemoryFilters) -> bool:
    """Search a subject's own memories in one pass (see _SUBJECT_CTES) unless it was found too big lately."""
    if not filters.user_id or filters.project is not None or settings.SEARCH_EXACT_SUBJECT_ROWS <= 0:
        return False
    with _cache_lock:
        since = _BIG_SUBJECTS.get(_subject_key(actor, filters))
    return since is None or time.monotonic() - since > _BIG_SUBJECT_SECONDS


def _big_subject(actor: Actor, filters: MemoryFilters) -> None:
    with _cache_lock:
        _BIG_SUBJECTS[_subject_key(actor, filters)] = time.monotonic()
        _BIG_SUBJECTS.move_to_end(_subject_key(actor, filters))
        while len(_BIG_SUBJECTS) > _BIG_SUBJECTS_SIZE:
            _BIG_SUBJECTS.popitem(last=False)


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
) -> SearchResult:
    """The memories most useful for the query that the actor may read, best first, within the budget."""
    started = time.perf_counter()
    if top_k < 1:
        raise SearchError("top_k must be at least 1.")
    provider = cached_provider_for(actor.org, filters.user_id)
    model = provider.model_name
    notes: list[str] = []
    embed_ms = 0.0
    qvec = None
    if rank != "keyword" and query.strip():
        if query_vector is None:
            t0 = time.perf_counter()
            try:
                query_vector = provider.embed_query(query)
            except EmbeddingError as exc:
                # Keyword search still answers while the embedding provider is down.
                log.warning("query embedding failed, keyword-only search: %s", exc)
                notes.append("embedding unavailable: keyword matches only")
            embed_ms = (time.perf_counter() - t0) * 1000
        if query_vector is not None:
            qvec = np.asarray(query_vector, dtype=np.float32)
    terms = query_terms(query) if rank != "vector" else []
    candidates = max(settings.SEARCH_CANDIDATES, top_k * CANDIDATES_PER_RESULT)
    where_sql = filter_sql(actor, filters)
    subject = _exact_subject(actor, filters)
    rows = _fetch(
        where_sql,
        qvec=qvec,
        model=model,
        terms=terms,
        candidates=candidates,
        subject=subject,
        lenders=top_k * 2,
    )
    if subject and rows and rows[0]["subject_rows"] >= settings.SEARCH_EXACT_SUBJECT_ROWS:
        _big_subject(actor, filters)  # too many rows to read them all: the indexes' way, now and next time
        subject = False
        rows = _fetch(where_sql, qvec=qvec, model=model, terms=terms, candidates=candidates, subject=False)
    near = [r for r in rows if not r["candidate"]] if subject else None
    rows = [r for r in rows if r["candidate"]]
    hits = [
        Hit(
            row=r,
            vector_similarity=r.pop("vsim"),
            keyword_raw=float(r.pop("bm25") or 0),
            embedding=r.pop("emb"),
        )
        for r in rows
    ]
    if rank == "vector":
        for h in hits:
            h.keyword_raw = 0.0
    score_hits(hits, model)
    if rank == "hybrid" and hits:
        hits = context_and_duplicates(hits, where_sql, qvec=qvec, model=model, top_k=top_k, near=near)
    hits = fit_budget(hits, top_k=top_k, max_tokens=max_tokens)
    _decode([h.row for h in hits])
    if record_access and hits:
        access_recorder.record([h.id for h in hits])
    took = (time.perf_counter() - started) * 1000
    return SearchResult(
        hits=hits, took_ms=took, embed_ms=embed_ms, model=model, candidates=len(rows), notes=notes
    )


# ---- access counts --------------------------------------------------------------------------------


class AccessRecorder:
    """Counts recalls in memory and writes them in one UPDATE per batch, off the request thread.

    A daemon thread (started lazily per process, so it survives forking servers) flushes every
    SEARCH_ACCESS_FLUSH_SECONDS; with 0 the update runs at once in the caller's thread (tests).
    Counts not yet flushed are lost if the process dies; they are statistics, not data.
    """

    _SQL = (
        'UPDATE "memory_memoryitem" m SET access_count = m.access_count + v.n, last_accessed_at = now() '
        "FROM unnest(%s::bigint[], %s::int[]) AS v(id, n) WHERE m.id = v.id"
    )

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: Counter = Counter()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, ids: list[int]) -> None:
        if settings.SEARCH_ACCESS_FLUSH_SECONDS <= 0:
            self._write(Counter(ids))
            return
        with self._lock:
            self._pending.update(ids)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="engram-access", daemon=True)
                self._thread.start()
        self._wake.set()

    def flush(self) -> int:
        with self._lock:
            batch, self._pending = self._pending, Counter()
        self._write(batch)
        return len(batch)

    def _write(self, batch: Counter) -> None:
        if not batch:
            return
        ids = sorted(batch)  # a fixed order keeps two flushing processes from deadlocking
        with connection.cursor() as cursor:
            cursor.execute(self._SQL, [ids, [batch[i] for i in ids]])

    def _run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(settings.SEARCH_ACCESS_FLUSH_SECONDS)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # noqa: BLE001 — statistics must never take the process down
                log.exception("flushing access counts failed")
            finally:
                connection.close()


access_recorder = AccessRecorder()
