"""Agent tools (seed 000): OpenAI function-calling schemas and invocation through the same services."""

import json

from memory.models import InjectionLog, MemoryItem


def invoke(client, name, arguments, **context):
    return client.post(f"/api/v1/tools/{name}/invoke", {"arguments": arguments, **context}, format="json")


def test_it_describes_the_tools_as_function_schemas(key_a):
    tools = key_a[1].get("/api/v1/tools").json()["tools"]
    by_name = {t["function"]["name"]: t["function"] for t in tools}
    assert set(by_name) == {"memory_add", "memory_search"}
    assert all(t["type"] == "function" for t in tools)
    add = by_name["memory_add"]
    assert set(add["parameters"]["properties"]) == {"content", "memory_type", "scope"}
    assert add["parameters"]["required"] == ["content"]
    assert "记住" in add["description"] and "我是" in add["description"] and "remember" in add["description"]
    search = by_name["memory_search"]
    assert set(search["parameters"]["properties"]) == {"query", "k", "memory_type", "scope"}
    assert "recall" in search["description"]


def test_it_adds_a_memory_as_the_agent_and_finds_it(key_a, org_a):
    _, client = key_a
    added = invoke(
        client,
        "memory_add",
        json.dumps(
            {"content": "用户对花生过敏", "memory_type": "fact"}, ensure_ascii=False
        ),  # OpenAI's string form
        user_id="u1",
        session_id="s1",
        agent_id="chef",
    )
    assert added.status_code == 200, added.content
    body = added.json()
    assert body["result"]["status"] == "created" and "用户对花生过敏" in body["output"]
    item = MemoryItem.objects.get(pk=body["result"]["id"])
    assert (item.org, item.user_id, item.source, item.scope, item.agent_id) == (
        org_a,
        "u1",
        "agent",
        "user",
        "chef",
    )

    again = invoke(client, "memory_add", {"content": "用户对花生过敏"}, user_id="u1", agent_id="chef")
    assert again.json()["result"]["status"] == "merged"
    assert MemoryItem.objects.filter(org=org_a).count() == 1

    found = invoke(
        client, "memory_search", {"query": "花生过敏 能吃什么", "k": 3}, user_id="u1", session_id="s1"
    )
    assert found.status_code == 200, found.content
    assert [m["id"] for m in found.json()["result"]["memories"]] == [item.pk]
    assert "用户对花生过敏" in found.json()["output"]
    log = InjectionLog.objects.get(org=org_a, kind="tool")
    assert log.memory_ids == [item.pk] and log.user_id == "u1"


def test_it_applies_the_gate_and_validates_arguments(key_a, org_a):
    _, client = key_a
    secret = invoke(client, "memory_add", {"content": "my password is Tr0ub4dor&3 for the VPN"}, user_id="u1")
    assert secret.status_code == 422 and secret.json()["error"]["code"] == "sensitive_content"
    short = invoke(client, "memory_add", {"content": "hi"}, user_id="u1")
    assert short.status_code == 422 and short.json()["error"]["code"] == "too_short"
    for bad in (
        {"memory_type": "fact"},  # no content
        {"content": "用户对花生过敏", "memory_type": "rumour"},
        {"content": "用户对花生过敏", "colour": "red"},
        "{not json",
        ["a list"],
    ):
        response = invoke(client, "memory_add", bad, user_id="u1")
        assert response.status_code == 400, (bad, response.content)
    assert (
        invoke(
            client, "memory_add", {"content": "用户对花生过敏", "scope": "session"}, user_id="u1"
        ).status_code
        == 400
    )
    assert invoke(client, "memory_search", {"query": "x", "k": 99}, user_id="u1").status_code == 400
    assert (
        invoke(client, "memory_add", {"content": "用户对花生过敏"}).status_code == 400
    )  # a key names the user
    assert invoke(client, "memory_forget", {}, user_id="u1").status_code == 404
    assert not MemoryItem.objects.filter(org=org_a).exists()


def test_it_keeps_tools_inside_the_callers_rights(
    alice_client, bob_client, charlie_client, key_b, alice, bob, project
):
    mine = invoke(alice_client, "memory_add", {"content": "Alice prefers tables over prose"})
    assert mine.status_code == 200
    # An account acts only for itself; another org's key does not see org A's subjects.
    assert (
        invoke(bob_client, "memory_add", {"content": "Alice is leaving soon"}, user_id="alice").status_code
        == 403
    )
    assert invoke(bob_client, "memory_search", {"query": "tables"}, user_id="alice").status_code == 404
    assert invoke(charlie_client, "memory_search", {"query": "tables"}, user_id="alice").status_code == 404
    other = invoke(key_b[1], "memory_search", {"query": "tables"}, user_id="alice")
    assert other.status_code == 200 and other.json()["result"]["memories"] == []
    # Bob is a viewer in the project: he may search it but not add to it.
    viewer = invoke(
        bob_client,
        "memory_add",
        {"content": "The project uses PostgreSQL", "scope": "project"},
        project="atlas",
    )
    assert viewer.status_code == 403
    assert invoke(charlie_client, "memory_search", {"query": "x"}, project="atlas").status_code == 404
    assert MemoryItem.objects.count() == 1
