"""The context call: profile, core, relevant, summary, recent messages, and the prompt section."""

import re

import pytest

from checkpoints.models import Message, Session
from memory.models import InjectionLog
from profiles.models import ProjectProfile, UserProfile

from .factories import MemoryItemFactory


@pytest.fixture
def alice_world(org_a, project):
    UserProfile.objects.create(
        org=org_a, user_id="alice", profession="data engineer", language_preference="en"
    )
    ProjectProfile.objects.create(
        org=org_a, project=project, project_goal="Ship Atlas 2.0", tech_stack=["Django"]
    )
    session = Session.objects.create(
        org=org_a, session_id="s-1", user_id="alice", project=project, summary="We planned the Q3 migration."
    )
    for i, (role, text) in enumerate(
        [
            ("human", "Can you check the migration plan?"),
            ("ai", "Yes, step 2 needs a backup first."),
            ("human", "ok"),
        ]
    ):
        Message.objects.create(
            org=org_a, session=session, user_id="alice", role=role, content=text, message_id=str(i)
        )
    return {
        "core": MemoryItemFactory(
            embedded=True,
            org=org_a,
            content="Alice is the lead data engineer of the Atlas team",
            memory_type="core",
        ),
        "pinned": MemoryItemFactory(
            embedded=True,
            org=org_a,
            content="Alice wants answers as short bullet lists",
            memory_type="preference",
            pinned=True,
        ),
        "relevant": MemoryItemFactory(
            embedded=True, org=org_a, content="The Q3 migration moves the warehouse to PostgreSQL 16"
        ),
        "other": MemoryItemFactory(embedded=True, org=org_a, content="Alice's favourite fruit is mango"),
        "project": MemoryItemFactory(
            embedded=True,
            org=org_a,
            content="Atlas migrations run on Sunday nights",
            scope="project",
            project=project,
            user_id="",
        ),
    }


