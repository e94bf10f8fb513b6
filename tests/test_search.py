"""Hybrid search: the ranking formula, Chinese and English keywords, filters, access, budget, recency."""

import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core.text import content_hash, estimate_tokens
from memory.embeddings import provider_for
from memory.models import MemoryItem
from memory.search import filter_sql, memory_search
from memory.search.ranking import (
    NEIGHBOUR_UNCONDITIONAL,
)
from memory.selectors import MemoryFilters, memory_candidates
from memory.services import memory_create, memory_supersede
from projects.access import actor_for_account, actor_for_key
from projects.models import ProjectMembership
from projects.services import api_key_create

from .factories import MemoryItemFactory

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


def test_it_ranks_session_scope_above_a_slightly_closer_user_memory(alice_actor, org_a):
    user = MemoryItemFactory(org=org_a, content="alpha memory one", embedding=unit((0, 1.0)))
    session = MemoryItemFactory(
        org=org_a,
        content="alpha memory two",
        embedding=unit((0, 1.0), (1, 0.3)),
        scope="session",
        session_id="s1",
    )
    far = MemoryItemFactory(org=org_a, content="alpha memory three", embedding=unit((2, 1.0)))

    result = search(alice_actor, "qqq", unit((0, 1.0)), session_id="s1", top_k=3)

    assert ids(result) == [session.pk, user.pk, far.pk]
    by_id = {h.id: h for h in result.hits}
    # relevance = 0.7 * vector + 0.3 * keyword; final = .5 rel + .3 conf + .2 scope
    # multilingual-e5-small's floor is 0.75: vector = (cosine - 0.75) / 0.25, clipped to [0, 1]
    assert by_id[user.pk].vector == pytest.approx(1.0)
    assert by_id[far.pk].vector == pytest.approx(0.0)
    assert by_id[session.pk].vector == pytest.approx((1 / math.sqrt(1.09) - 0.75) / 0.25, abs=1e-3)
    assert by_id[user.pk].score == pytest.approx(0.5 * 0.7 + 0.3 * 1.0 + 0.2 * 0.6, abs=1e-3)
    assert by_id[session.pk].scope_priority == 1.0
    assert by_id[session.pk].score > by_id[user.pk].score


def test_it_ranks_a_confident_memory_above_a_closer_unsure_one(alice_actor, org_a):
    unsure = MemoryItemFactory(org=org_a, content="beta memory one", embedding=unit((0, 1.0)), confidence=0.7)
    sure = MemoryItemFactory(
        org=org_a, content="beta memory two", embedding=unit((0, 1.0), (1, 0.3)), confidence=1.0
    )
    MemoryItemFactory(org=org_a, content="beta memory three", embedding=unit((2, 1.0)))

    result = search(alice_actor, "qqq", unit((0, 1.0)), top_k=3)

    assert ids(result)[:2] == [sure.pk, unsure.pk]
    unsure_hit = next(h for h in result.hits if h.id == unsure.pk)
    assert unsure_hit.confidence == pytest.approx(0.7)
    assert unsure_hit.score == pytest.approx(0.5 * 0.7 + 0.3 * 0.7 + 0.2 * 0.6, abs=1e-3)


def test_it_ranks_project_scope_between_session_and_user(alice_actor, org_a, project):
    vec = unit((0, 1.0))
    user = MemoryItemFactory(org=org_a, content="gamma memory one", embedding=vec)
    proj = MemoryItemFactory(
        org=org_a, content="gamma memory two", embedding=vec, scope="project", project=project, user_id=""
    )
    sess = MemoryItemFactory(
        org=org_a, content="gamma memory three", embedding=vec, scope="session", session_id="s9"
    )

    filters = MemoryFilters(user_id="alice", project=project, session_id="s9")
    result = memory_search(actor=alice_actor, query="qqq", filters=filters, query_vector=vec, top_k=5)

    assert ids(result) == [sess.pk, proj.pk, user.pk]
    assert [h.scope_priority for h in result.hits] == [1.0, 0.8, 0.6]


@pytest.fixture
def mixed_memories(org_a):
    texts = [
        "EDU-2291 是登录页面在 Safari 上白屏的问题，已经在 2.3.1 修复",
        "用户对花生过敏，点餐时要避开花生",
        "用户喜欢用中文交流，回答要简洁",
        "用户住在上海浦东",
        "The Atlas project uses PostgreSQL 16 with pgvector",
        "The user prefers dark mode in every editor",
        "The user's daughter plays the violin",
    ]
    return {t: MemoryItemFactory(org=org_a, content=t, embedded=True) for t in texts}


