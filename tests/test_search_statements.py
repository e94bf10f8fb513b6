"""The search statements (memory/search/sql.py, service.py): under a selective filter the index walk
still returns k rows; the one-pass subject statement ranks like the index search and steps aside for a
subject too big for it; the compiled-filter cache equals a fresh compile and follows membership changes."""

import math
import random
from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection

from core.text import content_hash
from memory.drafts import MemoryDraft
from memory.embeddings import provider_for
from memory.models import MemoryItem
from memory.search import filter_sql, memory_search
from memory.selectors import MemoryFilters, memory_candidates
from memory.services import memory_create
from projects.access import actor_for_account, actor_for_key, system_actor
from projects.models import ProjectMembership
from projects.services import api_key_create

from .factories import MemoryItemFactory
from .search_helpers import DIM, ids, search


def _bulk(org, user_id, count, rng, model, **extra):
    rows = []
    for i in range(count):
        vec = [rng.gauss(0, 1) for _ in range(DIM)]
        norm = math.sqrt(sum(x * x for x in vec))
        content = f"bulk memory {user_id} {i}"
        rows.append(
            MemoryItem(
                org=org,
                content=content,
                user_id=user_id,
                embedding=[x / norm for x in vec],
                embedding_model=model,
                content_hash=content_hash(content),
                **extra,
            )
        )
    MemoryItem.objects.bulk_create(rows, batch_size=500)


@pytest.mark.parametrize("exact_subject_rows", [0, 5000], ids=["indexes", "one-pass"])
def test_it_returns_k_rows_under_a_selective_filter(alice_actor, org_a, settings, exact_subject_rows):
    settings.SEARCH_EXACT_SUBJECT_ROWS = exact_subject_rows
    rng = random.Random(7)
    model = provider_for(org_a, "alice").model_name
    _bulk(org_a, "crowd", 1500, rng, model)
    _bulk(org_a, "alice", 12, rng, model, metadata={"team": "rare"})
    query = [rng.gauss(0, 1) for _ in range(DIM)]
    with connection.cursor() as cursor:
        # Make the planner walk the HNSW index (as it does on a large table) instead of sorting all rows.
        cursor.execute("SET enable_sort = off")
        cursor.execute("SET enable_seqscan = off")
    try:
        result = search(alice_actor, "qqq", query, top_k=10, filters={"metadata": {"team": "rare"}})
        # Control: the same index walk without iterative scans stops at ef_search rows, most filtered out.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.iterative_scan = off")
            cursor.execute(
                "SELECT count(*) FROM (SELECT id FROM memory_memoryitem WHERE org_id = %s AND user_id = 'alice'"
                " ORDER BY embedding <=> %s::vector LIMIT 10) s",
                [org_a.pk, "[" + ",".join(map(str, query)) + "]"],
            )
            control = cursor.fetchone()[0]
            cursor.execute(
                "EXPLAIN SELECT id FROM memory_memoryitem WHERE org_id = %s AND user_id = 'alice'"
                " ORDER BY embedding <=> %s::vector LIMIT 10",
                [org_a.pk, "[" + ",".join(map(str, query)) + "]"],
            )
            plan = "\n".join(r[0] for r in cursor.fetchall())
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET enable_sort")
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET hnsw.iterative_scan")
    assert "mem_embedding_hnsw" in plan
    assert control < 10
    assert len(result.hits) == 10
    assert all(h.row["user_id"] == "alice" and h.row["metadata"] == {"team": "rare"} for h in result.hits)


def _comparable(where):
    sql, params = where
    return sql, [getattr(p, "obj", p) for p in params]  # psycopg's Jsonb wrapper has no equality


def _fresh_where(actor, filters):
    qs = memory_candidates(actor=actor, filters=filters)
    return _comparable(qs.query.get_compiler(using=qs.db).compile(qs.query.where))


def test_the_cached_filter_is_the_filter_django_compiles(org_a, alice_actor, bob, project):
    """memory.search.filter_sql reuses compiled WHERE clauses: for every actor and filter it must equal a fresh compile."""
    restricted, _ = api_key_create(org=org_a, name="restricted", projects=[project])
    read_only, _ = api_key_create(org=org_a, name="ro", read_only=True)
    plain, _ = api_key_create(org=org_a, name="plain")
    actors = [
        alice_actor,
        actor_for_account(bob, org_a),
        actor_for_key(restricted),
        actor_for_key(read_only),
        actor_for_key(plain),
        system_actor(org_a),
    ]
    when = datetime(2025, 1, 1, tzinfo=UTC)
    variants = [
        MemoryFilters(user_id="alice"),
        MemoryFilters(user_id="bob", project=project, session_id="s1"),
        MemoryFilters(project=project, memory_types=["fact", "event"], tags=["x"], metadata={"k": [1, "v"]}),
        MemoryFilters(user_id="alice", skills=["sql"], agent_id="a1", statuses=["archived"]),
        MemoryFilters(user_id="alice", created_after=when, occurred_before=when, include_superseded=True),
        MemoryFilters(user_id="alice", include_expired=True, scopes=["session"]),
    ]
    for actor in actors:
        for filters in variants:
            for _ in range(2):  # a miss, then a hit
                assert _comparable(filter_sql(actor, filters)) == _fresh_where(actor, filters), (
                    actor.label,
                    filters,
                )
    # Keys that differ only in their projects never share a filter.
    assert filter_sql(actor_for_key(restricted), variants[2]) != filter_sql(actor_for_key(plain), variants[2])


