"""The agent tools over MCP (JSON-RPC 2.0 on POST /api/v1/mcp)."""

from rest_framework.test import APIClient

from memory.models import MemoryItem


def rpc(client, method, params=None, msg_id=1, **headers):
    body = {"jsonrpc": "2.0", "method": method, "id": msg_id}
    if params is not None:
        body["params"] = params
    return client.post("/api/v1/mcp", body, format="json", **headers)


CTX = {"HTTP_X_ENGRAM_USER_ID": "u1", "HTTP_X_ENGRAM_SESSION_ID": "s1"}


def test_it_initializes_and_lists_the_tools(key_a):
    _, client = key_a
    init = rpc(client, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    assert init.status_code == 200
    assert init.json()["result"]["serverInfo"]["name"] == "engram"
    assert "tools" in init.json()["result"]["capabilities"]
    note = client.post(
        "/api/v1/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, format="json"
    )
    assert note.status_code == 202
    tools = rpc(client, "tools/list", msg_id=2).json()["result"]["tools"]
    assert {t["name"] for t in tools} == {"memory_add", "memory_search"}
    assert all(t["inputSchema"]["type"] == "object" for t in tools)


def test_it_adds_and_searches_through_tools_call(key_a, org_a):
    _, client = key_a
    added = rpc(
        client, "tools/call", {"name": "memory_add", "arguments": {"content": "用户对花生过敏"}}, **CTX
    )
    result = added.json()["result"]
    assert result["isError"] is False, result
    item = MemoryItem.objects.get(org=org_a, user_id="u1")
    assert item.source == "agent" and item.content == "用户对花生过敏"
    found = rpc(
        client, "tools/call", {"name": "memory_search", "arguments": {"query": "对什么过敏"}}, msg_id=3, **CTX
    )
    assert [m["id"] for m in found.json()["result"]["structuredContent"]["memories"]] == [item.pk]


def test_it_reports_tool_errors_as_results_and_protocol_errors_as_errors(key_a, org_a):
    _, client = key_a
    refused = rpc(
        client,
        "tools/call",
        {"name": "memory_add", "arguments": {"content": "my password is hunter2-secret"}},
        **CTX,
    )
    assert refused.json()["result"]["isError"] is True
    assert "sensitive_content" in refused.json()["result"]["content"][0]["text"]
    assert not MemoryItem.objects.filter(org=org_a).exists()
    assert rpc(client, "tools/call", {"name": "nope"}).json()["error"]["code"] == -32602
    assert rpc(client, "resources/list").json()["error"]["code"] == -32601
    bad = client.post("/api/v1/mcp", "{not json", content_type="application/json")
    assert bad.json()["error"]["code"] == -32700
    nul = client.post(
        "/api/v1/mcp",
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_add", '
        '"arguments": {"content": "a\\u0000b"}}}',
        content_type="application/json",
        **CTX,
    )
    assert nul.status_code == 200  # a JSON-RPC error, in the protocol's shape, not the REST API's
    assert nul.json()["error"]["code"] == -32602
    assert "params.arguments.content" in nul.json()["error"]["message"]
    assert not MemoryItem.objects.filter(org=org_a).exists()


def test_it_keeps_other_orgs_out(key_a, key_b, org_a):
    _, client_a = key_a
    rpc(client_a, "tools/call", {"name": "memory_add", "arguments": {"content": "用户对花生过敏"}}, **CTX)
    _, client_b = key_b
    found = rpc(client_b, "tools/call", {"name": "memory_search", "arguments": {"query": "花生过敏"}}, **CTX)
    assert found.json()["result"]["structuredContent"]["memories"] == []
    anonymous = rpc(APIClient(), "tools/list")
    assert anonymous.status_code == 401


def test_it_refuses_an_id_json_rpc_does_not_allow_and_echoes_only_valid_ones(key_a):
    """JSON-RPC 2.0: an id is a string, a number or null; a request with another id is invalid, and the
    answer's id is null (Schemathesis found `{"id": {}}` echoed back)."""
    _, client = key_a
    for bad in ({}, [1], True):
        answer = rpc(client, "ping", msg_id=bad).json()
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    bad_version = client.post(
        "/api/v1/mcp", {"jsonrpc": "1.0", "id": {"a": 1}, "method": "ping"}, format="json"
    )
    assert bad_version.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request."},
    }
    for good in ("a", 7, 1.5, None):
        assert rpc(client, "ping", msg_id=good).json() == {"jsonrpc": "2.0", "id": good, "result": {}}
