"""The Python client (clients/python, package engram_client) against the live test server: the agent's
path (add, search, context), pages, history and restore, sessions with extraction in a real Celery worker,
checkpoints, export and forget, typed errors, and the async client. Retries are shown against a real
loopback HTTP server that answers 429 or 503 first."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from engram_client import (
    AsyncEngram,
    AuthenticationError,
    Engram,
    NotFound,
    PermissionDenied,
    RateLimited,
    RetryPolicy,
    ServerError,
    Unprocessable,
    ValidationError,
)
from engram_client.models import Context, Memory, SearchResponse

from memory.models import MemoryItem
from projects.services import api_key_create

from .factories import OrgFactory
from .test_worker import worker  # noqa: F401  (the real Celery worker fixture)


def run_async(coro):
    """asyncio.run in a thread of its own: a Playwright test earlier in this process leaves an event loop
    running in the main thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
def org(transactional_db):
    return OrgFactory(slug="client-org", name="Client Org")


@pytest.fixture
def secret(org):
    return api_key_create(org=org, name="client")[1]


@pytest.fixture
def client(live_server, secret):
    with Engram(live_server.url, secret) as engram:
        yield engram


def test_it_adds_searches_and_builds_context(client, org):
    added = client.memories.add(
        "Sam prefers answers in bullet points", user_id="sam", memory_type="preference"
    )
    assert isinstance(added, Memory)
    row = MemoryItem.objects.get(pk=added.id)
    assert (row.org_id, row.user_id, row.content) == (org.pk, "sam", "Sam prefers answers in bullet points")

    found = client.memories.search("how should answers be formatted?", user_id="sam")
    assert isinstance(found, SearchResponse)
    assert [r.id for r in found.results] == [added.id]
    assert found.results[0].score > 0

    context = client.context.get(user_id="sam", query="format of answers")
    assert isinstance(context, Context)
    assert added.id in [m.id for m in context.core + context.relevant]
    assert "bullet points" in context.prompt

    again = client.memories.add("Sam prefers answers in bullet points", user_id="sam")
    assert again.duplicate_of == added.id
    assert MemoryItem.objects.filter(org=org, user_id="sam").count() == 1


def test_it_walks_every_page_of_a_list(client, org):
    contents = [f"Sam visited city number {n} in the spring of {2000 + n}" for n in range(7)]
    result = client.memories.batch([{"content": c, "user_id": "sam"} for c in contents], infer=False)
    assert result.created == 7
    requests = []
    client._http.event_hooks["request"].append(lambda request: requests.append(str(request.url)))

    listed = list(client.memories.list(user_id="sam", page_size=3))

    assert sorted(m.content for m in listed) == sorted(contents)
    assert len({m.id for m in listed}) == 7
    assert len(requests) == 3  # 3 + 3 + 1
    assert all("cursor=" in url for url in requests[1:])


def test_it_reads_history_and_restores(client):
    memory = client.memories.add("Sam drinks green tea every morning", user_id="sam")
    changed = client.memories.update(memory.id, content="Sam drinks black coffee every morning")
    assert changed.version == memory.version + 1

    history = client.memories.history(memory.id)
    assert [r.action for r in history] == ["add", "update"]

    restored = client.memories.restore(memory.id, history[0].number, reason="undo")
    assert restored.content == "Sam drinks green tea every morning"
    assert MemoryItem.objects.get(pk=memory.id).content == "Sam drinks green tea every morning"
    assert [r.action for r in client.memories.history(memory.id)] == ["add", "update", "restore"]


@pytest.mark.worker
def test_it_splits_a_merge_back_into_its_own_memory(client):
    first = client.memories.add("Sam keeps two hens in the garden", user_id="sam", tags=["home"])
    again = client.memories.add(
        "Sam keeps two hens in the garden", user_id="sam", memory_type="fact", metadata={"seen": "call"}
    )
    assert again.duplicate_of == first.id
    merge = next(r for r in client.memories.history(first.id) if r.action == "merge")
    assert merge.incoming["metadata"] == {"seen": "call"} and merge.split_into is None
    split = client.memories.split(first.id, merge.number)
    assert (split.split_from, split.content, split.metadata) == (
        first.id,
        "Sam keeps two hens in the garden",
        {"seen": "call"},
    )
    assert client.memories.get(first.id).confirmations == 0


