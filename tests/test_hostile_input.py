"""Hostile input never gives a 500 (issue 13, finding 9): NUL in query parameters, path segments and headers,
NUL or a lone surrogate anywhere in a JSON body (metadata, checkpoint state, an import file), ids longer than
any stored one, query words of several kilobytes, an import whose pending tool calls are not a list. Each
is a 4xx naming the field, with nothing written, except long query words: search answers them."""

import json

import pytest

from memory.models import MemoryItem

from .factories import MemoryItemFactory
from .test_bad_input import tenant_counts

LONG_ID = "x" * 300
LONG_WORD = "z" * 3000
NUL = "a\x00b"
SURROGATE = "a\ud800b"


def export(**session) -> dict:
    """An import file with one session, one checkpoint (overridden by `session`) and one memory."""
    checkpoint = {"id": 1, "messages": [], "agent_state": {}, "pending_tool_calls": [], **session}
    return {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [{"id": 1, "content": "Imported fact about tea", "scope": "user"}],
        "sessions": [{"session_id": "imp-1", "messages": [], "checkpoints": [checkpoint]}],
    }


# (name, method, url, body, headers, status, the field the message names; None: an answer, no field)
CASES = [
    # NUL in a query parameter, a path segment, a header
    ("query nul", "get", "/api/v1/memories?user_id=a%00b", None, {}, 400, "user_id"),
    ("query name nul", "get", "/api/v1/memories?user%00id=a", None, {}, 400, "user\\u0000id"),
    ("injections nul", "get", "/api/v1/injections?user_id=a%00b", None, {}, 400, "user_id"),
    ("search get nul", "get", "/api/v1/memories?skill=%00", None, {}, 400, "skill"),
    ("export path nul", "get", "/api/v1/users/a%00b/export", None, {}, 400, "path"),
    ("forget path nul", "delete", "/api/v1/users/a%00b", None, {}, 400, "path"),
    ("session path nul", "get", "/api/v1/sessions/a%00b", None, {}, 400, "path"),
    ("messages path nul", "get", "/api/v1/sessions/a%00b/messages", None, {}, 400, "path"),
    ("profile path nul", "get", "/api/v1/profiles/users/a%00b", None, {}, 400, "path"),
    ("agent path nul", "get", "/api/v1/agents/a%00b/memories", None, {}, 400, "path"),
    ("org header nul", "get", "/api/v1/projects", None, {"HTTP_X_ENGRAM_ORG": NUL}, 400, "X-Engram-Org"),
    ("page query nul", "get", "/memories/?q=a%00b", None, {}, 400, "q"),
    # NUL or a lone surrogate in a JSON body: metadata, content, checkpoint state, import files
    ("metadata nul", "post", "/api/v1/memories", {"content": "Likes tea", "metadata": {"n": NUL}}, {}, 400, "metadata.n"),
    ("metadata surrogate", "post", "/api/v1/memories", {"content": "Likes tea", "metadata": {"n": SURROGATE}}, {}, 400, "metadata.n"),
    ("metadata key nul", "post", "/api/v1/memories", {"content": "Likes tea", "metadata": {NUL: 1}}, {}, 400, "metadata.a\\u0000b"),
    ("content surrogate", "post", "/api/v1/memories", {"content": "Likes tea " + SURROGATE}, {}, 400, "content"),
    ("patch metadata nul", "patch", "/api/v1/memories/{memory}", {"metadata": {"deep": [{"x": NUL}]}}, {}, 400, "metadata.deep[0].x"),
    ("batch metadata nul", "post", "/api/v1/memories/batch", {"memories": [{"content": "Likes tea", "metadata": {"n": NUL}}]}, {}, 400, "memories[0].metadata.n"),
    ("search metadata surrogate", "post", "/api/v1/memories/search", {"query": "tea", "metadata": {"n": SURROGATE}}, {}, 400, "metadata.n"),
    ("checkpoint state nul", "put", "/api/v1/sessions/run-1/checkpoints", {"agent_state": {"k": NUL}}, {}, 400, "agent_state.k"),
    ("checkpoint state surrogate", "put", "/api/v1/sessions/run-1/checkpoints", {"messages": [{"content": SURROGATE}]}, {}, 400, "messages[0].content"),
    ("checkpoint key surrogate", "put", "/api/v1/sessions/run-1/checkpoints", {"tool_states": {SURROGATE: 1}}, {}, 400, "tool_states.a\\ud800b"),
    ("tool arguments nul", "post", "/api/v1/tools/memory_add/invoke", {"arguments": {"content": NUL}}, {}, 400, "arguments.content"),
    ("import memory nul", "post", "/api/v1/users/imp/import", {**export(), "memories": [{"id": 1, "content": "Tea", "metadata": {"x": NUL}}]}, {}, 400, "memories[0].metadata.x"),
    ("import checkpoint surrogate", "post", "/api/v1/users/imp/import", export(agent_state={"k": SURROGATE}), {}, 400, "sessions[0].checkpoints[0].agent_state.k"),
    ("import pending calls not a list", "post", "/api/v1/users/imp/import", export(pending_tool_calls="z"), {}, 400, "pending_tool_calls"),
    ("import pending call without id", "post", "/api/v1/users/imp/import", export(pending_tool_calls=[{"name": "x"}]), {}, 400, "pending_tool_calls"),
    ("import agent state not an object", "post", "/api/v1/users/imp/import", export(agent_state=["x"]), {}, 400, "agent_state"),
    # ids longer than any stored one
    ("profile long id", "get", f"/api/v1/profiles/users/{LONG_ID}", None, {}, 400, "user_id"),
    ("profile long id put", "put", f"/api/v1/profiles/users/{LONG_ID}", {"display_name": "X"}, {}, 400, "user_id"),
    ("agent long id", "get", f"/api/v1/agents/{LONG_ID}/memories", None, {}, 400, "agent_id"),
    ("agent long id post", "post", f"/api/v1/agents/{LONG_ID}/memories", {"content": "Likes tea", "user_id": "u1"}, {}, 400, "agent_id"),
    ("session long id", "get", f"/api/v1/sessions/{LONG_ID}", None, {}, 400, "session_id"),
    ("checkpoint long session", "put", f"/api/v1/sessions/{LONG_ID}/checkpoints", {"user_id": "u1"}, {}, 400, "session_id"),
    ("export long id", "get", f"/api/v1/users/{LONG_ID}/export", None, {}, 400, "user_id"),
    ("import long id", "post", f"/api/v1/users/{LONG_ID}/import", export(), {}, 400, "user_id"),
    ("tool long name", "post", f"/api/v1/tools/{LONG_ID}/invoke", {"arguments": {}}, {}, 400, "name"),
    # query words of several kilobytes: answered
    ("search long word", "post", "/api/v1/memories/search", {"query": LONG_WORD, "user_id": "alice"}, {}, 200, None),
    ("search long cyrillic word", "post", "/api/v1/memories/search", {"query": "ж" * 2000, "user_id": "alice", "mode": "keyword"}, {}, 200, None),
    ("search many words", "post", "/api/v1/memories/search", {"query": " ".join(["tea"] + [f"w{i}" for i in range(700)]), "user_id": "alice"}, {}, 200, None),
    ("context long word", "post", "/api/v1/context", {"query": f"tea {LONG_WORD}", "user_id": "alice"}, {}, 200, None),
    ("tool search long word", "post", "/api/v1/tools/memory_search/invoke", {"arguments": {"query": LONG_WORD}, "user_id": "alice"}, {}, 200, None),
    ("page search long word", "get", f"/memories/?q={LONG_WORD}", None, {}, 200, None),
]  # fmt: skip


