"""The search statement: access and filters compiled once to SQL, the CTEs of both sides (vector and
BM25) and of the conversation neighbours, and one round trip through psycopg's pipeline mode."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import replace
from datetime import datetime

import numpy as np
import psycopg
from cachetools import LRUCache, cached
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections
from pgvector.psycopg.vector import VectorBinaryDumper
from psycopg.adapt import Loader
from psycopg.pq import Format

from core import shared
from core.replicas import read_alias
from core.text import CJK
from projects.access import Actor, key_project_ids

from ..selectors import MemoryFilters, memory_candidates
from .query_map import IDENTITY
from .ranking import lender_weights, vector_floor

BM25_K1 = 1.2
BM25_B = 0.3  # short memories: length matters less than for documents (0.3 beat 0.75 on LoCoMo dev)
# Keyword statistics (document count, average length, document frequencies) are taken over at most
# this many filtered rows: exact for a subject's memories, a sample for an org-wide search.
KEYWORD_STATS_ROWS = 5000
KEYWORD_MATCH_ROWS = 2000

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
    "valid_from",
    "created_at",
    "version",
    "feedback",
]


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
    if actor.is_system:
        reads_as = None if actor.reads_as is None else _actor_key(actor.reads_as)
        return ("system", actor.org.pk, actor.shared_only, reads_as)
    if actor.is_key:
        ids = key_project_ids(actor.api_key)
        return ("key", actor.org.pk, actor.api_key.pk, None if ids is None else tuple(ids))
    return ("account", actor.org.pk, actor.account.pk, actor.user_id, actor.is_org_admin)


# Compiled WHERE clauses per (actor, filters); see filter_sql.
_where_cache: LRUCache = LRUCache(maxsize=512)
_where_lock = threading.Lock()


def filter_sql(actor: Actor, filters: MemoryFilters) -> tuple[str, list]:
    """The WHERE clause (and its parameters) of memory_candidates: access, subject and filters.

    Compiling it with Django's ORM costs about a millisecond, more than the database needs for most
    searches, so it is compiled once per (actor, filters) and reused. That is safe because the compiled
    SQL is a pure function of the key: the key holds every value the access module and the filters read
    in Python (tests/test_search.py checks it against a fresh compile), memberships and projects are read
    by the SQL itself when it runs, and the expiry check uses the statement's clock (Now()).

    The subject's user id is only ever a parameter of that SQL (selectors.subject_q), so the clause is
    compiled once per filter shape with a placeholder in its place (SUBJECT_SLOT), whose parameters are
    then the subject's: a subject searched for the first time (or after 512 others) costs no compile.
    Before, every such search compiled (about 1 ms; bench/search_scale.py measures subjects chosen at
    random, and the search statement of a 500-memory subject takes 2 ms).
    """
    if not filters.user_id:
        sql, params = _compiled_where(actor, filters)
        return sql, list(params)
    sql, params = _compiled_where(actor, replace(filters, user_id=SUBJECT_SLOT))
    return sql, [filters.user_id if p == SUBJECT_SLOT else p for p in params]


# Stands for the subject's user id in a compiled WHERE clause (filter_sql); no user id holds a NUL.
SUBJECT_SLOT = "\x00subject\x00"


def _where_key(actor: Actor, filters: MemoryFilters) -> tuple:
    return (_actor_key(actor), tuple(_freeze(value) for value in vars(filters).values()))  # fields in order


@cached(_where_cache, key=_where_key, lock=_where_lock)
def _compiled_where(actor: Actor, filters: MemoryFilters) -> tuple[str, tuple]:
    qs = memory_candidates(actor=actor, filters=filters)
    query = qs.query
    try:
        sql, params = query.get_compiler(using=qs.db).compile(query.where)
    except EmptyResultSet:  # a condition Django knows matches nothing (an IN over no values)
        return "FALSE", ()
    except FullResultSet:  # one it knows matches everything
        return "TRUE", ()
    return sql or "TRUE", tuple(params)


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
), {stats}, kwm AS MATERIALIZED (
    SELECT "memory_memoryitem"."id" AS id,
           length("memory_memoryitem"."search_tokens") AS dl,
           "memory_memoryitem"."search_tokens" AS tokens
    FROM "memory_memoryitem"
    WHERE ({where}) AND {match} @@ %s::tsquery
    LIMIT %s
),"""

