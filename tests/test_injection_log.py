"""Every context call is logged: which memories, for which query, by which caller; listed per user and memory."""

from memory.drafts import MemoryDraft
from memory.models import InjectionLog
from memory.services import memory_create


def _context(client, **body):
    response = client.post("/api/v1/context", {"user_id": "alice", **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_it_logs_each_context_call(alice_client, alice_actor, org_a):
    core = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice is allergic to penicillin", user_id="alice", memory_type="core"),
    ).item
    fact = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice had a dentist appointment in May", user_id="alice"),
    ).item

    body = _context(alice_client, query="dentist appointment", session_id="s-7")

    log = InjectionLog.objects.get(pk=body["injection_id"])
    assert log.org == org_a and log.user_id == "alice" and log.kind == "context"
    assert log.query == "dentist appointment"
    assert log.caller == "account:alice"
    assert log.session_id == "s-7"
    assert log.memory_ids[0] == core.pk
    assert fact.pk in log.memory_ids


def test_it_lists_injections_per_user_and_per_memory(alice_client, alice_actor, org_a, key_a):
    item = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice's team meets on Thursdays", user_id="alice"),
    ).item
    _context(alice_client, query="team meeting day")
    key, client = key_a
    response = client.post(
        "/api/v1/context", {"user_id": "alice", "query": "when does the team meet"}, format="json"
    )
    assert response.status_code == 200
    _context(alice_client, query="unrelated: favourite colour")

    listing = alice_client.get("/api/v1/injections", {"user_id": "alice"})
    assert listing.status_code == 200
    rows = listing.json()["results"]
    assert [r["query"] for r in rows] == [
        "unrelated: favourite colour",
        "when does the team meet",
        "team meeting day",
    ]
    assert rows[1]["caller"] == f"key:{key.prefix}"

    per_memory = alice_client.get(f"/api/v1/memories/{item.pk}/injections")
    assert per_memory.status_code == 200
    queries = {r["query"] for r in per_memory.json()["results"]}
    assert {"when does the team meet", "team meeting day"} <= queries
    assert all(item.pk in r["memory_ids"] for r in per_memory.json()["results"])


def test_it_hides_injections_from_others(alice_client, bob_client, charlie_client, alice_actor, org_a, key_b):
    item = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Alice's locker code is at the front desk", user_id="alice"),
    ).item
    _context(alice_client, query="locker")
    assert InjectionLog.objects.count() == 1

    assert bob_client.get("/api/v1/injections", {"user_id": "alice"}).status_code == 404
    assert charlie_client.get("/api/v1/injections", {"user_id": "alice"}).status_code == 404
    assert bob_client.get(f"/api/v1/memories/{item.pk}/injections").status_code == 404
    assert charlie_client.get(f"/api/v1/memories/{item.pk}/injections").status_code == 404
    _, client = key_b
    assert client.get(f"/api/v1/memories/{item.pk}/injections").status_code == 404
    assert client.get("/api/v1/injections", {"user_id": "alice"}).json()["results"] == []


def test_it_requires_a_user_id_to_list(alice_client):
    response = alice_client.get("/api/v1/injections")
    assert response.status_code == 400
    assert "user_id" in response.json()["error"]["message"]