@pytest.mark.parametrize(
    "query, expected",
    [
        ("EDU-2291 是什么问题", "EDU-2291 是登录页面在 Safari 上白屏的问题，已经在 2.3.1 修复"),
        ("用户对什么过敏", "用户对花生过敏，点餐时要避开花生"),
        ("which database does Atlas use", "The Atlas project uses PostgreSQL 16 with pgvector"),
        ("violin lessons", "The user's daughter plays the violin"),
    ],
)
def test_it_finds_memories_by_their_words_in_chinese_and_english(
    alice_client, mixed_memories, query, expected
):
    for mode in ("keyword", "hybrid"):
        response = alice_client.post(
            "/api/v1/memories/search",
            {"query": query, "user_id": "alice", "top_k": 3, "explain": True, "mode": mode},
            format="json",
        )
        assert response.status_code == 200, response.content
        top = response.json()["results"][0]
        assert top["content"] == expected, (mode, response.json()["results"])
        assert top["explain"]["keyword"] == pytest.approx(1.0)
        assert top["id"] == mixed_memories[expected].pk


def test_it_answers_the_contract_fields(key_a, alice_actor, org_a, mixed_memories):
    _, client = key_a
    response = client.post(
        "/api/v1/memories/search", {"query": "用户住在哪里", "user_id": "alice", "top_k": 2}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert isinstance(body["took_ms"], float)
    assert len(body["results"]) == 2
    for row in body["results"]:
        assert {"id", "content", "metadata", "score", "memory_type", "scope", "occurred_at"} <= set(row)
        assert "explain" not in row
    assert body["results"][0]["content"] == "用户住在上海浦东"


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


def test_it_finds_nothing_of_alice_with_charlies_key_or_account(alice_actor, org_a, key_b, charlie_client):
    memory_create(
        actor=alice_actor, org=org_a, content="Alice keeps her passport in the blue drawer", user_id="alice"
    )
    _, client = key_b
    body = {"query": "where is the passport", "user_id": "alice"}
    response = client.post("/api/v1/memories/search", body, format="json")
    assert response.status_code == 200
    assert response.json()["results"] == []
    response = charlie_client.post("/api/v1/memories/search", body, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_it_hides_owner_only_project_memories_from_others(
    alice_actor, org_a, project, bob_client, alice_client
):
    secret = memory_create(
        actor=alice_actor,
        org=org_a,
        content="Atlas launch is moved to March, keep it quiet",
        scope="project",
        project=project,
        visibility="owner_only",
    ).item
    shared = memory_create(
        actor=alice_actor,
        org=org_a,
        content="Atlas launch checklist lives in the wiki",
        scope="project",
        project=project,
    ).item
    query = {"query": "Atlas launch", "project": "atlas", "top_k": 5}
    bob = bob_client.post("/api/v1/memories/search", {**query, "user_id": "bob"}, format="json")
    alice = alice_client.post("/api/v1/memories/search", {**query, "user_id": "alice"}, format="json")
    assert bob.status_code == 200 and alice.status_code == 200
    assert [r["id"] for r in bob.json()["results"]] == [shared.pk]
    assert {r["id"] for r in alice.json()["results"]} == {secret.pk, shared.pk}


def test_it_keeps_to_the_token_budget_and_top_k(alice_actor, org_a, alice_client):
    for i in range(6):
        memory_create(
            actor=alice_actor,
            org=org_a,
            content=f"Note {i} about the garden: " + "tomatoes need water every morning. " * 8,
            user_id="alice",
            dedup="none",
        )
    response = alice_client.post(
        "/api/v1/memories/search",
        {"query": "garden tomatoes", "user_id": "alice", "top_k": 5, "max_tokens": 200},
        format="json",
    )
    results = response.json()["results"]
    used = sum(estimate_tokens(r["content"]) for r in results)
    assert 1 <= len(results) < 5
    assert used <= 200
    response = alice_client.post(
        "/api/v1/memories/search",
        {"query": "garden tomatoes", "user_id": "alice", "top_k": 4, "max_tokens": 100000},
        format="json",
    )
    assert len(response.json()["results"]) == 4


@pytest.mark.parametrize(
    "old, new, query",
    [
        ("The user lives in Beijing", "The user lives in Shanghai", "where does the user live now"),
        ("用户住在北京", "用户住在上海", "用户现在住在哪里"),
    ],
)
def test_it_ranks_the_newest_version_first_and_keeps_the_old_one(alice_actor, org_a, old, new, query):
    # dedup="none": this is about ranking; whether the write path keeps both is the gate's business.
    base = {"actor": alice_actor, "org": org_a, "user_id": "alice", "dedup": "none"}
    first = memory_create(**base, content=old, occurred_at=datetime(2022, 5, 1, tzinfo=UTC)).item
    second = memory_create(**base, content=new, occurred_at=datetime(2025, 3, 1, tzinfo=UTC)).item
    memory_create(actor=alice_actor, org=org_a, content="The user enjoys hiking on weekends", user_id="alice")

    result = search(alice_actor, query, top_k=3, max_tokens=1000)

    order = ids(result)
    assert order.index(second.pk) < order.index(first.pk)
    assert {h.group for h in result.hits if h.id in (first.pk, second.pk)} != {None}
    assert MemoryItem.objects.filter(pk=first.pk, status="active").exists()


def test_it_collapses_copies_of_one_type_to_the_best(alice_actor, org_a):
    vec = unit((0, 1.0))
    a = MemoryItemFactory(org=org_a, content="The user drinks oolong tea", embedding=vec)
    b = MemoryItemFactory(org=org_a, content="The user drinks oolong tea", embedding=vec)
    other = MemoryItemFactory(
        org=org_a, content="The user drinks oolong tea", embedding=vec, memory_type="preference"
    )
    result = search(alice_actor, "oolong tea", vec, top_k=5)
    found = ids(result)
    assert len({a.pk, b.pk} & set(found)) == 1
    assert other.pk in found


def test_it_leaves_out_superseded_archived_and_expired_unless_asked(alice_actor, org_a, alice_client):
    old = memory_create(
        actor=alice_actor, org=org_a, content="The office is on floor 3", user_id="alice"
    ).item
    new = memory_create(
        actor=alice_actor, org=org_a, content="The office moved to floor 7", user_id="alice"
    ).item
    memory_supersede(actor=alice_actor, old=old, new=new)
    archived = memory_create(
        actor=alice_actor, org=org_a, content="The office parking pass is blue", user_id="alice"
    ).item
    MemoryItem.objects.filter(pk=archived.pk).update(status="archived")
    expired = memory_create(
        actor=alice_actor,
        org=org_a,
        content="The office is closed this week for painting",
        user_id="alice",
        expires_at=timezone.now() - timedelta(days=1),
    ).item
    body = {"query": "office floor", "user_id": "alice", "top_k": 10}
    found = {
        r["id"] for r in alice_client.post("/api/v1/memories/search", body, format="json").json()["results"]
    }
    assert found == {new.pk}
    body["include_superseded"] = True
    found = {
        r["id"] for r in alice_client.post("/api/v1/memories/search", body, format="json").json()["results"]
    }
    assert found == {new.pk, old.pk}
    body.update(include_superseded=False, status=["archived"])
    found = {
        r["id"] for r in alice_client.post("/api/v1/memories/search", body, format="json").json()["results"]
    }
    assert found == {archived.pk}
    body.update(status=["active"], include_expired=True)
    found = {
        r["id"] for r in alice_client.post("/api/v1/memories/search", body, format="json").json()["results"]
    }
    assert found == {new.pk, expired.pk}


def test_it_filters_by_type_tags_metadata_agent_and_time(alice_actor, org_a, alice_client):
    base = {"actor": alice_actor, "org": org_a, "user_id": "alice"}
    pref = memory_create(
        **base, content="The user likes window seats on trains", memory_type="preference"
    ).item
    tagged = memory_create(
        **base, content="The user takes the train to Hangzhou monthly", tags=["travel"]
    ).item
    meta = memory_create(
        **base, content="The user booked a train for the conference", metadata={"trip": "kdd"}
    ).item
    agent = memory_create(
        **base, content="The user asked the travel agent about train refunds", agent_id="travel-bot"
    ).item
    old = memory_create(
        **base,
        content="The user missed a train once in Beijing",
        occurred_at=datetime(2019, 1, 1, tzinfo=UTC),
    ).item

    def found(**extra):
        body = {"query": "train", "user_id": "alice", "top_k": 10, **extra}
        response = alice_client.post("/api/v1/memories/search", body, format="json")
        assert response.status_code == 200, response.content
        return {r["id"] for r in response.json()["results"]}

    assert found() == {pref.pk, tagged.pk, meta.pk, agent.pk, old.pk}
    assert found(memory_types=["preference"]) == {pref.pk}
    assert found(tags=["travel"]) == {tagged.pk}
    assert found(metadata={"trip": "kdd"}) == {meta.pk}
    assert found(agent_id="travel-bot") == {agent.pk}
    assert found(occurred_before="2020-01-01T00:00:00Z") == {old.pk}
    assert found(scopes=["session"]) == set()


def test_it_returns_skill_memories_only_for_listed_skills(alice_actor, org_a, alice_client):
    base = {"actor": alice_actor, "org": org_a, "user_id": "alice", "memory_type": "skill"}
    label = memory_create(
        **base, content="When printing labels, use the 4x6 template", skill="label-master"
    ).item
    product = memory_create(
        **base, content="When exporting product data, use the 4x6 CSV layout", skill="product-data"
    ).item
    general = memory_create(
        actor=alice_actor, org=org_a, user_id="alice", content="The user prints with a 4x6 printer"
    ).item

    def found(skills=None):
        body = {"query": "4x6 template", "user_id": "alice", "top_k": 10}
        if skills is not None:
            body["skills"] = skills
        return {
            r["id"]
            for r in alice_client.post("/api/v1/memories/search", body, format="json").json()["results"]
        }

    assert found() == {general.pk}
    assert found(["label-master"]) == {general.pk, label.pk}
    assert found(["label-master", "product-data"]) == {general.pk, label.pk, product.pk}


def test_it_counts_recalls(alice_actor, org_a, alice_client):
    item = memory_create(
        actor=alice_actor, org=org_a, content="The user's cat is called Miso", user_id="alice"
    ).item
    for _ in range(2):
        alice_client.post("/api/v1/memories/search", {"query": "cat name", "user_id": "alice"}, format="json")
    item.refresh_from_db()
    assert item.access_count == 2
    assert item.last_accessed_at is not None


@pytest.mark.parametrize(
    "body",
    [
        {"user_id": "alice"},
        {"query": "x", "user_id": "alice", "top_k": 0},
        {"query": "x", "user_id": "alice", "max_tokens": -5},
        {"query": "x", "user_id": "alice", "memory_types": ["bogus"]},
        {"query": "x", "user_id": "alice", "surprise": 1},
        {"query": "x", "user_id": "alice", "occurred_after": "yesterday"},
        {"query": "x", "user_id": "alice", "mode": "magic"},
        {"query": "x"},
        ["not", "an", "object"],
    ],
)
def test_it_rejects_bad_input_with_a_json_400(alice_client, body):
    response = alice_client.post("/api/v1/memories/search", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"]


def test_it_404s_an_unknown_project(alice_client, org_a):
    response = alice_client.post(
        "/api/v1/memories/search", {"query": "x", "user_id": "alice", "project": "nope"}, format="json"
    )
    assert response.status_code == 404


@pytest.mark.parametrize("exact_subject_rows", [0, 5000], ids=["indexes", "one-pass"])
def test_it_lends_relevance_to_the_next_turn_of_the_same_conversation(
    alice_actor, org_a, settings, exact_subject_rows
):
    settings.SEARCH_EXACT_SUBJECT_ROWS = exact_subject_rows
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    question = MemoryItemFactory(
        org=org_a, content="Alex: What pet do you have?", embedding=unit((0, 1.0)), occurred_at=when
    )
    answer = MemoryItemFactory(
        org=org_a,
        content="Sam: Oscar, my guinea pig. He's been great.",
        embedding=unit((3, 1.0)),
        occurred_at=when,
    )
    other = MemoryItemFactory(
        org=org_a, content="Sam: I walked by the lake", embedding=unit((0, 0.8), (4, 0.6)), occurred_at=when
    )
    # A row stored right after, but from another day: not the same conversation, so nothing is lent.
    later = MemoryItemFactory(
        org=org_a,
        content="Sam: The weather was odd",
        embedding=unit((5, 1.0)),
        occurred_at=when + timedelta(days=3),
    )
    assert answer.pk == question.pk + 1 and later.pk == other.pk + 1

    result = search(alice_actor, "qqq", unit((0, 1.0)), top_k=4)
    assert ids(result)[:3] == [question.pk, answer.pk, other.pk]
    hit = next(h for h in result.hits if h.id == answer.pk)
    assert hit.neighbour_of == question.pk
    # The answer shares nothing with the query (orthogonal vector), so it gets the unconditional share.
    expected = settings.SEARCH_NEIGHBOUR_WEIGHT * 0.7 * NEIGHBOUR_UNCONDITIONAL
    assert hit.relevance == pytest.approx(expected, abs=1e-3)
    assert next(h for h in result.hits if h.id == later.pk).neighbour_of is None

    settings.SEARCH_NEIGHBOUR_WEIGHT = 0
    result = search(alice_actor, "qqq", unit((0, 1.0)), top_k=4)
    assert ids(result)[:2] == [question.pk, other.pk]


def test_it_sees_a_new_embedding_config_at_once_despite_the_provider_cache(org_a):
    from core.crypto import encrypt
    from memory.embeddings import cached_provider_for
    from memory.models import EmbeddingConfig

    assert cached_provider_for(org_a, "alice").model_name == "multilingual-e5-small"
    config = EmbeddingConfig.objects.create(
        org=org_a,
        user_id="alice",
        provider="openai",
        model="other-embed",
        base_url="http://127.0.0.1:9/v1",
        dimensions=384,
        api_key_encrypted=encrypt("sk-test"),
    )
    assert cached_provider_for(org_a, "alice").model_name == "other-embed"
    assert cached_provider_for(org_a, "bob").model_name == "multilingual-e5-small"
    config.delete()
    assert cached_provider_for(org_a, "alice").model_name == "multilingual-e5-small"
    assert EmbeddingConfig.objects.filter(org=org_a).count() == 0


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


def test_a_cached_filter_follows_membership_changes(org_a, alice_actor, bob, project):
    """Memberships are read by the SQL when it runs, so a cached filter never outlives a removal."""
    memory_create(
        actor=alice_actor, org=org_a, content="Atlas ships on Fridays", scope="project", project=project
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


def test_a_neighbour_on_topic_is_lent_more_than_one_off_topic(alice_actor, org_a):
    when = datetime(2023, 6, 1, 9, 0, tzinfo=UTC)
    before = MemoryItemFactory(
        org=org_a, content="Sam: Any plans for the weekend?", embedding=unit((7, 1.0)), occurred_at=when
    )
    match = MemoryItemFactory(
        org=org_a, content="Alex: We are going to the lake", embedding=unit((0, 1.0)), occurred_at=when
    )
    after = MemoryItemFactory(
        org=org_a,
        content="Sam: The lake is lovely in June",
        embedding=unit((0, 0.9), (8, 0.44)),
        occurred_at=when,
    )
    result = search(alice_actor, "qqq", unit((0, 1.0)), top_k=3)
    by_id = {h.id: h for h in result.hits}
    assert by_id[before.pk].neighbour_of == match.pk and by_id[after.pk].neighbour_of == match.pk
    assert by_id[after.pk].relevance > by_id[before.pk].relevance


@pytest.mark.parametrize("exact_subject_rows", [0, 5000], ids=["indexes", "one-pass"])
def test_it_answers_by_keyword_while_the_embedding_provider_is_down(
    alice_actor, org_a, alice_client, settings, exact_subject_rows
):
    """Rows of the local model stay searchable by their words when the subject's provider fails."""
    from core.crypto import encrypt
    from memory.models import EmbeddingConfig

    from .openai_server import Fail, OpenAIStub

    settings.SEARCH_EXACT_SUBJECT_ROWS = exact_subject_rows
    lisbon = memory_create(
        actor=alice_actor, org=org_a, content="Alice moved to Lisbon in March", user_id="alice"
    )
    memory_create(actor=alice_actor, org=org_a, content="Alice plays chess on Sundays", user_id="alice")
    with OpenAIStub() as stub:
        EmbeddingConfig.objects.create(
            org=org_a,
            user_id="alice",
            provider="openai",
            model="stub-embed",
            base_url=stub.base_url,
            dimensions=384,
            api_key_encrypted=encrypt("sk-test"),
        )
        stub.embedding_failures.extend([Fail(503)] * 3)
        response = alice_client.post(
            "/api/v1/memories/search", {"query": "where did Alice move", "user_id": "alice"}, format="json"
        )
    assert response.status_code == 200, response.content
    body = response.json()
    assert [r["id"] for r in body["results"]][:1] == [lisbon.item.pk]
    assert body["notes"] == ["embedding unavailable: keyword matches only"]