# A broad search's keyword statistics: read from a sample of the filter's rows, or given (known_stats).
_STATS_SAMPLE = """stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(dl)::float8, 1) AS avgdl FROM (
        SELECT coalesce(length("memory_memoryitem"."search_tokens"), 0) AS dl
        FROM "memory_memoryitem" WHERE ({where}) LIMIT %s
    ) s
)"""
_STATS_GIVEN = "stats AS MATERIALIZED (SELECT %s::float8 AS n, %s::float8 AS avgdl)"


def _stats_key(where_sql: tuple[str, list]) -> str:
    where, params = where_sql
    digest = hashlib.md5(f"{where}\x00{params!r}".encode(), usedforsecurity=False).hexdigest()
    return shared.key(f"keyword-stats:{digest}")  # named after the database (a replica's is the primary's)


def known_stats(where_sql: tuple[str, list]) -> tuple[float, float] | None:
    """The keyword statistics (row count, average length) a broad search with this filter last read.

    Reading them is a sample of up to KEYWORD_STATS_ROWS of the filter's rows, about half of a broad
    search's time at a million rows (docs/scaling.md). They only normalise BM25 (and are a sample past
    5,000 rows anyway), so they are kept in Redis, shared by every process, for
    SEARCH_KEYWORD_STATS_SECONDS: a search in the meantime scores with values at most that old. The key
    is the compiled filter itself (the caller's access and the filters), so two callers who may read
    different rows never share them. Without Redis every search reads them."""
    if not settings.SEARCH_KEYWORD_STATS_SECONDS:
        return None
    try:
        value = cache.get(_stats_key(where_sql))
    except Exception:  # noqa: BLE001 - Redis unreachable: read them from the rows, as without the cache
        return None
    return tuple(value) if value is not None else None


def remember_stats(where_sql: tuple[str, list], rows: list[dict]) -> None:
    if not rows or not settings.SEARCH_KEYWORD_STATS_SECONDS:
        return  # no row carries the statistics
    try:
        cache.set(
            _stats_key(where_sql),
            (rows[0]["subject_rows"], rows[0]["stats_avgdl"]),
            timeout=settings.SEARCH_KEYWORD_STATS_SECONDS,
        )
    except Exception:  # noqa: BLE001 - not remembered: the next search reads them again
        pass


# The keyword match of a broad search: the row's search tokens prefixed with whose row it is (migration
# memory 0007, index mem_search_keys), against the query's terms prefixed with the keys of the filter's
# subject and project (keyword_keys), and unprefixed for rows too long to be keyed. The GIN index over it
# yields the matching rows of that subject or project only; the plain index on search_tokens yields a
# common word's rows in the whole table, which then had to be intersected with the subject's (at a
# million rows most of the search's time). A row matches the keyed query when its own tokens match the
# plain one and its key is one of the filter's, which the WHERE clause requires anyway: the same rows.
_KEYED_MATCH = (
    'memory_search_keys("memory_memoryitem"."org_id", "memory_memoryitem"."scope"::text,'
    ' "memory_memoryitem"."user_id"::text, "memory_memoryitem"."project_id", "memory_memoryitem"."search_tokens")'
)
_PLAIN_MATCH = '"memory_memoryitem"."search_tokens"'


def keyword_keys(org_id: int, filters: MemoryFilters) -> list[str]:
    """memory_search_keys' prefixes of the rows a search's subject filter admits (the user's own and
    session memories, the project's), and "" for the rows stored unprefixed."""
    owners = []
    if filters.user_id:
        owners.append(f"{org_id}|u|{filters.user_id}")
    if filters.project is not None:
        owners.append(f"{org_id}|p|{filters.project.pk}")
    if not owners:
        return []
    return [
        "|" + hashlib.md5(owner.encode(), usedforsecurity=False).hexdigest()[:10] + "|" for owner in owners
    ] + [""]