def test_one_compiled_filter_serves_every_subject(org_a, alice_actor, project):
    """The subject's user id is a parameter of the compiled WHERE: subjects never seen before reuse the
    compile of their filter shape, and get exactly what a fresh compile gives them."""
    from memory.search import sql

    shapes = [
        {},
        {"project": project, "session_id": "s1"},
        {"skills": ["sql"], "include_expired": True, "scopes": ["session"]},
    ]
    for shape in shapes:
        filter_sql(alice_actor, MemoryFilters(user_id="first", **shape))
        size = len(sql._where_cache)
        for user_id in ["alice", "bob", "user's 'quoted' id", "%", "用户"]:
            filters = MemoryFilters(user_id=user_id, **shape)
            assert _comparable(filter_sql(alice_actor, filters)) == _fresh_where(alice_actor, filters)
        assert len(sql._where_cache) == size  # no compile for a new subject


def test_a_cached_filter_follows_membership_changes(org_a, alice_actor, bob, project):
    """Memberships are read by the SQL when it runs, so a cached filter never outlives a removal."""
    memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Atlas ships on Fridays", scope="project", project=project),
    )
    bob_actor = actor_for_account(bob, org_a)
    filters = MemoryFilters(project=project)
    assert len(memory_search(actor=bob_actor, query="when does Atlas ship", filters=filters).hits) == 1
    ProjectMembership.objects.filter(project=project, account=bob).delete()
    assert memory_search(actor=bob_actor, query="when does Atlas ship", filters=filters).hits == []


