"""Hybrid search: the ranking formula, Chinese and English keywords, filters, access, budget, recency."""

import math
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from core.text import estimate_tokens
from memory.drafts import MemoryDraft
from memory.models import MemoryItem
from memory.search import memory_search
from memory.search.ranking import NEIGHBOUR_UNCONDITIONAL
from memory.selectors import MemoryFilters
from memory.services import memory_create, memory_supersede

from .factories import MemoryItemFactory
from .search_helpers import ids, search, unit


def test_it_ranks_session_scope_above_a_slightly_closer_user_memory(alice_actor, org_a, settings):
    settings.SEARCH_RANKING = "seed"  # the seed formula, still available
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


def test_it_ranks_a_confident_memory_above_a_closer_unsure_one(alice_actor, org_a, settings):
    settings.SEARCH_RANKING = "seed"  # the seed formula; by default confidence only breaks near-ties
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
    # Hand-made vectors, all equal: none stands out from the others, so no floor (see search_helpers.search).
    result = memory_search(
        actor=alice_actor, query="qqq", filters=filters, query_vector=vec, top_k=5, threshold=0
    )

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
        # keyword mode: BM25 over the best candidate's; hybrid: the share of the query's terms it holds
        assert (
            top["explain"]["keyword"] == pytest.approx(1.0)
            if mode == "keyword"
            else top["explain"]["keyword"] > 0
        )
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


def test_it_finds_nothing_of_alice_with_charlies_key_or_account(alice_actor, org_a, key_b, charlie_client):
    memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice keeps her passport in the blue drawer", user_id="alice"),
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
        draft=MemoryDraft(
            content="Atlas launch is moved to March, keep it quiet",
            scope="project",
            project=project,
            visibility="owner_only",
        ),
    ).item
    shared = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(
            content="Atlas launch checklist lives in the wiki", scope="project", project=project
        ),
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
            dedup="none",
            draft=MemoryDraft(
                content=f"Note {i} about the garden: " + "tomatoes need water every morning. " * 8,
                user_id="alice",
            ),
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
    base = {"actor": alice_actor, "org": org_a, "dedup": "none"}
    first = memory_create(
        **base, draft=MemoryDraft(user_id="alice", content=old, occurred_at=datetime(2022, 5, 1, tzinfo=UTC))
    ).item
    second = memory_create(
        **base, draft=MemoryDraft(user_id="alice", content=new, occurred_at=datetime(2025, 3, 1, tzinfo=UTC))
    ).item
    memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="The user enjoys hiking on weekends", user_id="alice"),
    )

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
        actor=alice_actor, org=org_a, draft=MemoryDraft(content="The office is on floor 3", user_id="alice")
    ).item
    new = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="The office moved to floor 7", user_id="alice"),
    ).item
    memory_supersede(actor=alice_actor, old=old, new=new)
    archived = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="The office parking pass is blue", user_id="alice"),
    ).item
    MemoryItem.objects.filter(pk=archived.pk).update(status="archived")
    expired = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(
            content="The office is closed this week for painting",
            user_id="alice",
            expires_at=timezone.now() - timedelta(days=1),
        ),
    ).item
    body = {"query": "office floor", "user_id": "alice", "top_k": 10, "threshold": 0}
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
    base = {"actor": alice_actor, "org": org_a}
    alice_only = {"user_id": "alice"}
    pref = memory_create(
        **base,
        draft=MemoryDraft(
            **alice_only, content="The user likes window seats on trains", memory_type="preference"
        ),
    ).item
    tagged = memory_create(
        **base,
        draft=MemoryDraft(
            **alice_only, content="The user takes the train to Hangzhou monthly", tags=["travel"]
        ),
    ).item
    meta = memory_create(
        **base,
        draft=MemoryDraft(
            **alice_only, content="The user booked a train for the conference", metadata={"trip": "kdd"}
        ),
    ).item
    agent = memory_create(
        **base,
        draft=MemoryDraft(
            **alice_only, content="The user asked the travel agent about train refunds", agent_id="travel-bot"
        ),
    ).item
    old = memory_create(
        **base,
        draft=MemoryDraft(
            **alice_only,
            content="The user missed a train once in Beijing",
            occurred_at=datetime(2019, 1, 1, tzinfo=UTC),
        ),
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
    base = {"actor": alice_actor, "org": org_a}
    subject = {"user_id": "alice", "memory_type": "skill"}
    label = memory_create(
        **base,
        draft=MemoryDraft(
            **subject, content="When printing labels, use the 4x6 template", skill="label-master"
        ),
    ).item
    product = memory_create(
        **base,
        draft=MemoryDraft(
            **subject, content="When exporting product data, use the 4x6 CSV layout", skill="product-data"
        ),
    ).item
    general = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(user_id="alice", content="The user prints with a 4x6 printer"),
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
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="The user's cat is called Miso", user_id="alice"),
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
    # Hand-made vectors: the seed's relevance (the calibrated one reads them as real cosines of the model).
    settings.SEARCH_RANKING = "seed"
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
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice moved to Lisbon in March", user_id="alice"),
    )
    memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice plays chess on Sundays", user_id="alice"),
    )
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