# A subject's own memories (user and session scope): one pass over its rows gives exact distances, the
# keyword statistics and matches, and the conversation neighbours of every candidate, so the search
# needs no second round trip. Subjects with more than SEARCH_EXACT_SUBJECT_ROWS rows go the broad way.
# BM25's document length is length(search_tokens), computed for every row of the subject (for the average):
# a stored count (a generated column) was measured at 0.002-0.03 ms per search (paired, 200 searches, best
# of 3 each), 0.05 ms of statement execution, against a migration that rewrites the table and rebuilds its
# indexes (197 s at 500,000 rows): not worth it (README "Scale").
_SUBJECT_CTES = """
WITH base AS MATERIALIZED (
    SELECT "memory_memoryitem"."id" AS id, "memory_memoryitem"."occurred_at" AS occurred_at,
           "memory_memoryitem"."user_id" AS user_id, "memory_memoryitem"."scope" AS scope,
           "memory_memoryitem"."session_id" AS session_id, "memory_memoryitem"."project_id" AS project_id,
           "memory_memoryitem"."confidence" AS confidence, "memory_memoryitem"."feedback" AS feedback,
           CASE WHEN "memory_memoryitem"."embedding_model" = %s
                THEN %s::float8 - %s::float8 * (1 - ("memory_memoryitem"."embedding" <=> %s::vector)) END AS dist,
           coalesce(length("memory_memoryitem"."search_tokens"), 0) AS dl,
           CASE WHEN "memory_memoryitem"."search_tokens" @@ %s::tsquery
                THEN "memory_memoryitem"."search_tokens" END AS tokens,
           "memory_memoryitem"."content" ~ '[{cjk}]' AS cjk
    FROM "memory_memoryitem"
    WHERE ({where})
    LIMIT %s
), vec AS MATERIALIZED (
    SELECT id FROM base WHERE dist IS NOT NULL
    ORDER BY dist - CASE WHEN cjk = %s::boolean THEN 0 ELSE %s::float8 END LIMIT %s
), stats AS MATERIALIZED (
    SELECT count(*)::float8 AS n, coalesce(avg(dl)::float8, 1) AS avgdl FROM base
), kwm AS MATERIALIZED (
    SELECT id, dl, tokens FROM base WHERE tokens IS NOT NULL LIMIT %s
),"""

# Every CTE is materialised and the larger ones are joined through arrays (= ANY, array_position) rather
# than joins, so the plan cannot turn into nested loops over CTE scans whatever the planner estimates
# (prepared statements get generic plans, which guess one row per CTE).
# `kw` keeps its rows by BM25 alone: among tied scores (one term, rows of equal length) the rows kept are
# those the plan feeds first, so a rewrite of `hits` or `kw` can change the candidates, not only the time.
_KEYWORD_CTES = """
terms AS MATERIALIZED (
    SELECT * FROM unnest(%s::text[], %s::tsquery[]) AS t(term, query)
), hits AS MATERIALIZED (
    SELECT kwm.id, kwm.dl, terms.term, count(*) OVER (PARTITION BY terms.term)::float8 AS df
    FROM kwm JOIN terms ON kwm.tokens @@ terms.query
), kw AS MATERIALIZED (
    SELECT hits.id,
           -- float8 throughout: numeric arithmetic (count, avg and 0.5 literals) costs several times more
           sum(ln(1 + (greatest(stats.n, hits.df) - hits.df + 0.5) / (hits.df + 0.5))
               * (%s + 1) / (1 + %s * (1 - %s + %s * hits.dl / greatest(stats.avgdl, 1)))) AS bm25,
           sum(ln(1 + (greatest(stats.n, hits.df) - hits.df + 0.5) / (hits.df + 0.5))) AS idf
    FROM hits CROSS JOIN stats
    GROUP BY hits.id
    ORDER BY bm25 DESC
    LIMIT %s
), qidf AS MATERIALIZED (
    -- the inverse document frequencies of all the query's terms (a term no row holds: df 0)
    SELECT coalesce(sum(ln(1 + (stats.n - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5))), 0)::float8
           AS total
    FROM terms LEFT JOIN (SELECT term, max(df) AS df FROM hits GROUP BY term) d ON d.term = terms.term
         CROSS JOIN stats
), cand AS MATERIALIZED (
    SELECT id, max(bm25) AS bm25, max(idf) AS idf
    FROM (SELECT id, 0::float8 AS bm25, 0::float8 AS idf FROM vec UNION ALL SELECT id, bm25, idf FROM kw) both_sides
    GROUP BY id
), picked AS MATERIALIZED (
    SELECT array_agg(id) AS ids, array_agg(bm25) AS bm25, array_agg(idf) AS idf FROM cand
)"""

