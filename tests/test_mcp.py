"""The memory tools over MCP, driven by the official `mcp` SDK's client against the live stack: the web
server's /api/v1/mcp forwarding to the MCP process (workspace.mcp on uvicorn, here in a thread of the test
process). One session per protocol revision served: 2025-11-25 (initialize, Mcp-Session-Id) and 2026-07-28
(server/discover, per-request _meta, Mcp-Method / Mcp-Name headers); every tool listed and called; the
gate's refusal as a tool error; keys, sessions and orgs kept apart."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memory.models import InjectionLog, MemoryItem
from projects.services import api_key_create
from workspace.mcp import mcp_asgi_app

from .factories import OrgFactory
from .test_redaction_fields import LEAKY, assert_no_secret, dump

REVISIONS = ["2025-11-25", "2026-07-28"]
MEM0_TOOLS = {
    "add_memory",
    "search_memories",
    "get_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "delete_all_memories",
    "list_entities",
    "delete_entities",
}
ALIASES = {"memory_add", "memory_search", "add_memories", "search_memory", "list_memories"}
ALL_TOOLS = MEM0_TOOLS | {"get_context"} | ALIASES


def run_async(coro):
    """asyncio.run in a thread of its own (a browser test may leave an event loop in the main thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def mcp_upstream(live_server, settings):
    """The MCP process's app on uvicorn in a thread, and the web server forwarding /api/v1/mcp to it."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(mcp_asgi_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the MCP server did not start"
        time.sleep(0.05)
    settings.ENGRAM_MCP_URL = f"http://127.0.0.1:{port}/api/v1/mcp"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def org(transactional_db):
    return OrgFactory(slug="mcp-org", name="MCP Org")


@pytest.fixture
def secret(org):
    return api_key_create(org=org, name="mcp")[1]


@pytest.fixture
def url(live_server, mcp_upstream):
    return f"{live_server.url}/api/v1/mcp"


def client(url: str, secret: str, revision: str, **headers) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}", **headers}, timeout=60)
    # 2025-11-25: the initialize handshake; 2026-07-28: "auto" probes server/discover and adopts it.
    mode = "legacy" if revision == "2025-11-25" else "auto"
    return Client(streamable_http_client(url, http_client=http), mode=mode)


def data(result) -> dict:
    assert result.is_error is False, result.content
    return result.structured_content


async def _every_tool(url: str, secret: str, revision: str) -> dict:
    seen: dict = {}
    async with client(url, secret, revision, **{"X-Engram-Agent-Id": "bot", "X-Engram-User-Id": "u1"}) as c:
        seen["version"] = c.protocol_version
        seen["server"] = c.server_info.name if c.server_info else None
        seen["tools"] = {t.name for t in (await c.list_tools()).tools}
        added = data(await c.call_tool("add_memory", {"text": "用户对花生过敏", "user_id": "u1"}))
        memory_id = added["results"][0]["id"]
        seen["added"] = added
        seen["search"] = data(await c.call_tool("search_memories", {"query": "对什么过敏", "user_id": "u1"}))
        seen["list"] = data(await c.call_tool("get_memories", {"user_id": "u1"}))
        seen["get"] = data(await c.call_tool("get_memory", {"memory_id": memory_id}))
        seen["update"] = data(
            await c.call_tool("update_memory", {"memory_id": memory_id, "text": "用户对花生和虾过敏"})
        )
        seen["entities"] = data(await c.call_tool("list_entities", {}))
        seen["context"] = data(await c.call_tool("get_context", {"query": "我对什么过敏", "user_id": "u1"}))
        seen["alias_add"] = data(await c.call_tool("memory_add", {"content": "The user is called Lin"}))
        seen["alias_search"] = data(await c.call_tool("memory_search", {"query": "what is the user called"}))
        seen["openmemory_add"] = data(
            await c.call_tool("add_memories", {"text": "Lin drinks oolong tea daily"})
        )
        seen["openmemory_search"] = data(await c.call_tool("search_memory", {"query": "which tea"}))
        seen["openmemory_list"] = data(await c.call_tool("list_memories", {}))
        seen["delete"] = data(await c.call_tool("delete_memory", {"memory_id": memory_id}))
        seen["after_delete"] = await c.call_tool("get_memory", {"memory_id": memory_id})
        seen["delete_all"] = data(await c.call_tool("delete_all_memories", {"user_id": "u1"}))
        data(await c.call_tool("add_memory", {"text": "User u2 likes long walks", "user_id": "u2"}))
        seen["delete_entities"] = data(await c.call_tool("delete_entities", {"user_id": "u2"}))
    return seen


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_tool_over_each_protocol_revision(url, secret, org, revision):
    seen = run_async(_every_tool(url, secret, revision))
    assert seen["version"] == revision
    assert seen["server"] == "engram"
    assert seen["tools"] == ALL_TOOLS
    added = seen["added"]["results"][0]
    assert added["event"] == "ADD" and added["memory"] == "用户对花生过敏" and added["agent_id"] == "bot"
    hits = seen["search"]["results"]
    assert hits[0]["id"] == added["id"] and 0 < hits[0]["score"] <= 1
    assert seen["list"]["count"] == 1 and seen["list"]["results"][0]["user_id"] == "u1"
    assert seen["get"]["memory"] == "用户对花生过敏"
    assert seen["update"]["memory"] == "用户对花生和虾过敏"
    assert {"type": "user", "id": "u1", "total_memories": 1} in seen["entities"]["results"]
    assert {"type": "agent", "id": "bot", "total_memories": 1} in seen["entities"]["results"]
    assert "用户对花生和虾过敏" in seen["context"]["prompt"]
    assert seen["alias_add"]["status"] == "created" and seen["alias_search"]["memories"]
    assert seen["openmemory_add"]["results"][0]["event"] == "ADD"
    assert seen["openmemory_search"]["results"][0]["memory"] == "Lin drinks oolong tea daily"
    assert seen["openmemory_list"]["count"] == 3
    assert seen["delete"]["deleted"] is True
    assert seen["after_delete"].is_error and "not_found" in seen["after_delete"].content[0].text
    assert not MemoryItem.objects.filter(org=org, user_id__in=["u1", "u2"]).exists()
    assert seen["delete_entities"]["results"]["user"]["deleted"]["MemoryItem"] == 1


async def _aliases(url, secret, revision):
    async with client(url, secret, revision, **{"X-Engram-User-Id": "sam", "X-Engram-Session-Id": "s1"}) as c:
        added = data(
            await c.call_tool("memory_add", {"content": "Sam is vegetarian", "memory_type": "preference"})
        )
        found = data(await c.call_tool("memory_search", {"query": "what does Sam eat", "k": 3}))
        more = data(await c.call_tool("add_memories", {"text": "Sam lives in Lyon"}))
        again = data(await c.call_tool("search_memory", {"query": "where does Sam live"}))
        listed = data(await c.call_tool("list_memories", {}))
        unknown = await c.call_tool("memory_add", {"content": "x", "scope": "galaxy"})
    return added, found, more, again, listed, unknown


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_old_names_still_work_with_the_subject_in_headers(url, secret, org, revision):
    added, found, more, again, listed, unknown = run_async(_aliases(url, secret, revision))
    assert added["status"] == "created" and added["memory_type"] == "preference"
    assert [m["id"] for m in found["memories"]][:1] == [added["id"]]
    assert more["results"][0]["memory"] == "Sam lives in Lyon"
    assert again["results"][0]["memory"] == "Sam lives in Lyon"
    assert listed["count"] == 2
    assert unknown.is_error
    assert set(MemoryItem.objects.filter(org=org).values_list("user_id", flat=True)) == {"sam"}


async def _refused(url, secret, revision, language):
    async with client(url, secret, revision, **{"Accept-Language": language}) as c:
        return await c.call_tool(
            "add_memory", {"text": "my password is hunter2-secret, remember it", "user_id": "u1"}
        ), await c.call_tool(
            "add_memory", {"text": "rent goes to IBAN GB33BUKB20201555555555", "user_id": "u1"}
        )


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_gates_refusal_is_a_tool_error_the_model_reads(url, secret, org, revision):
    password, iban = run_async(_refused(url, secret, revision, "en"))
    assert password.is_error and "sensitive_content" in password.content[0].text
    assert "secrets are never stored" in password.content[0].text
    assert iban.is_error and "GB33BUKB" not in iban.content[0].text
    zh, _iban = run_async(_refused(url, secret, revision, "zh-hans"))
    assert zh.is_error and "sensitive_content" in zh.content[0].text
    assert "拒绝" in zh.content[0].text, zh.content[0].text
    assert not MemoryItem.objects.filter(org=org).exists()


async def _a_writes(url, secret, revision):
    async with client(url, secret, revision) as c:
        added = data(
            await c.call_tool("add_memory", {"text": "Alice's launch code name is Heron", "user_id": "alice"})
        )
        return added["results"][0]["id"]


async def _b_looks(url, secret, revision, memory_id):
    out = {}
    async with client(url, secret, revision) as c:
        out["search"] = data(
            await c.call_tool("search_memories", {"query": "launch code name", "user_id": "alice"})
        )
        out["list"] = data(await c.call_tool("get_memories", {"user_id": "alice"}))
        out["entities"] = data(await c.call_tool("list_entities", {}))
        out["context"] = data(await c.call_tool("get_context", {"query": "launch", "user_id": "alice"}))
        for name, args in (
            ("get_memory", {"memory_id": memory_id}),
            ("update_memory", {"memory_id": memory_id, "text": "changed by org B"}),
            ("delete_memory", {"memory_id": memory_id}),
        ):
            out[name] = await c.call_tool(name, args)
        out["delete_all"] = data(await c.call_tool("delete_all_memories", {"user_id": "alice"}))
        out["delete_entities"] = data(await c.call_tool("delete_entities", {"user_id": "alice"}))
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_another_orgs_key_sees_and_changes_nothing(url, secret, org, revision):
    memory_id = run_async(_a_writes(url, secret, revision))
    other = OrgFactory(slug="mcp-other", name="Other")
    b_secret = api_key_create(org=other, name="b")[1]
    seen = run_async(_b_looks(url, b_secret, revision, memory_id))
    assert seen["search"]["results"] == [] and seen["list"]["count"] == 0
    assert seen["entities"]["results"] == []
    assert "Heron" not in json.dumps(seen["context"], ensure_ascii=False)
    for name in ("get_memory", "update_memory", "delete_memory"):
        assert seen[name].is_error and "not_found" in seen[name].content[0].text, name
    assert seen["delete_all"]["deleted"] == 0
    assert MemoryItem.objects.get(pk=memory_id).content == "Alice's launch code name is Heron"
    assert not InjectionLog.objects.filter(org=other, memory_ids__contains=[memory_id]).exists()


def test_a_session_belongs_to_the_key_that_opened_it(url, secret, org):
    """2025-11-25: the Mcp-Session-Id the server issues answers only the key that opened it."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    opened = httpx.post(url, json=init, headers={**accept, "Authorization": f"Bearer {secret}"}, timeout=30)
    assert opened.status_code == 200, opened.text
    assert opened.json()["result"]["protocolVersion"] == "2025-11-25"
    session = opened.headers["Mcp-Session-Id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    session_headers = {**accept, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    other = api_key_create(org=OrgFactory(slug="mcp-thief", name="Thief"), name="t")[1]
    stolen = httpx.post(url, json=listing, headers={**session_headers, "Authorization": f"Bearer {other}"})
    assert stolen.status_code == 404 and "tools" not in stolen.text
    own = httpx.post(url, json=listing, headers={**session_headers, "Authorization": f"Bearer {secret}"})
    assert own.status_code == 200 and {t["name"] for t in own.json()["result"]["tools"]} == ALL_TOOLS
    ended = httpx.delete(url, headers={**session_headers, "Authorization": f"Bearer {secret}"})
    assert ended.status_code == 200
    gone = httpx.post(url, json=listing, headers={**session_headers, "Authorization": f"Bearer {secret}"})
    assert gone.status_code == 404


def test_the_2026_revision_answers_self_contained_requests(url, secret, org):
    """2026-07-28 by hand: server/discover, then a tools/call with no handshake and no session, its envelope
    in params._meta and its method and tool name mirrored in Mcp-Method / Mcp-Name (checked)."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {secret}",
        "Mcp-Protocol-Version": "2026-07-28",
        "X-Engram-User-Id": "u1",
    }
    discover = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}},
        headers={**headers, "Mcp-Method": "server/discover"},
    )
    assert discover.status_code == 200, discover.text
    result = discover.json()["result"]
    assert "2026-07-28" in result["supportedVersions"] and "Mcp-Session-Id" not in discover.headers
    assert result["supportedVersions"] == ["2026-07-28"]  # the handshake revisions answer initialize
    assert "tools" in result["capabilities"] and "search_memories" in result["instructions"]

    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add_memory", "arguments": {"text": "The user prefers tea"}, "_meta": envelope},
    }
    added = httpx.post(
        url, json=call, headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": "add_memory"}
    )
    assert added.status_code == 200, added.text
    assert added.json()["result"]["structuredContent"]["results"][0]["memory"] == "The user prefers tea"
    mismatch = httpx.post(
        url,
        json={**call, "id": 3},
        headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": "delete_memory"},
    )
    assert "error" in mismatch.json() and "result" not in mismatch.json(), mismatch.text
    assert MemoryItem.objects.filter(org=org).count() == 1


def test_keys_are_required_and_checked(url, live_server, secret, org, mcp_upstream):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    for where in (url, f"{mcp_upstream}/api/v1/mcp"):  # through the web server, and the MCP process itself
        anonymous = httpx.post(where, json=body, headers=accept)
        assert anonymous.status_code == 401, where
        assert "error" in anonymous.json()
        wrong = httpx.post(where, json=body, headers={**accept, "Authorization": "Bearer eng_nope.wrong"})
        assert wrong.status_code == 401, where
    assert httpx.get(url, headers={**accept, "Authorization": f"Bearer {secret}"}).status_code == 405

    reader = api_key_create(org=org, name="reader", read_only=True)[1]

    async def read_only():
        async with client(url, reader, "2026-07-28") as c:
            return await c.call_tool("add_memory", {"text": "The user likes jazz", "user_id": "u1"})

    refused = run_async(read_only())
    assert refused.is_error and "read-only" in refused.content[0].text
    assert not MemoryItem.objects.filter(org=org).exists()


def test_without_the_mcp_process_the_endpoint_says_so(live_server, secret, settings):
    settings.ENGRAM_MCP_URL = ""
    answer = httpx.post(
        f"{live_server.url}/api/v1/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {secret}", "Accept-Language": "zh-hans"},
    )
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "mcp_unavailable"
    assert answer.json()["error"]["message"] == "MCP 服务器没有运行。"


async def _leaky_search(url, secret):
    async with client(url, secret, "2026-07-28", **{"X-Engram-User-Id": "u1"}) as c:
        return await c.call_tool("memory_search", {"query": LEAKY})


def test_a_tool_search_query_is_logged_redacted(url, secret, org):
    called = run_async(_leaky_search(url, secret))
    assert called.is_error is False, called.content
    assert_no_secret(dump(InjectionLog, org=org, kind="tool"))


def test_a_session_memory_stays_in_its_session(url, secret, org):
    async def run():
        async with client(url, secret, "2025-11-25") as c:
            return data(
                await c.call_tool(
                    "add_memory", {"text": "In this chat we plan a trip", "user_id": "u1", "run_id": "r1"}
                )
            )

    added = run_async(run())["results"][0]
    assert added["run_id"] == "r1" and added["scope"] == "session"
    assert MemoryItem.objects.get(pk=added["id"]).session_id == "r1"


def test_the_python_clients_mcp_request_speaks_the_2026_revision(url, live_server, secret, org):
    from engram_client import Engram

    with Engram(live_server.url, secret) as engram:
        listed = engram.mcp.request("tools/list")
        called = engram.mcp.request(
            "tools/call",
            {"name": "add_memory", "arguments": {"text": "The user reads on trains"}},
            id=2,
            user_id="u9",
        )
    assert {t["name"] for t in listed["result"]["tools"]} == ALL_TOOLS
    assert called["result"]["isError"] is False
    assert MemoryItem.objects.get(org=org).user_id == "u9"


async def _unstorable(url, secret):
    async with client(url, secret, "2026-07-28") as c:
        return [
            await c.call_tool("add_memory", {"text": "a\u0000b is what the user likes", "user_id": "u1"}),
            await c.call_tool("search_memories", {"query": "x\u0000y", "user_id": "u1"}),
            await c.call_tool("memory_add", {"content": "nul \u0000 inside"}),
        ]


def test_text_postgresql_cannot_store_is_a_readable_refusal(url, secret, org):
    answers = run_async(_unstorable(url, secret))
    assert all(a.is_error for a in answers), answers
    assert "text" in answers[0].content[0].text and "NUL" in answers[0].content[0].text
    assert "query" in answers[1].content[0].text
    assert not MemoryItem.objects.filter(org=org).exists()


def test_hostile_bodies_are_protocol_errors_never_500(url, secret, org):
    """What tests/test_bad_input.py sends every other write route, sent to the SDK's server."""
    headers = {
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    hostile = [
        b'{"content": ',
        b"[1, 2, 3]",
        json.dumps({"jsonrpc": "2.0", "id": {}, "method": 5, "params": []}).encode(),
        b'{"a": ' * 50_000 + b"1" + b"}" * 50_000,
    ]
    for revision in ("2025-11-25", "2026-07-28"):
        for body in hostile:
            answer = httpx.post(
                url, content=body, headers={**headers, "Mcp-Protocol-Version": revision}, timeout=60
            )
            assert 400 <= answer.status_code < 500, (
                revision,
                body[:40],
                answer.status_code,
                answer.text[:300],
            )
    assert not MemoryItem.objects.filter(org=org).exists()


def test_older_handshake_revisions_are_negotiated(url, secret, org):
    accept = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {secret}"}
    for revision in ("2025-06-18", "2025-03-26", "2024-11-05"):
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        opened = httpx.post(url, json=init, headers=accept, timeout=30)
        assert opened.status_code == 200 and opened.json()["result"]["protocolVersion"] == revision, (
            opened.text
        )
        assert opened.headers["Mcp-Session-Id"]


async def _add_while_paused(url, secret, revision):
    async with client(url, secret, revision, **{"X-Engram-User-Id": "ursula"}) as c:
        paused = data(
            await c.call_tool("add_memory", {"text": "Ursula drives a blue car", "user_id": "ursula"})
        )
        alias = data(await c.call_tool("memory_add", {"content": "Ursula runs on Sundays"}))
        found = data(await c.call_tool("search_memories", {"query": "tea", "user_id": "ursula"}))
        return paused, alias, found


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_paused_subject_gets_paused_and_nothing_is_stored(url, secret, org, revision):
    from memory.models import MemoryPause

    MemoryItem.objects.create(org=org, user_id="ursula", content="Ursula prefers green tea in the morning")
    MemoryPause.objects.create(org=org, user_id="ursula")
    paused, alias, found = run_async(_add_while_paused(url, secret, revision))
    assert paused["status"] == "paused" and paused["stored"] == 0 and paused["paused"] == "subject"
    assert (alias.get("result") or alias)["status"] == "paused", alias
    assert list(MemoryItem.objects.filter(org=org).values_list("content", flat=True)) == [
        "Ursula prefers green tea in the morning"
    ]
    assert found is not None  # search keeps working while paused
