"""Mem0's own client (mem0ai's MemoryClient and AsyncMemoryClient) against the live test server, changing
only `host`: construction, add (infer and not), get_all with filters and paging, search, get, update,
history, delete, delete_all, entities, batch update and delete; org isolation; errors as Mem0's
exceptions. The client's telemetry is off and its config directory a temporary one."""

from __future__ import annotations

import asyncio
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-"))

import pytest  # noqa: E402
from mem0 import AsyncMemoryClient, MemoryClient  # noqa: E402
from mem0.exceptions import MemoryNotFoundError, ValidationError  # noqa: E402

from memory.models import ExtractionJob, MemoryFeedback, MemoryItem, MemoryRevision, Source  # noqa: E402
from projects.services import api_key_create  # noqa: E402

from .factories import OrgFactory  # noqa: E402


def run_async(coro):
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
def org(transactional_db):
    return OrgFactory(slug="mem0-org", name="Mem0 Org")


@pytest.fixture
def secret(org):
    return api_key_create(org=org, name="mem0")[1]


@pytest.fixture
def client(live_server, secret):
    return MemoryClient(api_key=secret, host=live_server.url)


def stored(client, text, user_id="alex", **kwargs):
    """Add one memory as said (infer false) and return its id."""
    answer = client.add(text, user_id=user_id, infer=False, **kwargs)
    assert answer["status"] == "SUCCEEDED", answer
    [result] = answer["results"]
    assert result["event"] == "ADD" and result["data"]["memory"] == text
    return result["id"]


def test_it_connects_with_the_key_and_refuses_a_wrong_one(live_server, client, org):
    assert client.org_id == "mem0-org" and client.project_id == "all"
    with pytest.raises(ValueError, match="Invalid API key"):
        MemoryClient(api_key="eng_wrong.nothing", host=live_server.url)


def test_it_adds_a_string_and_a_message_list(client, org):
    memory_id = stored(client, "Alex prefers window seats on long flights", metadata={"source": "chat"})
    row = MemoryItem.objects.get(pk=int(memory_id))
    assert (row.org_id, row.user_id, row.scope, row.source) == (org.pk, "alex", "user", Source.AGENT)
    assert row.metadata == {"source": "chat"}

    answer = client.add(
        [
            {"role": "system", "content": "You are a travel agent."},
            {"role": "user", "content": "Remember that I am allergic to peanuts"},
            {"role": "assistant", "content": "Noted: no peanuts on your flights."},
        ],
        user_id="alex",
        agent_id="travel-bot",
    )
    assert answer["status"] == "SUCCEEDED" and answer["event_id"]
    assert [(r["event"], r["data"]["memory"]) for r in answer["results"]] == [
        ("ADD", "I am allergic to peanuts")
    ]
    row = MemoryItem.objects.get(pk=int(answer["results"][0]["id"]))
    assert (row.user_id, row.agent_id, row.source) == ("alex", "travel-bot", Source.AUTO)
    job = ExtractionJob.objects.get(pk=answer["extraction_job"])
    assert job.status == "done" and [m["role"] for m in job.messages] == ["system", "user", "assistant"]

    # The same statement again is already known: nothing new, reported as NONE.
    again = client.add("Remember that I am allergic to peanuts", user_id="alex", agent_id="travel-bot")
    assert [(r["event"], r["id"]) for r in again["results"]] == [("NONE", str(row.pk))]
    # A run is an Engram session: the memory is session-scoped.
    in_run = client.add("Alex is flying to Oslo on this trip", user_id="alex", run_id="trip-7", infer=False)
    row = MemoryItem.objects.get(pk=int(in_run["results"][0]["id"]))
    assert (row.scope, row.session_id) == ("session", "trip-7")


def test_it_refuses_bad_adds_with_mem0_errors(client, org):
    with pytest.raises(
        ValidationError, match="Valid values: human, ai, system, tool, user, assistant, developer"
    ):
        client.add([{"role": "robot", "content": "beep boop beep"}], user_id="alex")
    with pytest.raises(ValidationError, match="user_id"):
        client.add("Somebody likes tea a lot", agent_id="bot", infer=False)
    # The gate: a secret is refused (422, a Mem0 ValidationError) and nothing is stored.
    with pytest.raises(ValidationError, match="messages\\[1\\]"):
        client.add(
            [
                {"role": "user", "content": "Alex likes green tea"},
                {"role": "user", "content": "my password is hunter2hunter2"},
            ],
            user_id="alex",
            infer=False,
        )
    assert not MemoryItem.objects.filter(org=org).exists()