# Rows of the subject stored next to a likely lender (two ids either side) from the same conversation.
# Likely lenders: the best candidates by score_hits' formula (in float8, as Python computes it), with a
# margin over the top_k that neighbour_lenders takes, so rounding can never leave a lender out.
# The candidates (picked, unnested with their scores) and the steps next to the lenders are joined to
# `base` by id rather than tested with `base.id = ANY(array)` on every row of the subject: each such test
# compared every row with every id (500 rows x 40 candidates, then x 64 steps), a fifth of a millisecond of
# a 500-memory subject's statement; the generic plan hashes the smaller side instead (the same rows, the
# same values; the statement 2.03 -> 1.80 ms, README "Scale"). At worst it is the nested loop the arrays were.
# The rows next to the lenders (`stepped`) are first picked out of `base` by id (one array test per row, the
# array built once): joined to all of `base`, a generic plan, which guesses a row or two per CTE, chose a
# nested loop comparing the 64 steps with each of a subject's 500 rows on six columns, 5 ms of a 7 ms
# statement (PostgreSQL switches a prepared statement to its generic plan after five runs).
_NEAR_CTE = """, lenders AS MATERIALIZED (
    SELECT b.id, b.occurred_at, b.user_id, b.scope, b.session_id, b.project_id
    FROM picked, unnest(picked.ids, picked.bm25, picked.idf) AS p(id, bm25, idf) JOIN base b ON b.id = p.id
    WHERE b.occurred_at IS NOT NULL
    ORDER BY %s::float8 * coalesce(least(1, greatest(0, (1 - b.dist - %s::float8) / (1 - %s::float8))), 0)
             + %s::float8 * coalesce(p.bm25 / nullif((SELECT max(bm25) FROM kw), 0), 0)
             + %s::float8 * coalesce(1 - b.dist, 0)
             + %s::float8 * coalesce(p.idf / nullif((SELECT total FROM qidf), 0), 0)
             + %s::float8 * b.confidence
             + %s::float8 * greatest(-1, least(1, b.feedback))
             + %s::float8 * CASE b.scope WHEN 'session' THEN 1.0 WHEN 'project' THEN 0.8 ELSE 0.6 END DESC,
             b.id DESC
    LIMIT %s
), steps AS MATERIALIZED (
    SELECT l.id + d.step AS id, l.occurred_at, l.user_id, l.scope, l.session_id, l.project_id
    FROM lenders l CROSS JOIN (VALUES (-2), (-1), (1), (2)) AS d(step)
), stepped AS MATERIALIZED (
    SELECT b.id, b.occurred_at, b.user_id, b.scope, b.session_id, b.project_id
    FROM base b WHERE b.id = ANY((SELECT array_agg(id) FROM steps)::bigint[])
), near AS MATERIALIZED (
    SELECT DISTINCT n.id
    FROM steps s JOIN stepped n ON s.id = n.id AND n.occurred_at = s.occurred_at AND n.user_id = s.user_id
         AND n.scope = s.scope AND n.session_id = s.session_id, picked
    WHERE n.project_id IS NOT DISTINCT FROM s.project_id AND NOT n.id = ANY(coalesce(picked.ids, '{}'))
)"""

# The rows are fetched by primary key from an array computed before the scan (an InitPlan: `{ids}` is
# `(SELECT ids FROM picked)...`), so `id = ANY(...)` is always an index condition. Written as the joined
# CTE's column (picked.ids) it is a join filter the planner may apply to every row of the table: it did
# for a 500-memory subject among a million rows (a second instead of 7 ms, bench/search_scale.py).
_SELECT = """
SELECT {columns},
       CASE WHEN m.embedding_model = %s THEN m.embedding END AS emb,
       CASE WHEN m.embedding_model = %s THEN %s::float8 + %s::float8 * (1 - (m.embedding <=> %s::vector)) END AS vsim,
       coalesce(picked.bm25[array_position(picked.ids, m.id)], 0) AS bm25,
       coalesce(picked.idf[array_position(picked.ids, m.id)], 0) AS idf,
       (SELECT total FROM qidf) AS idf_total,
       coalesce(m.id = ANY(picked.ids), false) AS candidate,
       (SELECT n FROM stats) AS subject_rows,
       (SELECT avgdl FROM stats) AS stats_avgdl
FROM "memory_memoryitem" m, picked
WHERE m.id = ANY({ids}) AND m.org_id = %s
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


_VECTOR_ADAPTERS: dict[tuple[str, str], tuple[type, type]] = {}


class _VectorLoader(Loader):
    """pgvector's binary format (dim, unused, float4 values, big-endian) as a numpy array."""

    format = Format.BINARY
    oid = 0

    def load(self, data) -> np.ndarray:
        dim = int.from_bytes(bytes(data[:2]), "big")
        return np.frombuffer(data, dtype=">f4", count=dim, offset=4)  # big-endian; similarities() converts


