"""Idempotency-Key on the creating endpoints (projects.api.idempotency): a retry replays the first answer
and writes nothing; the same key for another request is a 422; a key still in flight is a 409; keys are
per org and per API key; error answers are not kept; keys expire after 24 hours and go with forget."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from checkpoints.models import Checkpoint, Message
from memory.models import MemoryItem, MemoryRevision
from projects.models import IdempotencyKey
from projects.services import api_key_create
from projects.tasks import idempotency_keys_purge

from .conftest import key_client

pytestmark = pytest.mark.django_db

MEMORY = {"content": "The user prefers window seats on long flights", "user_id": "u1"}


def post(client, url, body, key, method="post", **headers):
    return getattr(client, method)(url, body, format="json", HTTP_IDEMPOTENCY_KEY=key, **headers)


def rows(org) -> tuple:
    return (
        MemoryItem.objects.filter(org=org).count(),
        MemoryRevision.objects.filter(org=org).count(),
        Message.objects.filter(org=org).count(),
        Checkpoint.objects.filter(org=org).count(),
    )


def test_it_replays_the_first_answer_and_writes_nothing(key_a, org_a):
    _, client = key_a
    first = post(client, "/api/v1/memories", MEMORY, "k-1")
    assert first.status_code == 201, first.content
    assert "Idempotent-Replayed" not in first
    before = rows(org_a)

    again = post(client, "/api/v1/memories", MEMORY, "k-1")

    assert again.status_code == 201
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert again["ETag"] == first["ETag"]
    assert rows(org_a) == before
    assert MemoryItem.objects.filter(org=org_a).count() == 1


def test_the_same_key_with_another_body_is_a_422(key_a, org_a):
    _, client = key_a
    assert post(client, "/api/v1/memories", MEMORY, "k-2").status_code == 201
    before = rows(org_a)

    other = post(client, "/api/v1/memories", {**MEMORY, "content": "The user drinks green tea daily"}, "k-2")

    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert "Idempotency-Key" in other.json()["error"]["message"]
    assert rows(org_a) == before
    # Another path with the same body is another request too.
    assert post(client, "/api/v1/agents/a1/memories", MEMORY, "k-2").status_code == 422


def test_a_key_still_in_flight_is_a_409(key_a, org_a):
    key, client = key_a
    IdempotencyKey.objects.create(org=org_a, principal=f"key:{key.pk}", key="k-3", fingerprint="x" * 64)

    response = post(client, "/api/v1/memories", MEMORY, "k-3")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_in_flight"
    assert rows(org_a) == (0, 0, 0, 0)


def test_an_abandoned_claim_is_taken_over(key_a, org_a):
    key, client = key_a
    IdempotencyKey.objects.create(
        org=org_a,
        principal=f"key:{key.pk}",
        key="k-4",
        fingerprint="x" * 64,
        created_at=timezone.now() - timedelta(minutes=11),
    )
    assert post(client, "/api/v1/memories", MEMORY, "k-4").status_code == 201
    assert MemoryItem.objects.filter(org=org_a).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_with_one_key_write_once(org_a):
    secret = api_key_create(org=org_a, name="agent")[1]
    results: list = [None] * 8
    barrier = threading.Barrier(len(results))

    def run(i):
        try:
            barrier.wait(timeout=30)
            results[i] = post(key_client(secret), "/api/v1/memories", MEMORY, "k-race")
        except Exception as exc:  # reported below, not lost in the thread
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(results))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    statuses = [getattr(r, "status_code", r) for r in results]
    # Without the key the others would be 200 duplicates; with it each is the first answer or a 409.
    assert set(statuses) <= {201, 409}, statuses
    created = [r for r in results if r.status_code == 201]
    assert created and len({r.json()["id"] for r in created}) == 1
    assert MemoryItem.objects.filter(org=org_a).count() == 1
    assert MemoryRevision.objects.filter(org=org_a).count() == 1


def test_keys_are_per_org_and_per_api_key(key_a, key_b, org_a, org_b):
    _, client_a = key_a
    _, client_b = key_b
    first = post(client_a, "/api/v1/memories", MEMORY, "shared")
    in_b = post(client_b, "/api/v1/memories", MEMORY, "shared")

    assert first.status_code == in_b.status_code == 201
    assert "Idempotent-Replayed" not in in_b
    assert in_b.json()["id"] != first.json()["id"]
    assert MemoryItem.objects.filter(org=org_b).count() == 1

    other_key = key_client(api_key_create(org=org_a, name="second")[1])
    second = post(other_key, "/api/v1/memories", {**MEMORY, "user_id": "u9"}, "shared")
    assert second.status_code == 201 and "Idempotent-Replayed" not in second
    assert MemoryItem.objects.filter(org=org_a).count() == 2


def test_a_signed_in_account_has_its_own_keys(alice_client, alice, org_a):
    body = {"content": "Alice keeps her notes in Markdown files"}
    first = post(alice_client, "/api/v1/memories", body, "mine")
    again = post(alice_client, "/api/v1/memories", body, "mine")
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and again.content == first.content
    assert IdempotencyKey.objects.get(org=org_a).principal == f"account:{alice.pk}"


def test_error_answers_are_not_kept(key_a, org_a):
    _, client = key_a
    refused = post(client, "/api/v1/memories", {"content": "ok", "user_id": "u1"}, "k-5")
    assert refused.status_code == 422
    assert not IdempotencyKey.objects.filter(key="k-5").exists()

    # The same key may be sent again with a good body.
    assert post(client, "/api/v1/memories", MEMORY, "k-5").status_code == 201
    assert MemoryItem.objects.filter(org=org_a).count() == 1


@pytest.mark.parametrize(
    "value", ["x" * 256, "bad\x01key", "tab\tkey", "", "   "], ids=["long", "ctrl", "tab", "empty", "blank"]
)
def test_a_bad_key_is_a_400(key_a, org_a, value):
    _, client = key_a
    response = post(client, "/api/v1/memories", MEMORY, value)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["error"]["message"]
    assert rows(org_a) == (0, 0, 0, 0)


def test_a_key_of_255_characters_is_taken(key_a):
    _, client = key_a
    assert post(client, "/api/v1/memories", MEMORY, "k" * 255).status_code == 201
    assert post(client, "/api/v1/memories", MEMORY, "k" * 255)["Idempotent-Replayed"] == "true"


def test_keys_expire_after_24_hours(key_a, org_a):
    _, client = key_a
    assert post(client, "/api/v1/memories", MEMORY, "k-6").status_code == 201
    IdempotencyKey.objects.filter(key="k-6").update(
        created_at=timezone.now() - timedelta(hours=24, minutes=1)
    )

    other = {**MEMORY, "content": "The user drinks green tea daily"}
    response = post(client, "/api/v1/memories", other, "k-6")  # a fresh key again: no 422

    assert response.status_code == 201 and "Idempotent-Replayed" not in response
    assert MemoryItem.objects.filter(org=org_a).count() == 2


def test_the_purge_task_deletes_expired_keys_only(key_a, org_a):
    _, client = key_a
    post(client, "/api/v1/memories", MEMORY, "old")
    post(client, "/api/v1/memories", {**MEMORY, "user_id": "u2"}, "new")
    IdempotencyKey.objects.filter(key="old").update(created_at=timezone.now() - timedelta(hours=25))

    assert idempotency_keys_purge.apply().get() == 1

    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]


def test_forgetting_a_subject_removes_its_stored_answers(key_a, org_a):
    _, client = key_a
    post(client, "/api/v1/memories", MEMORY, "about-u1")
    post(client, "/api/v1/memories", {**MEMORY, "user_id": "u2"}, "about-u2")
    assert client.delete("/api/v1/users/u1").status_code == 200

    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["about-u2"]
    # The retry writes again (the answer that held u1's memory is gone).
    again = post(client, "/api/v1/memories", MEMORY, "about-u1")
    assert again.status_code == 201 and "Idempotent-Replayed" not in again


def test_a_request_without_the_header_is_unchanged(key_a, org_a):
    _, client = key_a
    first = client.post("/api/v1/memories", MEMORY, format="json")
    second = client.post("/api/v1/memories", MEMORY, format="json")
    assert (first.status_code, second.status_code) == (201, 200)  # the second is a duplicate, as before
    assert not IdempotencyKey.objects.exists()


EXPORT = {
    "format": "engram-subject-export",
    "version": 1,
    "memories": [{"id": 1, "content": "Likes green tea in the morning", "scope": "user", "status": "active"}],
}
MCP_ADD = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "memory_add", "arguments": {"content": "The user cycles to work every day"}},
}

CREATING = {
    "memories": ("post", "/api/v1/memories", MEMORY, {}),
    "agent memories": ("post", "/api/v1/agents/ag1/memories", MEMORY, {}),
    "batch": ("post", "/api/v1/memories/batch", {"memories": [MEMORY], "infer": False}, {}),
    "session messages": (
        "post",
        "/api/v1/sessions/s1/messages",
        {"user_id": "u1", "messages": [{"role": "human", "content": "hello there"}], "extract": False},
        {},
    ),
    "checkpoint": (
        "put",
        "/api/v1/sessions/s1/checkpoints",
        {"user_id": "u1", "agent_state": {"step": 1}},
        {},
    ),
    "import": ("post", "/api/v1/users/u1/import", EXPORT, {}),
    "tool invoke": (
        "post",
        "/api/v1/tools/memory_add/invoke",
        {"arguments": {"content": "The user cycles to work every day"}, "user_id": "u1"},
        {},
    ),
}


@pytest.mark.parametrize("name", list(CREATING))
def test_every_creating_endpoint_honours_the_key(key_a, org_a, name):
    _, client = key_a
    method, url, body, headers = CREATING[name]
    first = post(client, url, body, f"key-{name}", method=method, **headers)
    assert 200 <= first.status_code < 300, first.content
    written = rows(org_a)
    assert written != (0, 0, 0, 0)

    again = post(client, url, body, f"key-{name}", method=method, **headers)

    assert again.status_code == first.status_code
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert rows(org_a) == written
    assert IdempotencyKey.objects.get(key=f"key-{name}").subjects == ["u1"]


def test_checkpoint_decisions_honour_the_key(key_a, org_a):
    _, client = key_a
    saved = client.put(
        "/api/v1/sessions/s2/checkpoints",
        {"user_id": "u1", "pending_tool_calls": [{"id": "c1", "name": "send", "args": {}}]},
        format="json",
    )
    assert saved.status_code == 201, saved.content
    url = f"/api/v1/checkpoints/{saved.json()['id']}/approve"
    first = post(client, url, {}, "approve-1")
    assert first.status_code == 201, first.content
    count = Checkpoint.objects.filter(org=org_a).count()

    again = post(client, url, {}, "approve-1")

    assert again.status_code == 201 and again.content == first.content
    assert Checkpoint.objects.filter(org=org_a).count() == count


def test_the_schema_documents_the_header(alice_client):
    schema = alice_client.get("/api/schema/?format=json").json()
    for path, method in [
        ("/api/v1/memories", "post"),
        ("/api/v1/memories/batch", "post"),
        ("/api/v1/agents/{agent_id}/memories", "post"),
        ("/api/v1/sessions/{session_id}/messages", "post"),
        ("/api/v1/sessions/{session_id}/checkpoints", "put"),
        ("/api/v1/users/{user_id}/import", "post"),
        ("/api/v1/tools/{name}/invoke", "post"),
    ]:
        names = {(p["in"], p["name"]) for p in schema["paths"][path][method].get("parameters", [])}
        assert ("header", "Idempotency-Key") in names, f"{method.upper()} {path}"
    assert not any(
        p["name"] == "Idempotency-Key"
        for p in schema["paths"]["/api/v1/memories"]["get"].get("parameters", [])
    )