def test_get_all_filters_with_and_and_pages(client, org):
    ids = [stored(client, f"Alex visited city number {n} in 2025") for n in range(5)]
    stored(client, "Alex's note from the booking agent", agent_id="booker")
    stored(client, "Sam likes trains more than planes", user_id="sam")

    page1 = client.get_all(
        filters={"AND": [{"user_id": "alex"}, {"agent_id": {"ne": "booker"}}]}, page=1, page_size=3
    )
    assert page1["count"] == 5 and page1["previous"] is None and page1["next"]
    page2 = client.get_all(
        filters={"AND": [{"user_id": "alex"}, {"agent_id": {"ne": "booker"}}]}, page=2, page_size=3
    )
    assert page2["count"] == 5 and page2["next"] is None and page2["previous"]
    seen = [m["id"] for m in page1["results"] + page2["results"]]
    assert sorted(seen) == sorted(ids) and len(set(seen)) == 5
    assert {m["user_id"] for m in page1["results"]} == {"alex"}

    either = client.get_all(filters={"OR": [{"user_id": "sam"}, {"agent_id": "booker"}]})
    assert sorted(m["memory"] for m in either["results"]) == [
        "Alex's note from the booking agent",
        "Sam likes trains more than planes",
    ]
    recent = client.get_all(filters={"AND": [{"user_id": "alex"}, {"created_at": {"gte": "2020-01-01"}}]})
    assert recent["count"] == 6
    none_yet = client.get_all(filters={"AND": [{"user_id": "alex"}, {"created_at": {"lt": "2020-01-01"}}]})
    assert none_yet["count"] == 0
    words = client.get_all(filters={"user_id": "alex", "keywords": {"icontains": "CITY NUMBER 3"}})
    assert [m["id"] for m in words["results"]] == [ids[3]]
    with pytest.raises(ValidationError, match="Valid values"):
        client.get_all(filters={"user_id": "alex", "colour": "blue"})
    with pytest.raises(ValidationError, match="Valid values: eq, ne, in, nin"):
        client.get_all(filters={"user_id": {"like": "al%"}})


def test_search_scores_in_0_1_and_never_shows_another_users_memory(client, org):
    tea = stored(client, "Alex drinks green tea every morning")
    stored(client, "Alex works as a pilot for a small airline")
    stored(client, "Sam drinks green tea every morning", user_id="sam")

    found = client.search("what does Alex drink in the morning?", filters={"user_id": "alex"})
    results = found["results"]
    assert results and results[0]["id"] == tea
    assert all(0.0 <= r["score"] <= 1.0 for r in results)
    assert {r["user_id"] for r in results} == {"alex"}
    assert "Sam drinks green tea every morning" not in [r["memory"] for r in results]

    top = client.search("tea", filters={"AND": [{"user_id": "alex"}]}, top_k=1)
    assert [r["id"] for r in top["results"]] == [tea]
    strict = client.search("tea", filters={"user_id": "alex"}, threshold=1.0)
    assert strict["results"] == []
    with pytest.raises(ValidationError, match="user_id or an app_id"):
        client.search("tea", filters={"agent_id": "bot"})


def test_get_update_history_and_delete(client, org):
    memory_id = stored(client, "Alex lives in Berlin")
    got = client.get(memory_id)
    assert (got["id"], got["memory"], got["user_id"]) == (memory_id, "Alex lives in Berlin", "alex")

    updated = client.update(memory_id, text="Alex lives in Munich", metadata={"moved": 2026})
    assert (updated["memory"], updated["metadata"]) == ("Alex lives in Munich", {"moved": 2026})
    assert MemoryItem.objects.get(pk=int(memory_id)).content == "Alex lives in Munich"

    history = client.history(memory_id)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert (history[1]["old_memory"], history[1]["new_memory"]) == (
        "Alex lives in Berlin",
        "Alex lives in Munich",
    )
    assert all(h["memory_id"] == memory_id for h in history)

    assert "deleted" in client.delete(memory_id)["message"]
    assert not MemoryItem.objects.filter(pk=int(memory_id)).exists()
    with pytest.raises(MemoryNotFoundError):
        client.get(memory_id)
    with pytest.raises(MemoryNotFoundError):
        client.get("not-a-number")


def test_delete_all_needs_a_filter_and_deletes_only_that_subject(client, org):
    stored(client, "Alex likes jazz records")
    stored(client, "Alex collects old maps")
    sam = stored(client, "Sam likes rock records", user_id="sam")
    with pytest.raises(ValidationError, match="user_id"):
        client.delete_all()
    assert MemoryItem.objects.filter(org=org).count() == 3
    client.delete_all(user_id="alex")
    assert list(MemoryItem.objects.filter(org=org).values_list("pk", flat=True)) == [int(sam)]
    assert MemoryRevision.objects.filter(org=org, user_id="alex", action="delete").count() == 2


def test_entities_are_listed_and_deleted(client, org):
    stored(client, "Alex likes jazz records", agent_id="dj")
    stored(client, "Sam likes rock records", user_id="sam")
    entities = client.users()["results"]
    assert {(e["type"], e["name"], e["total_memories"]) for e in entities} == {
        ("user", "alex", 1),
        ("user", "sam", 1),
        ("agent", "dj", 1),
    }
    assert client.delete_users(user_id="sam")["message"]
    assert set(MemoryItem.objects.filter(org=org).values_list("user_id", flat=True)) == {"alex"}
    client.delete_users(agent_id="dj")
    assert not MemoryItem.objects.filter(org=org).exists()
    with pytest.raises(MemoryNotFoundError):
        client.delete_users(user_id="nobody")