def _vector_adapters(connection) -> tuple[type, type]:
    """Loader and dumper for the vector type of this connection's database (its oid is looked up once).

    The dumper sends a numpy query vector in pgvector's binary format: no text to format or parse."""
    conn = connection.connection
    name = (connection.settings_dict["HOST"], connection.settings_dict["NAME"])
    adapters = _VECTOR_ADAPTERS.get(name)
    if adapters is None:
        oid = conn.execute("SELECT 'vector'::regtype::oid").fetchone()[0]
        adapters = _VECTOR_ADAPTERS[name] = (
            type("VectorLoader", (_VectorLoader,), {"oid": oid}),
            type("VectorDumper", (VectorBinaryDumper,), {"oid": oid}),
        )
    return adapters


# psycopg turns a statement's %s into PostgreSQL's $1, $2, ... on every execute, and remembers the result
# only for statements under 4,096 characters: the search statement has about 5,800, so each search parsed
# it again (70-100 us; measured in one process, 0.107 ms of a search). The statements here
# are few (one per filter shape and side), so they are converted once and run through psycopg's raw-query
# cursor, which sends the numbered text as it is: the same statement reaches PostgreSQL.
_PLACEHOLDER = re.compile(r"%(.)", re.DOTALL)
_numbered_cache: LRUCache = LRUCache(maxsize=256)


@cached(_numbered_cache, lock=threading.Lock())
def numbered(sql: str) -> bytes:
    """The statement with $1, $2, ... for its %s placeholders, in order, and % for %%, as psycopg sends it."""
    count = 0

    def placeholder(match: re.Match) -> str:
        nonlocal count
        if match.group(1) == "%":
            return "%"
        if match.group(1) != "s":
            raise ValueError(f"unsupported placeholder %{match.group(1)} in a search statement")
        count += 1
        return f"${count}"

    return _PLACEHOLDER.sub(placeholder, sql).encode()


def run_statements(statements: list[tuple[str, list]]) -> list[list[dict]]:
    """Several statements in one round trip, the rows of each as dicts.

    psycopg's pipeline mode sends them together and syncs once at the end, so PostgreSQL runs them in one
    (implicit) transaction: set_config(..., true) in the first holds for the others and ends with them,
    without BEGIN and COMMIT round trips (inside an atomic block they simply join its transaction).
    Parameters are bound on the server and each statement is prepared, so a search shape the connection
    has run before skips parsing, and PostgreSQL may reuse its plan (see PostgreSQL's plan_cache_mode).
    They run on the primary, or on a replica inside a declared read (core.replicas).
    """
    connection = connections[read_alias()]
    connection.ensure_connection()
    connection.bind_row_security()  # Django's execute wrappers (core.rls) do not see the driver's cursors
    conn = connection.connection
    cursors = []
    with connection.wrap_database_errors:
        vector_loader, vector_dumper = _vector_adapters(connection)
        with conn.pipeline():
            for sql, params in statements:
                cursor = psycopg.RawCursor(conn)
                cursor.adapters.register_loader(vector_loader.oid, vector_loader)
                cursor.adapters.register_loader("jsonb", _RawJsonb)
                cursor.adapters.register_dumper(np.ndarray, vector_dumper)
                # Binary results: loading text through Django's adapters cost more than the query.
                cursor.execute(numbered(sql), params, prepare=True, binary=True)
                cursors.append(cursor)
        out = []
        for cursor in cursors:
            with cursor:
                names = [c.name for c in cursor.description]
                out.append([dict(zip(names, row, strict=True)) for row in cursor.fetchall()])
    return out