def test_it_returns_every_section_in_order(alice_client, alice_world):
    response = alice_client.post(
        "/api/v1/context",
        {
            "user_id": "alice",
            "project": "atlas",
            "session_id": "s-1",
            "query": "what does the Q3 migration do",
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert list(body)[:5] == ["profile", "core", "relevant", "summary", "recent_messages"]
    assert body["profile"]["user"]["profession"] == "data engineer"
    assert body["profile"]["project"]["project_goal"] == "Ship Atlas 2.0"
    assert {m["id"] for m in body["core"]} == {alice_world["core"].pk, alice_world["pinned"].pk}
    relevant = [m["id"] for m in body["relevant"]]
    assert relevant[0] == alice_world["relevant"].pk
    assert not {alice_world["core"].pk, alice_world["pinned"].pk} & set(relevant)
    assert body["summary"] == "We planned the Q3 migration."
    assert [m["content"] for m in body["recent_messages"]] == [
        "Can you check the migration plan?",
        "Yes, step 2 needs a backup first.",
        "ok",
    ]
    prompt = body["prompt"]
    heads = [
        "## User profile",
        "## Core memories",
        "## Relevant memories",
        "## Conversation summary",
        "## Recent messages",
    ]
    positions = [prompt.index(h) for h in heads]
    assert positions == sorted(positions)
    assert "- Profession: data engineer" in prompt
    assert "Alice is the lead data engineer of the Atlas team" in prompt
    assert "- User: Can you check the migration plan?" in prompt


def test_it_injects_core_memories_without_a_query(alice_client, alice_world):
    response = alice_client.post("/api/v1/context", {"user_id": "alice"}, format="json")
    body = response.json()
    assert {m["id"] for m in body["core"]} == {alice_world["core"].pk, alice_world["pinned"].pk}
    assert body["relevant"] == []
    assert body["summary"] == "" and body["recent_messages"] == []
    assert "## Core memories" in body["prompt"] and "## Relevant memories" not in body["prompt"]


def test_it_writes_chinese_headings_for_a_chinese_user(alice_client, org_a):
    UserProfile.objects.create(org=org_a, user_id="alice", profession="采购经理", language_preference="zh-CN")
    MemoryItemFactory(embedded=True, org=org_a, content="用户是外贸公司的采购经理", memory_type="core")
    MemoryItemFactory(embedded=True, org=org_a, content="用户常用的 ERP 系统是金蝶")
    response = alice_client.post(
        "/api/v1/context", {"user_id": "alice", "query": "用户用什么 ERP"}, format="json"
    )
    body = response.json()
    assert body["language"] == "zh"
    prompt = body["prompt"]
    assert prompt.startswith("## 用户画像\n- 职业：采购经理")
    assert "## 核心记忆\n- [核心] 用户是外贸公司的采购经理" in prompt
    assert "## 相关记忆\n- [事实] 用户常用的 ERP 系统是金蝶" in prompt
    assert not re.search(r"\[[a-z]+\]", prompt)  # no English type tags in a Chinese prompt


def test_it_picks_the_language_from_the_memories_without_a_preference(alice_client, org_a):
    MemoryItemFactory(embedded=True, org=org_a, content="用户喜欢简洁的中文回复", memory_type="core")
    body = alice_client.post(
        "/api/v1/context", {"user_id": "alice", "query": "回复风格"}, format="json"
    ).json()
    assert body["language"] == "zh" and "## 核心记忆" in body["prompt"]


def test_it_writes_english_headings_for_english_memories(bob_client, bob, org_a):
    MemoryItemFactory(
        embedded=True,
        org=org_a,
        content="Bob works at a shipping company in Rotterdam",
        memory_type="core",
        user_id="bob",
    )
    body = bob_client.post(
        "/api/v1/context", {"user_id": "bob", "query": "where does Bob work"}, format="json"
    ).json()
    assert body["language"] == "en"
    assert body["prompt"].startswith(
        "## Core memories\n- [core] Bob works at a shipping company in Rotterdam"
    )


def test_it_injects_skill_memories_only_for_enabled_skills(alice_client, org_a):
    label = MemoryItemFactory(
        embedded=True,
        org=org_a,
        content="Label printing: always use the 4x6 template",
        memory_type="skill",
        skill="label-master",
        pinned=True,
    )
    product = MemoryItemFactory(
        embedded=True,
        org=org_a,
        content="Product export: the 4x6 CSV layout is preferred",
        memory_type="skill",
        skill="product-data",
    )

    def context(skills):
        body = {"user_id": "alice", "query": "4x6 template layout", "skills": skills}
        data = alice_client.post("/api/v1/context", body, format="json").json()
        return {m["id"] for m in data["core"]} | {m["id"] for m in data["relevant"]}

    assert context([]) == set()
    assert context(["label-master"]) == {label.pk}
    assert context(["label-master", "product-data"]) == {label.pk, product.pk}


def test_it_keeps_the_relevant_layer_inside_the_budget(alice_client, org_a):
    from core.text import estimate_tokens

    MemoryItemFactory(
        embedded=True,
        org=org_a,
        content="Core: the user is a marine biologist studying coral reefs",
        memory_type="core",
    )
    for i in range(5):
        MemoryItemFactory(
            embedded=True,
            org=org_a,
            content=f"Reef survey {i}: " + "coral bleaching was observed at the northern transect. " * 5,
        )
    body = alice_client.post(
        "/api/v1/context",
        {"user_id": "alice", "query": "coral bleaching survey", "max_tokens": 150},
        format="json",
    ).json()
    used = sum(estimate_tokens(m["content"]) for m in body["core"] + body["relevant"])
    assert body["relevant"], body
    assert used <= 150


def test_it_404s_another_subject_and_a_foreign_org(bob_client, charlie_client, alice_world):
    for client in (bob_client, charlie_client):
        response = client.post("/api/v1/context", {"user_id": "alice", "query": "migration"}, format="json")
        assert response.status_code == 404
    assert InjectionLog.objects.count() == 0


def test_it_rejects_bad_input(alice_client):
    for body in ({"query": "x"}, {"user_id": "alice", "top_k": "many"}, {"user_id": "alice", "nope": 1}):
        response = alice_client.post("/api/v1/context", body, format="json")
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid"
    assert InjectionLog.objects.count() == 0
