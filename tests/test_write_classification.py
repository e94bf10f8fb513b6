"""Duplicate, update or distinct, decided at write time (infer) for a single add, a batch and extraction,
through the public API with the real embedding model; the chat model's decision on a loopback server
speaking the OpenAI API (tests/openai_server.py), and the offline fallback when its answer is unusable.
"""

import json

import pytest

from memory.models import MemoryItem, MemoryRevision

from .openai_server import Fail, OpenAIStub
from .test_reconcile import say

URL = "/api/v1/memories"


def add(client, content, user_id="u1"):
    return client.post(URL, {"content": content, "user_id": user_id}, format="json")


def statuses(**filters) -> dict[str, str]:
    return dict(MemoryItem.objects.filter(**filters).values_list("content", "status"))


# ---- single add -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "first,second",
    [
        ("用户每天晚上遛狗", "用户每晚都会去遛狗"),
        ("The user is allergic to shrimp", "The user has a shrimp allergy"),
        ("The user's favourite drink is oolong tea", "用户最爱喝乌龙茶"),
    ],
    ids=["zh", "en", "cross"],
)
def test_it_merges_a_duplicate_and_says_so(key_a, first, second):
    _, client = key_a
    created = add(client, first)
    assert created.status_code == 201, created.content
    assert created.json()["decision"] == {"kind": "distinct", "reason": "no similar memory"}
    again = add(client, second)
    assert again.status_code == 200, again.content
    body = again.json()
    assert body["id"] == body["duplicate_of"] == created.json()["id"]
    assert body["decision"]["kind"] == "duplicate" and f"#{body['id']}" in body["decision"]["reason"]
    assert "supersedes" not in body
    assert MemoryItem.objects.count() == 1
    assert MemoryRevision.objects.filter(item_ref=body["id"], action="merge").count() == 1


def test_it_supersedes_on_an_update_and_the_old_one_can_be_restored(key_a):
    _, client = key_a
    old = add(client, "The user lives in Vancouver").json()
    new = add(client, "The user now lives in Calgary")
    assert new.status_code == 201, new.content
    body = new.json()
    assert body["supersedes"] == old["id"] and "duplicate_of" not in body
    assert body["decision"]["kind"] == "update" and "residence" in body["decision"]["reason"]
    row = MemoryItem.objects.get(pk=old["id"])
    assert (row.status, row.superseded_by_id, row.content) == (
        "superseded",
        body["id"],
        "The user lives in Vancouver",
    )
    history = client.get(f"{URL}/{old['id']}/history").json()["results"]
    assert [h["action"] for h in history] == ["add", "supersede"]
    restored = client.post(f"{URL}/{old['id']}/restore", {"revision": 1}, format="json")
    assert restored.status_code == 200, restored.content
    assert statuses() == {"The user lives in Vancouver": "active", "The user now lives in Calgary": "active"}


def test_it_supersedes_a_new_value_without_any_change_word(key_a):
    _, client = key_a
    old = add(client, "The user uses Trello for project tracking").json()
    body = add(client, "The user uses Asana for project tracking").json()
    assert body["supersedes"] == old["id"]
    assert statuses() == {
        "The user uses Trello for project tracking": "superseded",
        "The user uses Asana for project tracking": "active",
    }


HARD_NEGATIVES = [
    ("The user is allergic to shrimp", "The user's son is allergic to shrimp"),  # another person
    ("用户会说韩语", "用户的妻子会说韩语"),  # another person
    ("The user codes in Python every day", "The user saw a python at the zoo"),  # another sense
    ("The user will move to Vancouver next spring", "The user moved to Vancouver"),  # plan vs done
    ("用户打算学潜水", "用户学会了潜水"),  # plan vs done
    ("用户会弹吉他", "用户会打网球"),  # both true
    ("The user speaks Italian", "The user speaks Portuguese"),  # both true
    ("用户2021年去过冰岛", "用户2024年去过冰岛"),  # another trip, another year
    ("The user wrote the 2022 budget review", "The user wrote the 2025 budget review"),  # another report
    ("用户在青岛出差", "The user's sister studies in Qingdao"),  # cross-lingual, a shared name
]


@pytest.mark.parametrize("first,second", HARD_NEGATIVES)
def test_it_keeps_each_hard_negative_as_its_own_memory(key_a, first, second):
    _, client = key_a
    assert add(client, first).status_code == 201
    response = add(client, second)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["decision"]["kind"] == "distinct" and "supersedes" not in body
    assert statuses() == {first: "active", second: "active"}


def test_it_does_not_compare_with_another_subject(key_a):
    _, client = key_a
    add(client, "The user is allergic to shrimp", user_id="u1")
    response = add(client, "The user is allergic to shrimp", user_id="u2")
    assert response.status_code == 201 and response.json()["decision"]["kind"] == "distinct"