# Databases (host, name) where memory_search_keys is leakproof, so that the keyed match can drive its index
# under row-level security (memory migration 0007 marks it when it runs as a superuser). A fact of the
# schema, looked up once per database like the vector type's oid; without it the keyed function would be
# computed for every row of the subject, far slower than the plain match it replaces.
_KEYED_USABLE: dict[tuple[str, str], bool] = {}


def _keyed_match_usable() -> bool:
    connection = connections[read_alias()]
    name = (connection.settings_dict["HOST"], connection.settings_dict["NAME"])
    usable = _KEYED_USABLE.get(name)
    if usable is None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT coalesce(bool_and(proleakproof), false) FROM pg_proc WHERE proname = 'memory_search_keys'"
            )
            usable = _KEYED_USABLE[name] = cursor.fetchone()[0]
    return usable


def fetch_rows(
    where_sql: tuple[str, list],
    *,
    org_id: int,
    qvec: np.ndarray | None,
    model: str,
    terms: list[tuple[str, bool]],
    candidates: int,
    subject: bool,
    lenders: int = 0,
    keys: list[str] | None = None,
    query_cjk: bool = False,
    cross_offset: float = 0.0,
    translations: dict | None = None,
    similarity: tuple[float, float] = IDENTITY,
) -> list[dict]:
    """Candidates of both sides, scored by SQL (vector similarity, BM25), as dicts.

    An embedding model scores two texts of one language higher than a text and its translation (e5-small:
    unrelated texts sit at 0.82 in one language, 0.755 across), so among a subject's memories by raw
    distance the ones in the other language came last, and with 30 candidates of a 40-memory subject the
    English answer to a Chinese question was not among them at all, however the ranking would have placed
    it. The subject statement takes its vector candidates with memories in the other language
    `cross_offset` nearer (ranking.query_language_offset: the gap between the two levels), as score_hits
    then puts every language pair on one level. The indexes' way (big subjects, projects) takes them by raw
    distance.

    Rows carry `candidate` (False for a conversation neighbour the subject statement brought along) and
    `subject_rows` (how many rows the subject statement read, capped at SEARCH_EXACT_SUBJECT_ROWS).
    The subject statement brings the neighbours of the best `lenders` candidates. `keys` (keyword_keys)
    let a broad statement match keywords through the keyed index, where that index can serve it.
    `translations` (crosslingual.translations) are matched with the term they translate, as one term.
    `similarity` (offset, scale) puts the cosine with a mapped query (query_map) back on the model's scale:
    every vector similarity the statement computes or returns is offset + scale * cosine.
    """
    if keys and not subject and not _keyed_match_usable():
        keys = None
    stats = None if subject else known_stats(where_sql)
    statement = search_statement(
        where_sql,
        org_id=org_id,
        qvec=qvec,
        model=model,
        terms=terms,
        candidates=candidates,
        subject=subject,
        lenders=lenders,
        query_cjk=query_cjk,
        cross_offset=cross_offset,
        keys=keys,
        stats=stats,
        translations=translations,
        similarity=similarity,
    )
    if subject:
        return run_statements([statement])[0]
    _, rows = run_statements([(_SCAN_SQL, _scan_args(candidates)), statement])
    if stats is None:
        remember_stats(where_sql, rows)
    return rows


