"""The memory API end to end: create, duplicates, batch, list, patch/412, history/restore, delete-all, stats,
seed 004's agent routes, and the visibility x role matrix."""

import pytest

from memory.models import MemoryItem, MemoryRevision
from projects.access import actor_for_account
from projects.models import ProjectRole
from projects.services import org_membership_set, project_member_add

from .conftest import client_for
from .factories import AccountFactory

URL = "/api/v1/memories"


def add(client, **body):
    body.setdefault("content", "The user prefers dark mode in every editor")
    return client.post(URL, body, format="json")


def test_it_creates_a_memory_for_the_account_itself(alice_client, org_a):
    response = add(alice_client, memory_type="preference", tags=["ui"])
    assert response.status_code == 201, response.content
    body = response.json()
    item = MemoryItem.objects.get(pk=body["id"])
    assert item.org == org_a and item.user_id == "alice" and item.scope == "user"
    assert item.embedding is not None and item.embedding_model == "multilingual-e5-small"
    assert item.search_tokens is not None
    assert body["has_embedding"] is True and "embedding" not in body
    assert list(MemoryRevision.objects.filter(item_ref=item.pk).values_list("action", flat=True)) == ["add"]


def test_it_refuses_a_secret_with_422_and_stores_nothing(alice_client, caplog):
    secret = "sk-proj-Abc123Def456Ghi789Jkl012"
    response = add(alice_client, content=f"My OpenAI key is {secret}")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "sensitive_content"
    assert secret not in response.content.decode()
    assert not MemoryItem.objects.exists()
    assert secret not in caplog.text


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"content": "hi"}, "too_short"),
        ({"content": "x" * 2001}, "too_long"),
        ({"content": "The user maybe likes tea", "confidence": 0.5}, "low_confidence"),
    ],
)
def test_it_answers_gate_codes(alice_client, body, code):
    response = alice_client.post(URL, body, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == code
    assert not MemoryItem.objects.exists()


def test_it_rate_limits_automatic_extraction_per_session(alice_client, settings):
    settings.MEMORY_MAX_EXTRACTIONS = 2
    codes = [
        add(alice_client, content=text, source="auto", session_id="s1").status_code
        for text in ("The user keeps two cats", "用户在上海工作", "Prefers answers in Spanish")
    ]
    assert codes == [201, 201, 422]
    assert add(alice_client, content="Works night shifts at the hospital", session_id="s1").status_code == 201
    assert add(alice_client, content="用户对花生过敏", source="auto", session_id="s2").status_code == 201
    assert MemoryItem.objects.filter(session_id="s1", source="auto").count() == 2


def test_it_rejects_bad_input_with_400(alice_client, key_a):
    assert alice_client.post(URL, {"content": "fine text", "colour": "red"}, format="json").status_code == 400
    assert (
        alice_client.post(URL, {"content": "fine text", "memory_type": "x"}, format="json").status_code == 400
    )
    assert (
        alice_client.post(URL, {"content": "fine text", "scope": "session"}, format="json").status_code == 400
    )
    _, client = key_a
    response = client.post(URL, {"content": "a fact without a subject"}, format="json")
    assert response.status_code == 400 and "user_id" in response.json()["error"]["message"]
    assert not MemoryItem.objects.exists()


def test_it_merges_an_identical_add_into_the_existing_item(alice_client):
    first = add(alice_client, tags=["ui"]).json()
    response = add(
        alice_client, content="  the user prefers DARK mode in every editor ", tags=["editor", "ui"]
    )
    assert response.status_code == 200
    body = response.json()
    assert body["duplicate_of"] == first["id"] == body["id"]
    assert MemoryItem.objects.count() == 1
    item = MemoryItem.objects.get()
    assert item.tags == ["ui", "editor"] and item.version == 2
    actions = list(MemoryRevision.objects.filter(item_ref=item.pk).values_list("action", flat=True))
    assert actions == ["add", "merge"]


def test_it_merges_a_near_duplicate_by_similarity(alice_client):
    first = add(alice_client, content="The user prefers dark mode in every editor.").json()
    response = add(alice_client, content="The user prefers dark mode in every editor!", tags=["x"])
    assert response.status_code == 200
    assert response.json()["duplicate_of"] == first["id"]
    assert response.json()["similarity"] >= 0.9
    assert MemoryItem.objects.count() == 1
    # A different number is a different fact, however close the vectors.
    response = add(alice_client, content="The user prefers dark mode in 3 editors.")
    assert response.status_code == 201


def test_it_keeps_agents_memories_apart_for_dedup(key_a):
    _, client = key_a
    a = add(client, user_id="u1", agent_id="sales")
    b = add(client, user_id="u1", agent_id="support")
    assert (a.status_code, b.status_code) == (201, 201)


# ---- batch ------------------------------------------------------------------------------------------


def test_it_writes_a_batch_verbatim_with_per_item_results(key_a, org_a):
    _, client = key_a
    add(client, user_id="u1", content="Already stored fact about u1")
    memories = [
        {
            "content": "User u1 works at a bakery",
            "user_id": "u1",
            "memory_type": "fact",
            "metadata": {"k": 1},
        },
        {"content": "password: hunter2hunter", "user_id": "u1"},
        {"content": "hey", "user_id": "u1"},
        {"content": "User u1 works at a bakery", "user_id": "u1"},
        {"content": "already stored fact about U1", "user_id": "u1", "tags": ["t"]},
        {"content": "no subject given"},
        {"content": "A fact", "user_id": "u1", "unknown": 1},
        {
            "content": "Low confidence but verbatim",
            "user_id": "u2",
            "confidence": 0.1,
            "occurred_at": "2024-05-01T10:00:00Z",
        },
        "just a string",
    ]
    response = client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    results = body["results"]
    assert [r["status"] for r in results] == [
        "created",
        "rejected",
        "rejected",
        "duplicate",
        "duplicate",
        "rejected",
        "rejected",
        "created",
        "rejected",
    ]
    assert results[1]["error"]["code"] == "sensitive_content"
    assert results[6]["error"]["code"] == results[8]["error"]["code"] == "invalid"
    assert "unknown" in results[6]["error"]["message"]
    assert results[2]["error"]["code"] == "too_short"
    assert results[3]["duplicate_of"] == results[0]["id"]
    assert results[5]["error"]["code"] == "invalid"
    assert (body["created"], body["duplicate"], body["rejected"]) == (2, 2, 5)
    assert MemoryItem.objects.filter(org=org_a).count() == 3
    made = MemoryItem.objects.get(pk=results[0]["id"])
    assert made.metadata == {"k": 1} and made.embedding is not None and made.search_tokens is not None
    assert MemoryItem.objects.get(pk=results[7]["id"]).occurred_at.year == 2024
    assert MemoryRevision.objects.filter(item_ref=made.pk, action="add").count() == 1
    assert MemoryItem.objects.get(pk=results[4]["duplicate_of"]).tags == ["t"]


def test_it_applies_similarity_dedup_in_a_batch_when_asked(key_a):
    _, client = key_a
    memories = [
        {"content": "The user prefers dark mode in every editor.", "user_id": "u1"},
        {"content": "The user prefers dark mode in every editor!", "user_id": "u1"},
    ]
    plain = client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json").json()
    assert [r["status"] for r in plain["results"]] == ["created", "created"]
    MemoryItem.objects.all().delete()
    deduped = client.post(
        f"{URL}/batch", {"memories": memories, "infer": False, "dedup": True}, format="json"
    )
    results = deduped.json()["results"]
    assert [r["status"] for r in results] == ["created", "duplicate"]
    assert results[1]["duplicate_of"] == results[0]["id"]
    assert MemoryItem.objects.count() == 1


def test_it_refuses_a_batch_over_1000(key_a):
    _, client = key_a
    memories = [{"content": f"fact {i} about u1", "user_id": "u1"} for i in range(1001)]
    response = client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
    assert response.status_code == 400
    assert not MemoryItem.objects.exists()


# ---- list, get, patch, delete -------------------------------------------------------------------------


def test_it_lists_with_filters_and_cursor_pagination_without_cap(key_a):
    _, client = key_a
    memories = [
        {
            "content": f"Fact {i} about the user",
            "user_id": "u1" if i % 2 else "u2",
            "memory_type": "preference" if i % 3 == 0 else "fact",
            "tags": ["even"] if i % 2 == 0 else [],
            "agent_id": "bot" if i < 5 else "",
        }
        for i in range(30)
    ]
    client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
    seen, url = [], f"{URL}?user_id=u2&page_size=4"
    while url:
        page = client.get(url).json()
        seen += page["results"]
        url = page["next"]
    assert len(seen) == 15 and {m["user_id"] for m in seen} == {"u2"}
    assert len({m["id"] for m in seen}) == 15
    prefs = client.get(f"{URL}?memory_type=preference&page_size=100").json()["results"]
    assert len(prefs) == 10
    assert len(client.get(f"{URL}?tags=even&page_size=100").json()["results"]) == 15
    assert len(client.get(f"{URL}?agent_id=bot&page_size=100").json()["results"]) == 5
    assert client.get(f"{URL}?created_after=2000-01-01T00:00:00Z&page_size=100").json()["results"]
    assert client.get(f"{URL}?created_before=2000-01-01T00:00:00Z").json()["results"] == []
    assert client.get(f"{URL}?status=gone").status_code == 400
    assert client.get(f"{URL}?created_after=yesterday").status_code == 400


def test_it_answers_412_on_a_stale_version_and_writes_nothing(alice_client):
    item = add(alice_client).json()
    url = f"{URL}/{item['id']}"
    ok = alice_client.patch(
        url, {"content": "The user prefers light mode now"}, format="json", HTTP_IF_MATCH='"1"'
    )
    assert ok.status_code == 200 and ok.json()["version"] == 2
    stale = alice_client.patch(
        url, {"content": "Something else entirely"}, format="json", HTTP_IF_MATCH='"1"'
    )
    assert stale.status_code == 412
    assert stale.json()["error"]["details"]["version"] == 2
    stale_body = alice_client.patch(url, {"pinned": True, "version": 1}, format="json")
    assert stale_body.status_code == 412
    row = MemoryItem.objects.get(pk=item["id"])
    assert (row.content, row.pinned, row.version) == ("The user prefers light mode now", False, 2)
    assert MemoryRevision.objects.filter(item_ref=row.pk).count() == 2


def test_it_refuses_a_secret_in_a_patch(alice_client):
    item = add(alice_client).json()
    response = alice_client.patch(
        f"{URL}/{item['id']}", {"content": "token = ghp_abcdefghijklmnopqrstuvwxyz0123"}, format="json"
    )
    assert response.status_code == 422
    assert MemoryItem.objects.get(pk=item["id"]).content == "The user prefers dark mode in every editor"


def test_it_keeps_history_and_restores_a_revision(alice_client):
    item = add(alice_client, content="The user lives in Berlin").json()
    url = f"{URL}/{item['id']}"
    alice_client.patch(url, {"content": "The user lives in Lisbon"}, format="json")
    alice_client.patch(url, {"status": "archived"}, format="json")
    history = alice_client.get(f"{url}/history").json()["results"]
    assert [h["action"] for h in history] == ["add", "update", "archive"]
    assert history[1]["before"]["content"] == "The user lives in Berlin"
    assert history[1]["after"]["content"] == "The user lives in Lisbon"
    restored = alice_client.post(f"{url}/restore", {"revision": 1}, format="json")
    assert restored.status_code == 200
    row = MemoryItem.objects.get(pk=item["id"])
    assert (row.content, row.status, row.version) == ("The user lives in Berlin", "active", 4)
    assert row.embedding is not None
    assert MemoryRevision.objects.filter(item_ref=row.pk).count() == 4
    assert alice_client.post(f"{url}/restore", {"revision": 99}, format="json").status_code == 404


def test_it_hard_deletes_and_keeps_only_the_fact(alice_client):
    item = add(alice_client).json()
    assert alice_client.delete(f"{URL}/{item['id']}").status_code == 204
    assert not MemoryItem.objects.exists()
    revisions = MemoryRevision.objects.filter(item_ref=item["id"])
    assert [r.action for r in revisions] == ["add", "delete"]
    assert all(r.before is None and r.after is None for r in revisions)
    assert alice_client.get(f"{URL}/{item['id']}").status_code == 404


def test_it_deletes_every_memory_of_a_subject_beyond_2000_rows(key_a, org_a):
    _, client = key_a
    rows = [
        MemoryItem(
            org=org_a, user_id="bulk" if i < 2300 else "other", content=f"fact {i}", content_hash=str(i)
        )
        for i in range(2310)
    ]
    MemoryItem.objects.bulk_create(rows)
    assert client.delete(URL).status_code == 400
    response = client.delete(f"{URL}?user_id=bulk")
    assert response.status_code == 200 and response.json() == {"deleted": 2300}
    assert MemoryItem.objects.filter(user_id="bulk").count() == 0
    assert MemoryItem.objects.filter(user_id="other").count() == 10
    assert MemoryRevision.objects.filter(user_id="bulk", action="delete").count() == 2300


def test_it_lets_an_account_delete_only_its_own_subject(alice_client, bob_client, bob):
    add(alice_client)
    assert bob_client.delete(f"{URL}?user_id=alice").status_code == 404
    assert MemoryItem.objects.count() == 1
    assert alice_client.delete(f"{URL}?user_id=alice").json() == {"deleted": 1}


def test_it_counts_stats(key_a):
    _, client = key_a
    memories = [
        {"content": "User one likes tea a lot", "user_id": "u1", "memory_type": "preference"},
        {"content": "User two is a pilot by trade", "user_id": "u2"},
        {"content": "User two flies on Mondays", "user_id": "u2", "source": "user"},
    ]
    client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
    stats = client.get(f"{URL}/stats").json()
    assert stats == {
        "total": 3,
        "by_type": {"preference": 1, "fact": 2},
        "by_source": {"agent": 2, "user": 1},  # an API key's writes default to agent
        "by_status": {"active": 3},
        "user_count": 2,
    }


def test_it_hides_another_orgs_memories(alice_client, charlie_client, key_b):
    item = add(alice_client).json()
    _, client_b = key_b
    for client in (charlie_client, client_b):
        assert client.get(f"{URL}/{item['id']}").status_code == 404
        assert client.patch(f"{URL}/{item['id']}", {"pinned": True}, format="json").status_code == 404
        assert client.delete(f"{URL}/{item['id']}").status_code == 404
        assert client.get(f"{URL}/{item['id']}/history").status_code == 404
        assert client.get(f"{URL}?user_id=alice").json()["results"] == []
        assert client.get(f"{URL}/stats").json()["total"] == 0
    assert MemoryItem.objects.get(pk=item["id"]).pinned is False


# ---- seed 004: agent routes -------------------------------------------------------------------------


def test_it_serves_the_agent_routes(key_a, org_a):
    _, client = key_a
    base = "/api/v1/agents/agent-1/memories"
    made = client.post(
        base,
        {"userId": "user-1", "content": "用户是一家外贸公司的采购经理", "memoryType": "core"},
        format="json",
    )
    assert made.status_code == 201, made.content
    item = MemoryItem.objects.get(pk=made.json()["id"])
    assert (item.source, item.confidence, item.agent_id, item.memory_type) == (
        "admin",
        1.0,
        "agent-1",
        "core",
    )
    client.post(
        base,
        {"user_id": "user-2", "content": "用户喜欢中文回复，偏好简洁风格", "memory_type": "preference"},
        format="json",
    )
    client.post(
        "/api/v1/agents/agent-2/memories",
        {"user_id": "user-1", "content": "另一个智能体的记忆内容"},
        format="json",
    )
    assert len(client.get(base).json()["results"]) == 2
    assert [m["user_id"] for m in client.get(f"{base}?userId=user-1").json()["results"]] == ["user-1"]
    patched = client.patch(f"{base}/{item.pk}", {"pinned": True, "tags": ["vip"]}, format="json")
    assert patched.status_code == 200 and patched.json()["pinned"] is True
    other = MemoryItem.objects.get(agent_id="agent-2")
    assert client.patch(f"{base}/{other.pk}", {"pinned": True}, format="json").status_code == 404
    assert client.delete(f"{base}/999999").status_code == 404
    stats = client.get(f"{base}/stats").json()
    assert stats["total"] == 2 and stats["user_count"] == 2 and stats["by_source"] == {"admin": 2}
    assert client.delete(base).status_code == 400
    assert client.delete(f"{base}?user_id=user-1").json() == {"ok": True, "deleted": 1}
    assert client.delete(f"{base}/{item.pk}").status_code == 404
    remaining = MemoryItem.objects.get(agent_id="agent-1")
    assert client.delete(f"{base}/{remaining.pk}").json() == {"ok": True}
    assert list(MemoryItem.objects.values_list("agent_id", flat=True)) == ["agent-2"]


# ---- visibility x role matrix ------------------------------------------------------------------------


NOTES = {
    "public": "The release train leaves every second Tuesday",
    "members": "数据库迁移必须先在预发环境演练",
    "owner_only": "Erin drafts the pricing page copy",
}


@pytest.fixture
def cast(org_a, org_b, alice, alice_actor, project, bob, charlie):
    """alice owner, adam project admin, erin editor, bob viewer, dora org member outside the project, charlie outsider."""
    people = {"owner": alice, "viewer": bob, "outsider": charlie}
    for name, role in (("adam", ProjectRole.ADMIN), ("erin", ProjectRole.EDITOR), ("dora", None)):
        account = AccountFactory(username=name)
        org_membership_set(org=org_a, account=account, role="member")
        if role:
            project_member_add(actor=alice_actor, project=project, account=account, role=role)
        people[{"adam": "admin", "erin": "editor", "dora": "nonmember"}[name]] = account
    erin_client = client_for(people["editor"])
    items = {}
    for visibility in ("public", "members", "owner_only"):
        response = erin_client.post(
            URL,
            {
                "content": NOTES[visibility],
                "scope": "project",
                "project": "atlas",
                "visibility": visibility,
            },
            format="json",
        )
        assert response.status_code == 201, response.content
        items[visibility] = response.json()["id"]
    response = client_for(alice).post(
        URL,
        {"content": "Alice's members project note", "scope": "project", "project": str(project.pk)},
        format="json",
    )
    items["alice_members"] = response.json()["id"]
    return people, items


READ = {  # role -> items it can read
    "owner": {"public", "members", "alice_members"},
    "admin": {"public", "members", "alice_members"},
    "editor": {"public", "members", "owner_only", "alice_members"},
    "viewer": {"public", "members", "alice_members"},
    "nonmember": {"public"},
    "outsider": set(),
}
CHANGE = {  # role -> items it can change
    "owner": {"public", "members", "alice_members"},
    "admin": {"public", "members", "alice_members"},
    "editor": {"public", "members", "owner_only"},
    "viewer": set(),
    "nonmember": set(),
    "outsider": set(),
}


@pytest.mark.parametrize("role", list(READ))
def test_it_enforces_visibility_and_roles(cast, role):
    people, items = cast
    client = client_for(people[role])
    listed = {m["id"] for m in client.get(f"{URL}?scope=project&page_size=100").json()["results"]}
    visible = {items[name] for name in READ[role]}
    assert listed == visible, f"{role} leaked or lost: {listed ^ visible}"
    for name, pk in items.items():
        got = client.get(f"{URL}/{pk}").status_code
        assert got == (200 if name in READ[role] else 404), (role, name, got)
        patched = client.patch(f"{URL}/{pk}", {"pinned": True}, format="json").status_code
        expected = 200 if name in CHANGE[role] else (403 if name in READ[role] else 404)
        assert patched == expected, (role, name, patched)
        assert MemoryItem.objects.get(pk=pk).pinned is (name in CHANGE[role])
        MemoryItem.objects.filter(pk=pk).update(pinned=False)
    # Only Owner/Admin/Editor create project memories.
    made = client.post(
        URL, {"content": f"A note by the {role}", "scope": "project", "project": "atlas"}, format="json"
    ).status_code
    assert made == {"owner": 201, "admin": 201, "editor": 201, "viewer": 403}.get(role, 404)


@pytest.mark.parametrize("role", list(READ))
def test_it_lets_only_permitted_roles_delete(cast, role):
    people, items = cast
    client = client_for(people[role])
    for name, pk in items.items():
        status = client.delete(f"{URL}/{pk}").status_code
        expected = 204 if name in CHANGE[role] else (403 if name in READ[role] else 404)
        assert status == expected, (role, name, status)
        assert MemoryItem.objects.filter(pk=pk).exists() is (name not in CHANGE[role])


def test_it_keeps_user_memories_to_their_subject(alice_client, bob_client, key_a, bob):
    item = add(alice_client).json()
    assert bob_client.get(f"{URL}/{item['id']}").status_code == 404
    assert add(bob_client, user_id="alice").status_code == 403
    _, key_client = key_a
    assert key_client.get(f"{URL}/{item['id']}").status_code == 200
    assert key_client.patch(f"{URL}/{item['id']}", {"pinned": True}, format="json").status_code == 200
    assert actor_for_account(bob, item and MemoryItem.objects.get().org).user_id == "bob"