# ---- batch and extraction: the same decision ----------------------------------------------------------


def test_a_batch_merges_supersedes_and_adds_as_a_single_add_would(key_a):
    _, client = key_a
    stored = {
        text: add(client, text).json()["id"] for text in ("用户每天晚上遛狗", "The user lives in Vancouver")
    }
    memories = [
        {"content": "用户每晚都会去遛狗", "user_id": "u1"},  # duplicate of a stored row
        {"content": "The user now lives in Calgary", "user_id": "u1"},  # update of a stored row
        {"content": "The user's son is allergic to shrimp", "user_id": "u1"},  # distinct
        {"content": "The user uses Trello for project tracking", "user_id": "u1"},
        {"content": "The user uses Asana for project tracking", "user_id": "u1"},  # update of the item before
        {"content": "The user has a shrimp allergy", "user_id": "u1"},  # distinct: the son's is another's
    ]
    response = client.post(f"{URL}/batch", {"memories": memories, "infer": True}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    results = body["results"]
    assert [r["status"] for r in results] == [
        "duplicate",
        "superseded",
        "created",
        "created",
        "superseded",
        "created",
    ]
    assert (body["created"], body["duplicate"], body["superseded"]) == (3, 1, 2)
    assert results[0]["duplicate_of"] == stored["用户每天晚上遛狗"]
    assert results[0]["decision"]["kind"] == "duplicate"
    assert results[1]["supersedes"] == stored["The user lives in Vancouver"]
    assert results[1]["decision"]["kind"] == "update"
    assert results[4]["supersedes"] == results[3]["id"]
    assert statuses() == {
        "用户每天晚上遛狗": "active",
        "The user lives in Vancouver": "superseded",
        "The user now lives in Calgary": "active",
        "The user's son is allergic to shrimp": "active",
        "The user uses Trello for project tracking": "superseded",
        "The user uses Asana for project tracking": "active",
        "The user has a shrimp allergy": "active",
    }


def test_extraction_keeps_another_persons_fact_apart_and_supersedes_a_new_value(org_a):
    mine = say(org_a, "s1", "记住：我的团队负责人是周涛")["added"][0]["id"]
    other = say(org_a, "s2", "记住：我妻子的团队负责人是周涛")
    assert len(other["added"]) == 1 and other["merged"] == [] and other["superseded"] == []
    changed = say(org_a, "s3", "记住：我的团队负责人是何静")
    assert [s["old_id"] for s in changed["superseded"]] == [mine]
    assert MemoryItem.objects.get(pk=mine).status == "superseded"


# ---- the chat model decides; an unusable answer falls back ----------------------------------------------


@pytest.fixture
def stub(alice_client):
    with OpenAIStub() as server:
        response = alice_client.put(
            "/api/v1/llm-config",
            {"base_url": server.base_url, "model": "stub-chat", "api_key": "sk-test-llm-0123456789abcdef"},
            format="json",
        )
        assert response.status_code == 200, response.content
        yield server


def test_the_chat_model_decides_among_the_related_memories(stub, key_a):
    _, client = key_a
    old = add(client, "The user lives in Vancouver").json()
    assert stub.requests == []  # nothing similar yet: the model is not asked
    stub.chat_replies.append(json.dumps({"decision": "update", "id": old["id"], "reason": "搬家了"}))
    body = add(client, "The user settled in Calgary").json()
    assert body["supersedes"] == old["id"]
    assert body["decision"]["kind"] == "update" and "搬家了" in body["decision"]["reason"]
    asked = json.loads(stub.requests[-1]["body"]["messages"][-1]["content"])
    assert asked["new"] == "The user settled in Calgary" and [e["id"] for e in asked["existing"]] == [
        old["id"]
    ]
    stub.chat_replies.append(json.dumps({"decision": "distinct", "id": None, "reason": "不同的事实"}))
    body = add(client, "The user lived in Calgary for a while").json()
    assert body["decision"]["kind"] == "distinct" and "supersedes" not in body
    assert MemoryItem.objects.filter(status="active").count() == 2


def test_an_invented_id_or_a_failed_call_falls_back_to_the_offline_decision(stub, key_a):
    _, client = key_a
    first = add(client, "The user is allergic to shrimp").json()
    # An id that is not among the candidates, twice (the answer and the repair): offline decides.
    invented = json.dumps({"decision": "duplicate", "id": first["id"] + 1000, "reason": "?"})
    stub.chat_replies.extend([invented, invented])
    body = add(client, "The user has a shrimp allergy").json()
    assert body["duplicate_of"] == first["id"] and body["decision"]["kind"] == "duplicate"
    assert len(stub.requests) == 2
    # The model fails: the offline decision keeps another person's allergy apart.
    stub.chat_replies.append(Fail(500))
    response = add(client, "The user's son is allergic to shrimp")
    assert response.status_code == 201 and response.json()["decision"]["kind"] == "distinct"
    assert MemoryItem.objects.count() == 2


def test_a_batch_finds_the_same_nearest_memories_as_a_single_add(alice_actor, bob, project, org_a):
    """The batch compares a subject's stored vectors in memory (one query per subject); its rows are the
    exact nearest readable ones, and those services.nearest_active finds per item agree with them (the
    database's index may only miss a row, never find a nearer one), and past
    STORED_IN_MEMORY the batch asks the database per item and decides the same."""
    from pgvector.django import CosineDistance

    from memory import batch, services
    from memory.drafts import MemoryDraft
    from projects.access import actor_for_account, memory_read_q

    texts = [
        "The team deploys on Fridays",
        "The team's database is PostgreSQL 15",
        "The team uses Slack for chat",
        "The staging server is in Frankfurt",
        "团队每周二开例会",
        "The team prefers squash merges",
        "Code review needs two approvals",
    ]
    for text in texts:
        services.memory_create(
            actor=alice_actor,
            org=org_a,
            draft=MemoryDraft(content=text, scope="project", project=project),
            dedup="none",
        )
    services.memory_create(  # only its author may read it: never a candidate for bob
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(
            content="The team uses Slack for all chat",
            scope="project",
            project=project,
            visibility="owner_only",
        ),
        dedup="none",
    )
    bob_actor = actor_for_account(bob, org_a)
    incoming = ["The team chats on Slack", "团队每周三开例会", "The staging server moved to Paris", "Bees"]
    fresh = [(i, MemoryDraft(content=t, scope="project", project=project)) for i, t in enumerate(incoming)]
    vectors = batch._batch_embed(org_a, fresh)
    for actor in (alice_actor, bob_actor):
        found = batch._stored_nearest(actor, org_a, fresh, vectors, memory_read_q(actor))
        for index, draft in fresh:
            one = services.nearest_active(
                actor=actor,
                base=draft.subject(org_a),
                embedding=vectors[index][0],
                model=vectors[index][1],
                limit=services.NEAREST_K,
            )
            # The database may answer through its approximate vector index: it may miss one of the nearest
            # rows and give a farther one instead. The batch compares exactly: its rows are the exact
            # nearest ones (ordered by distance + 0, which no index serves), and a row the database finds
            # is either one of them, with the same similarity, or no nearer than the batch's last.
            mine = {item.pk: sim for item, sim in found[index]}
            assert len(mine) == services.NEAREST_K  # each actor may read at least five of them
            distance = CosineDistance("embedding", vectors[index][0])
            exact = (
                services.write_candidates(memory_read_q(actor), draft.subject(org_a), vectors[index][1])
                .annotate(exact=distance + 0)
                .order_by("exact")[: services.NEAREST_K]
            )
            assert set(mine) == {row.pk for row in exact}
            for item, sim in one:
                if item.pk in mine:
                    assert mine[item.pk] == pytest.approx(sim, abs=1e-3)
                else:
                    assert sim <= min(mine.values()) + 1e-3
            sims = [sim for _, sim in found[index]]
            assert sims == sorted(sims, reverse=True)
    private = MemoryItem.objects.get(content="The team uses Slack for all chat")
    bobs = batch._stored_nearest(bob_actor, org_a, fresh, vectors, memory_read_q(bob_actor))
    assert private.pk not in {item.pk for rows in bobs.values() for item, _ in rows}
    assert private.pk in {
        item.pk
        for rows in batch._stored_nearest(
            alice_actor, org_a, fresh, vectors, memory_read_q(alice_actor)
        ).values()
        for item, _ in rows
    }


@pytest.mark.parametrize("in_memory", [True, False], ids=["in-memory", "per-item"])
def test_a_batch_decides_the_same_whether_stored_vectors_are_compared_in_memory_or_per_item(
    key_a, monkeypatch, in_memory
):
    from memory import batch

    if not in_memory:
        monkeypatch.setattr(batch, "STORED_IN_MEMORY", 1)
    _, client = key_a
    for text in ("用户每天晚上遛狗", "The user lives in Vancouver", "The user plays chess on Sundays"):
        add(client, text)
    memories = [
        {"content": "用户每晚都会去遛狗", "user_id": "u1"},
        {"content": "The user now lives in Calgary", "user_id": "u1"},
        {"content": "The user's son is allergic to shrimp", "user_id": "u1"},
    ]
    results = client.post(f"{URL}/batch", {"memories": memories, "infer": True}, format="json").json()[
        "results"
    ]
    assert [r["status"] for r in results] == ["duplicate", "superseded", "created"]