def search_statement(
    where_sql: tuple[str, list],
    *,
    org_id: int,
    qvec: np.ndarray | None,
    model: str,
    terms: list[tuple[str, bool]],
    candidates: int,
    subject: bool,
    lenders: int = 0,
    keys: list[str] | None = None,
    stats: tuple[float, float] | None = None,
    query_cjk: bool = False,
    cross_offset: float = 0.0,
    translations: dict | None = None,
    similarity: tuple[float, float] = IDENTITY,
) -> tuple[str, list]:
    """fetch_rows' statement and its parameters. Every read of memory_memoryitem in it is limited to the
    org (the access filter's org_id = %s, and the final read by id), so on a table distributed by org_id
    (docs/scaling.md) the whole statement runs on the one shard of that org. In the subject statement the
    vector side's candidates are the nearest with a memory in another language than the query (`query_cjk`:
    whether it has Chinese characters) brought `cross_offset` nearer (see fetch_rows)."""
    where, params = where_sql
    translations = translations or {}
    matched = [(term, *translations.get(term, ())) for term in terms]  # each term with its translations
    tsq = tsquery_text([t for ways in matched for t in ways]) if terms else None
    vec_limit = candidates if qvec is not None else 0
    keyword_args = [
        [t for t, _ in terms],
        [tsquery_text(list(ways)) for ways in matched],
        BM25_K1,
        BM25_K1,
        BM25_B,
        BM25_B,
        candidates,
    ]
    columns = ", ".join(f'm."{c}"' for c in COLUMNS)
    offset, scale = similarity
    select_args = [model, model, offset, scale, qvec, org_id]
    if subject:
        sql = (
            _SUBJECT_CTES.format(where=where, cjk=CJK)
            + _KEYWORD_CTES
            + _NEAR_CTE
            + _SELECT.format(columns=columns, ids="(SELECT ids FROM picked) || ARRAY(SELECT id FROM near)")
        )
        args = [
            model,
            1 - offset,
            scale,
            qvec,
            tsq,
            *params,
            settings.SEARCH_EXACT_SUBJECT_ROWS,
            query_cjk,
            cross_offset,
            vec_limit,
            KEYWORD_MATCH_ROWS,
            *keyword_args,
            *_lender_args(model, lenders),
            *select_args,
        ]
        return sql, args
    if keys and terms:
        match, tsq = (
            _KEYED_MATCH,
            tsquery_text([(key + t, p) for key in keys for ways in matched for t, p in ways]),
        )
    else:
        match = _PLAIN_MATCH
    stats_sql = _STATS_GIVEN if stats is not None else _STATS_SAMPLE.format(where=where)
    stats_args = list(stats) if stats is not None else [*params, KEYWORD_STATS_ROWS]
    sql = (
        _BROAD_CTES.format(where=where, match=match, stats=stats_sql)
        + _KEYWORD_CTES
        + _SELECT.format(columns=columns, ids="(SELECT ids FROM picked)::bigint[]")
    )
    args = [
        *params,
        model,
        qvec,
        vec_limit,
        *stats_args,
        *params,
        tsq,
        KEYWORD_MATCH_ROWS if tsq else 0,
        *keyword_args,
        *select_args,
    ]
    return sql, args


class _RawJsonb(Loader):
    """jsonb as its text (binary format: a version byte, then the text); parsed only for the results."""

    format = Format.BINARY

    def load(self, data) -> str:
        return bytes(data[1:]).decode()


def _lender_args(model: str, lenders: int) -> list:
    """Parameters of _NEAR_CTE's ranking (score_hits' order, see ranking.lender_weights) and how many to keep."""
    floor = vector_floor(model)
    rescaled_vector, relative_bm25, cosine, coverage, confidence, scope = lender_weights(model)
    feedback = settings.SEARCH_FEEDBACK_WEIGHT
    return [
        rescaled_vector,
        floor,
        floor,
        relative_bm25,
        cosine,
        coverage,
        confidence,
        feedback,
        scope,
        lenders,
    ]


def decode_json(rows: list[dict]) -> list[dict]:
    for row in rows:
        for name in ("tags", "metadata"):
            if isinstance(row[name], str):
                row[name] = json.loads(row[name])
    return rows


_IDS_SQL = """
SELECT {columns},
       CASE WHEN "memory_memoryitem".embedding_model = %s THEN "memory_memoryitem".embedding END AS emb,
       CASE WHEN "memory_memoryitem".embedding_model = %s
            THEN %s::float8 + %s::float8 * (1 - ("memory_memoryitem".embedding <=> %s::vector)) END AS vsim
FROM "memory_memoryitem"
WHERE ({where}) AND "memory_memoryitem"."id" = ANY(%s) AND "memory_memoryitem"."occurred_at" = ANY(%s)
"""


def ids_statement(
    where_sql: tuple[str, list],
    *,
    ids: list[int],
    times: list,
    qvec: np.ndarray | None,
    model: str,
    similarity: tuple[float, float] = IDENTITY,
) -> tuple[str, list]:
    """Rows by id stored at one of these times, under the same access and subject filters as the search."""
    where, params = where_sql
    columns = ", ".join(f'"memory_memoryitem"."{c}"' for c in COLUMNS)
    return _IDS_SQL.format(columns=columns, where=where), [
        model,
        model,
        *similarity,
        qvec,
        *params,
        ids,
        times,
    ]