@pytest.fixture
def tea(org_a):
    return MemoryItemFactory(org=org_a, content="Alice drinks green tea every morning", embedded=True)


@pytest.mark.parametrize("name,method,url,body,headers,status,field", CASES, ids=[c[0] for c in CASES])
def test_it_answers_hostile_input_without_a_500(
    name, method, url, body, headers, status, field, client, alice, key_a, alice_client, tea
):
    url = url.replace("{memory}", str(tea.pk))
    if url.startswith("/api/"):
        api = alice_client if "HTTP_X_ENGRAM_ORG" in headers else key_a[1]
    else:
        client.force_login(alice)
        api = client
    before = tenant_counts()
    data = json.dumps(body) if body is not None else None  # ASCII with \u escapes, as a client sends them
    if data is None:
        response = getattr(api, method)(url, **headers)
    else:
        response = api.generic(method.upper(), url, data, content_type="application/json", **headers)
    assert response.status_code == status, (response.status_code, response.content[:400])
    if field is None:
        return
    assert tenant_counts() == before, "something was written"
    if url.startswith("/api/"):
        message = response.json()["error"]["message"]
    else:
        message = response.content.decode()
    assert message.startswith(f"{field}:") or f"{field}:" in message, message
    assert "\x00" not in message and "ErrorDetail" not in message


def test_it_answers_a_search_for_a_long_word_with_the_memory_holding_it(key_a, org_a):
    item = MemoryItemFactory(org=org_a, content=f"The token is {LONG_WORD[:2500]}")
    found = key_a[1].post(
        "/api/v1/memories/search",
        {"query": LONG_WORD[:2500], "user_id": "alice", "mode": "keyword"},
        format="json",
    )
    assert found.status_code == 200, found.content
    assert [r["id"] for r in found.json()["results"]] == [item.pk]


def test_it_imports_pending_tool_calls_that_can_be_approved(alice_client, org_a):
    calls = [{"id": "call_1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]
    response = alice_client.post(
        "/api/v1/users/alice/import", export(pending_tool_calls=calls), format="json"
    )
    assert response.status_code == 201, response.content
    latest = alice_client.get("/api/v1/sessions/imp-1/checkpoints/latest").json()
    approved = alice_client.post(
        f"/api/v1/checkpoints/{latest['id']}/approve", {"tool_call_ids": ["call_1"]}, format="json"
    )
    assert approved.status_code == 201, approved.content
    assert approved.json()["pending_tool_calls"] == []


def test_it_reports_batch_errors_as_field_and_message(key_a):
    response = key_a[1].post(
        "/api/v1/memories/batch",
        {
            "memories": [
                {"content": ["x"], "user_id": "u1"},
                {"content": "Likes green tea", "user_id": "u1", "tags": "tea"},
                {"content": "Likes green tea", "user_id": "u1", "colour": "red"},
                {"content": "Likes black tea", "user_id": "u1", "tags": ["x" * 101]},
            ],
            "infer": False,
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    messages = [r["error"]["message"] for r in response.json()["results"]]
    assert messages == [
        "content: Not a valid string.",
        'tags: Expected a list of items but got type "str".',
        "colour: Unknown field.",
        "tags: 0: Ensure this field has no more than 100 characters.",
    ]
    assert not MemoryItem.objects.filter(user_id="u1").exists()


def test_it_says_it_in_the_callers_language(key_a):
    response = key_a[1].get("/api/v1/memories?user_id=a%00b", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "user_id: 包含 NUL 字符（\\u0000），无法保存。"