def test_batch_update_and_delete(client, org):
    a = stored(client, "Alex likes jazz records")
    b = stored(client, "Alex collects old maps")
    answer = client.batch_update(
        [
            {"memory_id": a, "text": "Alex likes jazz and soul records"},
            {"memory_id": b, "metadata": {"hobby": True}},
        ]
    )
    assert "2" in answer["message"]
    assert MemoryItem.objects.get(pk=int(a)).content == "Alex likes jazz and soul records"
    assert MemoryItem.objects.get(pk=int(b)).metadata == {"hobby": True}
    # All or nothing: one unknown id and nothing is deleted.
    with pytest.raises(MemoryNotFoundError):
        client.batch_delete([{"memory_id": a}, {"memory_id": "999999999"}])
    assert MemoryItem.objects.filter(org=org).count() == 2
    client.batch_delete([{"memory_id": a}, {"memory_id": b}])
    assert not MemoryItem.objects.filter(org=org).exists()


def test_another_orgs_key_sees_nothing(live_server, client, org):
    memory_id = stored(client, "Alex drinks green tea every morning")
    other = OrgFactory(slug="other-org", name="Other")
    outsider = MemoryClient(api_key=api_key_create(org=other, name="x")[1], host=live_server.url)
    assert outsider.get_all(filters={"user_id": "alex"})["count"] == 0
    assert outsider.search("green tea", filters={"user_id": "alex"})["results"] == []
    assert outsider.users()["results"] == []
    with pytest.raises(MemoryNotFoundError):
        outsider.get(memory_id)
    with pytest.raises(MemoryNotFoundError):
        outsider.update(memory_id, text="Alex drinks coffee")
    with pytest.raises(MemoryNotFoundError):
        outsider.delete(memory_id)
    with pytest.raises(MemoryNotFoundError):
        outsider.history(memory_id)
    with pytest.raises(MemoryNotFoundError):
        outsider.batch_delete([{"memory_id": memory_id}])
    outsider.delete_all(user_id="alex")
    assert MemoryItem.objects.get(pk=int(memory_id)).content == "Alex drinks green tea every morning"


def test_the_async_client_does_the_same(live_server, secret, org):
    async def scenario():
        async with AsyncMemoryClient(api_key=secret, host=live_server.url) as client:
            added = await client.add("Alex prefers aisle seats on trains", user_id="alex", infer=False)
            memory_id = added["results"][0]["id"]
            listed = await client.get_all(filters={"AND": [{"user_id": "alex"}]}, page=1, page_size=10)
            found = await client.search("aisle seat", filters={"user_id": "alex"})
            await client.update(memory_id, text="Alex prefers window seats on trains")
            history = await client.history(memory_id)
            await client.delete(memory_id)
            return memory_id, listed, found, history

    memory_id, listed, found, history = run_async(scenario())
    assert [m["id"] for m in listed["results"]] == [memory_id]
    assert found["results"][0]["id"] == memory_id and 0 <= found["results"][0]["score"] <= 1
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert not MemoryItem.objects.filter(org=org).exists()
    with pytest.raises(ValueError, match="Invalid API key"):
        AsyncMemoryClient(api_key="eng_wrong.nothing", host=live_server.url)


def test_the_routes_answer_json_and_stay_out_of_the_openapi_schema(live_server, secret):
    import httpx

    with httpx.Client(base_url=live_server.url, headers={"Authorization": f"Token {secret}"}) as http:
        ping = http.get("/v1/ping/")
        assert ping.status_code == 200 and ping.headers["content-type"].startswith("application/json")
        unauthenticated = httpx.get(f"{live_server.url}/v1/ping/")
        assert unauthenticated.status_code == 401 and "detail" in unauthenticated.json()
        bearer = httpx.get(f"{live_server.url}/v1/ping/", headers={"Authorization": f"Bearer {secret}"})
        assert bearer.status_code == 200
        schema = http.get("/api/schema/?format=json").json()
        assert not [p for p in schema["paths"] if p.startswith(("/v1/", "/v2/", "/v3/"))]


def test_feedback_is_stored_and_keeps_the_memory(client, org):
    memory_id = stored(client, "Alex lives in Berlin")
    answer = client.feedback(memory_id, feedback="VERY_NEGATIVE", feedback_reason="moved to Munich")
    assert answer["feedback"] == "VERY_NEGATIVE"
    client.feedback(memory_id, feedback="positive")
    rows = list(
        MemoryFeedback.objects.filter(org=org)
        .order_by("id")
        .values_list("memory_id", "subject", "value", "note")
    )
    assert rows == [
        (int(memory_id), "alex", "wrong", "moved to Munich"),
        (int(memory_id), "alex", "useful", ""),
    ]
    assert MemoryItem.objects.get(pk=int(memory_id)).content == "Alex lives in Berlin"
    with pytest.raises(MemoryNotFoundError):
        client.feedback("999999999", feedback="NEGATIVE")
    with pytest.raises(ValueError, match="feedback must be one of"):
        client.feedback(memory_id, feedback="MEH")  # the client checks the value itself