def test_it_appends_messages_and_waits_for_the_extraction(client, worker):  # noqa: F811
    appended = client.sessions.append(
        "chat-1",
        [
            {"role": "human", "content": "请记住，我住在北京的朝阳区", "message_id": "m1"},
            {"role": "ai", "content": "好的，我记住了。", "message_id": "m2"},
        ],
        user_id="mei",
    )
    assert appended.session.session_id == "chat-1"
    assert appended.extraction_job is not None

    job = client.jobs.wait(appended.extraction_job.id, timeout=90, interval=0.2)

    assert (job.status, job.method) == ("done", "rules"), job.error
    [added] = job.result["added"]
    memory = client.memories.get(added["id"])
    assert memory.content == "用户住在北京的朝阳区"  # a statement about the user, not the raw turn
    session = client.sessions.get("chat-1")
    assert [m.message_id for m in session.messages] == ["m1", "m2"]


def test_it_saves_and_resumes_checkpoints(client):
    with pytest.raises(NotFound):
        client.checkpoints.latest("run-1")
    client.sessions.append(
        "run-1", [{"role": "human", "content": "plan my trip"}], user_id="sam", extract=False
    )
    first = client.checkpoints.save("run-1", user_id="sam", agent_state={"step": 1})
    second = client.checkpoints.save(
        "run-1",
        user_id="sam",
        agent_state={"step": 2},
        parent=first.id,
        pending_tool_calls=[{"id": "call-1", "name": "book", "arguments": {}}],
    )
    latest = client.checkpoints.latest("run-1")
    assert (latest.id, latest.agent_state, latest.parent) == (second.id, {"step": 2}, first.id)
    approved = client.checkpoints.approve(second.id, comment="ok")
    assert approved.pending_tool_calls == []
    assert [c.id for c in client.checkpoints.list("run-1")] == [approved.id, second.id, first.id]


def test_it_exports_and_forgets_a_subject(client, org):
    memory = client.memories.add("Sam keeps bees on the roof", user_id="sam")
    exported = client.users.export("sam")
    assert memory.id in [m["id"] for m in exported["memories"]]

    forgotten = client.users.forget("sam")

    assert forgotten.user_id == "sam" and forgotten.deleted["MemoryItem"] == 1
    assert not MemoryItem.objects.filter(org=org, user_id="sam").exists()
    report = client.users.import_("sam", exported)
    assert report["taken"]["memories"] == 1
    assert MemoryItem.objects.get(org=org, user_id="sam").content == "Sam keeps bees on the roof"


def test_it_raises_typed_errors_with_the_api_code(live_server, client, org):
    with pytest.raises(NotFound) as missing:
        client.memories.get(987654321)
    assert (missing.value.status, missing.value.code) == (404, "not_found")

    with pytest.raises(ValidationError) as invalid:
        client.memories.add("Sam likes tea", user_id="sam", memory_type="bogus")
    assert (invalid.value.status, invalid.value.code) == (400, "invalid")
    assert "memory_type" in invalid.value.message and "memory_type" in invalid.value.details

    with pytest.raises(Unprocessable) as refused:
        client.memories.add("my password is hunter2-Secret!", user_id="sam")
    assert (refused.value.status, refused.value.code) == (422, "sensitive_content")

    with Engram(live_server.url, "eng_nope.not-a-key", max_retries=0) as stranger:
        with pytest.raises(AuthenticationError) as unauthenticated:
            stranger.memories.get(1)
    assert (unauthenticated.value.status, unauthenticated.value.code) == (401, "not_authenticated")

    read_only = api_key_create(org=org, name="reader", read_only=True)[1]
    with Engram(live_server.url, read_only) as reader:
        with pytest.raises(PermissionDenied) as denied:
            reader.memories.add("Sam likes tea", user_id="sam")
    assert (denied.value.status, denied.value.code) == (403, "permission_denied")
    assert not MemoryItem.objects.filter(org=org).exists()


def test_the_async_client_does_the_same(live_server, secret, org):
    async def main():
        async with AsyncEngram(live_server.url, secret) as client:
            added = await client.memories.add("Sam plays the cello on Sundays", user_id="sam")
            await client.memories.add("Sam is allergic to peanuts", user_id="sam")
            found = await client.memories.search("what instrument does Sam play?", user_id="sam", top_k=1)
            listed = [m.id async for m in client.memories.list(user_id="sam", page_size=1)]
            with pytest.raises(NotFound):
                await client.sessions.get("no-such-session")
            return added, found, listed

    added, found, listed = run_async(main())
    assert [r.id for r in found.results] == [added.id]
    assert sorted(listed) == sorted(MemoryItem.objects.filter(org=org).values_list("id", flat=True))
    assert len(listed) == 2