def _conversation(org, user_id, rng, turns=60):
    """Turns of a few conversations (same time within one), with random vectors and a few shared words."""
    words = ["garden", "tomatoes", "violin", "lake", "guinea", "pig", "Berlin", "tickets", "pasta", "rain"]
    for session in range(3):
        when = datetime(2023, 5, 8 + session, 13, 0, tzinfo=UTC)
        for i in range(turns // 3):
            text = f"Speaker{i % 2}: " + " ".join(rng.sample(words, 3)) + f" turn {session}-{i}"
            vec = [rng.gauss(0, 1) for _ in range(DIM)]
            norm = math.sqrt(sum(y * y for y in vec))
            MemoryItemFactory(
                org=org, user_id=user_id, content=text, embedding=[x / norm for x in vec], occurred_at=when
            )


def test_the_one_pass_subject_search_ranks_like_the_index_search(alice_actor, org_a, settings):
    """The subject statement (exact, neighbours in the same trip) and the broad one agree row for row."""
    rng = random.Random(11)
    _conversation(org_a, "alice", rng)
    _conversation(org_a, "other", rng)  # another subject in between
    for query in ("garden tomatoes", "violin lake", "Berlin tickets pasta"):
        vec = [rng.gauss(0, 1) for _ in range(DIM)]
        runs = []
        for rows in (0, 5000):
            settings.SEARCH_EXACT_SUBJECT_ROWS = rows
            result = search(alice_actor, query, vec, top_k=12)
            runs.append([(h.id, round(h.score, 6), h.neighbour_of) for h in result.hits])
        assert runs[0] == runs[1]
        assert len(runs[0]) == 12
        assert any(n is not None for _, _, n in runs[0])  # neighbours were lent to on both paths


def test_the_subject_statement_lends_to_neighbours_under_a_generic_plan(alice_actor, org_a, settings):
    """PostgreSQL runs a prepared statement with a generic plan after five runs: the rows next to a
    candidate are found under it as under a plan made for the values (memory.search.sql's `stepped`)."""
    rng = random.Random(13)
    _conversation(org_a, "alice", rng)
    settings.SEARCH_EXACT_SUBJECT_ROWS = 5000
    vec = [rng.gauss(0, 1) for _ in range(DIM)]
    runs = {}
    try:
        for mode in ("force_custom_plan", "force_generic_plan"):
            with connection.cursor() as cursor:
                cursor.execute(f"SET plan_cache_mode = {mode}")
            result = search(alice_actor, "garden tomatoes", vec, top_k=12)
            runs[mode] = [(h.id, round(h.score, 6), h.neighbour_of) for h in result.hits]
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")
    assert runs["force_custom_plan"] == runs["force_generic_plan"]
    assert any(n is not None for _, _, n in runs["force_generic_plan"])


def test_a_subject_too_big_for_one_pass_goes_through_the_indexes(alice_actor, org_a, settings):
    from memory.search import service as search_module

    rng = random.Random(5)
    _conversation(org_a, "alice", rng, turns=30)
    vec = [rng.gauss(0, 1) for _ in range(DIM)]
    settings.SEARCH_EXACT_SUBJECT_ROWS = 0
    expected = ids(search(alice_actor, "garden", vec, top_k=8))
    settings.SEARCH_EXACT_SUBJECT_ROWS = 10  # fewer than alice's 30 rows
    filters = MemoryFilters(user_id="alice")
    try:
        assert search_module._exact_subject(alice_actor, filters)
        assert ids(search(alice_actor, "garden", vec, top_k=8)) == expected
        assert not search_module._exact_subject(alice_actor, filters)  # remembered: straight to the indexes
        assert ids(search(alice_actor, "garden", vec, top_k=8)) == expected
    finally:
        search_module._big_subjects.clear()  # the process cache outlives this test's rows


def test_the_keyed_keyword_match_finds_what_the_plain_one_finds(org_a, project, settings):
    """A broad search matches keywords through memory_search_keys (index mem_search_keys): the same rows,
    BM25 and all, as matching search_tokens itself; a subject whose id is a prefix of another's, or holds
    the separator or a quote, gets its own rows only (the WHERE clause decides, the key only narrows); a
    row too long to be keyed is still found."""
    from memory.search.ranking import query_terms
    from memory.search.sql import _keyed_match_usable, fetch_rows, keyword_keys

    settings.SEARCH_EXACT_SUBJECT_ROWS = 0
    assert _keyed_match_usable()  # the tests' owner is a superuser: migration 0007 marked it leakproof
    actor = system_actor(org_a)
    rng = random.Random(3)
    words = ["garden", "gardening", "tomatoes", "violin", "lake", "Berlin", "tickets", "用户对花生过敏"]
    subjects = ["a", "a|b", "a|b 'x", "ab"]
    for user_id in subjects:
        for i in range(15):
            vec = [rng.gauss(0, 1) for _ in range(DIM)]
            norm = math.sqrt(sum(x * x for x in vec))
            extra = {}
            if i % 5 == 0:
                extra = {"scope": "session", "session_id": "s1"}
            elif i % 5 == 1:
                extra = {"project": project}  # a user memory filed under the project: still the user's
            MemoryItemFactory(
                org=org_a,
                user_id=user_id,
                content=" ".join(rng.sample(words, 3)) + f" {user_id} {i}",
                embedding=[x / norm for x in vec],
                **extra,
            )
    for i in range(10):
        MemoryItemFactory(
            org=org_a, scope="project", project=project, content=f"garden lake project note {i}"
        )
    # More than 2,000 tokens: stored unprefixed (tsvector's size limit), found through the plain term.
    long_row = MemoryItemFactory(
        org=org_a, user_id="a", content="Berlin " + " ".join(f"w{i}x" for i in range(2100))
    )
    vec = [rng.gauss(0, 1) for _ in range(DIM)]
    model = provider_for(org_a, "a").model_name
    cases = [MemoryFilters(user_id=s) for s in subjects]
    cases += [MemoryFilters(project=project), MemoryFilters(user_id="a", project=project)]
    for filters in cases:
        for query in ("garden tickets", "violin 用户 过敏", "Berlin"):
            terms = query_terms(query)
            runs = [
                fetch_rows(
                    filter_sql(actor, filters),
                    org_id=org_a.pk,
                    qvec=np.asarray(vec, dtype=np.float32),
                    model=model,
                    terms=terms,
                    candidates=200,
                    subject=False,
                    keys=keys,
                )
                for keys in (None, keyword_keys(org_a.pk, filters))
            ]
            plain, keyed = ({(r["id"], round(float(r["bm25"]), 9)) for r in rows} for rows in runs)
            assert keyed == plain
            assert any(bm25 > 0 for _, bm25 in keyed)  # keyword matches were found at all
            if filters.user_id and filters.project is None:
                assert {r["user_id"] for r in runs[1]} == {filters.user_id}
            if filters.user_id == "a" and query == "Berlin":
                assert any(r["id"] == long_row.id and r["bm25"] > 0 for r in runs[1])


def test_a_broad_search_reuses_its_filters_keyword_statistics(org_a, alice_actor, bob, project, settings):
    """The keyword statistics a broad search reads (a sample of its filter's rows) are kept in Redis for
    the next search with the same compiled filter: the same rows and scores, without the sample; another
    caller's filter has its own; with the setting at 0 nothing is kept."""
    from memory.search.ranking import query_terms
    from memory.search.sql import _stats_key, fetch_rows, known_stats

    settings.SEARCH_EXACT_SUBJECT_ROWS = 0
    rng = random.Random(9)
    for i in range(40):
        MemoryItemFactory(
            org=org_a, scope="project", project=project, content=f"garden lake note {i} " * (i % 4 + 1)
        )
    vec = np.asarray([rng.gauss(0, 1) for _ in range(DIM)], dtype=np.float32)
    model = provider_for(org_a, "alice").model_name
    filters = MemoryFilters(project=project)
    where = filter_sql(alice_actor, filters)
    cache.delete(_stats_key(where))

    def rows():
        found = fetch_rows(
            where,
            org_id=org_a.pk,
            qvec=vec,
            model=model,
            terms=query_terms("garden"),
            candidates=50,
            subject=False,
        )
        return sorted(
            (r["id"], round(float(r["bm25"]), 9), r["subject_rows"], r["stats_avgdl"]) for r in found
        )

    assert known_stats(where) is None
    first = rows()
    assert any(bm25 > 0 for _, bm25, _, _ in first)
    assert known_stats(where) == (40.0, first[0][3])
    # The next search uses them: same rows, same BM25, same statistics.
    assert rows() == first
    # Statistics that differ show in the scores (they really are the ones used).
    cache.set(_stats_key(where), (40.0, 1.0), timeout=60)
    assert [bm25 for _, bm25, _, _ in rows()] != [bm25 for _, bm25, _, _ in first]
    # Bob (a project viewer) reads through another compiled filter: a key of its own.
    assert _stats_key(filter_sql(actor_for_account(bob, org_a), filters)) != _stats_key(where)
    settings.SEARCH_KEYWORD_STATS_SECONDS = 0
    assert known_stats(where) is None


def test_the_numbered_statements_are_what_psycopg_would_send(org_a, alice_actor, project):
    """run_statements sends each statement with PostgreSQL's placeholders, converted once (sql.numbered),
    through psycopg's raw-query cursor: the text must be the one psycopg's own conversion gives, for every
    statement shape (one-pass subject, broad with and without keyed matching and given statistics, the
    neighbours by id, the scan settings)."""
    from psycopg._queries import PostgresQuery  # the conversion psycopg.Cursor applies
    from psycopg.adapt import Transformer

    from memory.search import sql

    def psycopg_text(statement: str, params: list) -> bytes:
        query = PostgresQuery(Transformer())
        query.convert(
            statement, [None if isinstance(p, np.ndarray) else p for p in params]
        )  # values: no matter
        return query.query

    terms = [("allergic", False), ("花生", False), ("50%", True)]
    qvec = np.zeros(DIM, dtype=np.float32)
    statements = [
        sql.ids_statement(
            filter_sql(alice_actor, MemoryFilters(user_id="alice")), ids=[1], times=[], qvec=qvec, model="m"
        ),
        (sql._SCAN_SQL, sql._scan_args(24)),
        ("SELECT 7 %% 3, %s", [1]),
    ]
    for filters in [
        MemoryFilters(user_id="alice"),
        MemoryFilters(project=project, tags=["x"], metadata={"k": "50%"}),
        MemoryFilters(user_id="bob", project=project, session_id="s1"),
    ]:
        where = filter_sql(alice_actor, filters)
        keys = sql.keyword_keys(org_a.pk, filters)
        for subject, stats in [(True, None), (False, None), (False, (10.0, 5.0))]:
            for statement_terms in (terms, []):
                statements.append(
                    sql.search_statement(
                        where, org_id=org_a.pk, qvec=qvec, model="m", terms=statement_terms, candidates=24,
                        subject=subject, lenders=16, keys=keys or None, stats=stats,
                    )
                )  # fmt: skip
    for statement, params in statements:
        assert sql.numbered(statement) == psycopg_text(statement, params), statement[:200]
    with pytest.raises(ValueError, match="unsupported placeholder"):
        sql.numbered("SELECT %b")


def test_an_org_wide_search_with_an_api_key_and_no_subject_answers(org_a, key_a):
    """Compiling a WHERE Django knows matches nothing raises EmptyResultSet (and one it knows matches
    everything FullResultSet): the search answers instead of failing."""
    from projects.access import actor_for_key

    actor = actor_for_key(key_a[0])
    MemoryItemFactory(org=org_a, content="The user keeps bees on the roof", embedded=True)
    result = memory_search(actor=actor, query="bees", filters=MemoryFilters())
    assert isinstance(result.hits, list)