# ---- retries against a real loopback server -------------------------------------------------------


class Flaky(ThreadingHTTPServer):
    """Answers the first `failures` requests with `status` (and Retry-After when given), then 200."""

    def __init__(self, status: int, failures: int, retry_after: str | None):
        self.status, self.failures, self.retry_after = status, failures, retry_after
        self.seen: list[tuple[float, str, str | None]] = []
        self.posted: list[tuple[str | None, bytes]] = []  # (Idempotency-Key, body) of each POST
        super().__init__(("127.0.0.1", 0), FlakyHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class FlakyHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        server: Flaky = self.server  # type: ignore[assignment]
        server.seen.append((time.monotonic(), self.path, self.headers.get("Authorization")))
        if len(server.seen) <= server.failures:
            body = {"error": {"code": "throttled", "message": "Request was throttled."}}
            self.send_response(server.status)
            if server.retry_after is not None:
                self.send_header("Retry-After", server.retry_after)
        else:
            body = {"id": 7, "content": "Sam likes tea", "created_at": "2026-01-02T03:04:05Z"}
            self.send_response(200)
        data = json.dumps(body).encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posted.append((self.headers.get("Idempotency-Key"), body))
        self.do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky():
    servers = []

    def make(status: int = 429, failures: int = 1, retry_after: str | None = "1"):
        server = Flaky(status, failures, retry_after)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


def test_it_retries_a_429_after_the_servers_retry_after(flaky):
    server = flaky(429, failures=1, retry_after="1")
    with Engram(server.url, "ek_test") as client:
        memory = client.memories.get(7)
    assert memory.content == "Sam likes tea" and memory.created_at.year == 2026
    (first, path, auth), (second, _, _) = server.seen
    assert path == "/api/v1/memories/7" and auth == "Bearer ek_test"
    assert second - first >= 0.95  # waited the second the server asked for


def test_it_backs_off_on_503_and_gives_up_after_its_retries(flaky):
    server = flaky(503, failures=2, retry_after=None)
    with Engram(server.url, "k", retry=RetryPolicy(max_retries=2, backoff=0.05)) as client:
        assert client.memories.get(7).id == 7
    assert len(server.seen) == 3

    server = flaky(503, failures=5, retry_after=None)
    with Engram(server.url, "k", retry=RetryPolicy(max_retries=1, backoff=0.05)) as client:
        with pytest.raises(ServerError) as failed:
            client.memories.get(7)
    assert failed.value.status == 503 and len(server.seen) == 2


def test_it_does_not_wait_longer_than_its_bound(flaky):
    server = flaky(429, failures=1, retry_after="120")
    started = time.monotonic()
    with Engram(server.url, "k", retry=RetryPolicy(max_retry_after=10)) as client:
        with pytest.raises(RateLimited) as limited:
            client.memories.get(7)
    assert time.monotonic() - started < 5
    assert (limited.value.code, limited.value.retry_after, len(server.seen)) == ("throttled", 120.0, 1)

    server = flaky(429, failures=1, retry_after="0")
    with Engram(server.url, "k", max_retries=0) as client:
        with pytest.raises(RateLimited):
            client.memories.get(7)


def test_a_retried_create_sends_the_same_idempotency_key_and_body(flaky):
    server = flaky(503, failures=1, retry_after="0")
    with Engram(server.url, "k") as client:
        client.memories.add("Sam likes tea", user_id="sam", idempotency_key="add-sam-tea-1")
        client.memories.add("Sam likes tea", user_id="sam")
    first, retried, plain = server.posted
    assert first == retried and first[0] == "add-sam-tea-1"
    assert json.loads(first[1]) == {"content": "Sam likes tea", "user_id": "sam"}  # None arguments not sent
    assert plain[0] is None


def test_the_async_client_retries_too(flaky):
    server = flaky(429, failures=2, retry_after="0.2")

    async def main():
        async with AsyncEngram(server.url, "k") as client:
            return await client.memories.get(7)

    assert run_async(main()).id == 7
    assert len(server.seen) == 3
