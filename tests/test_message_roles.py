"""OpenAI's message roles (user, assistant, system, tool, developer) beside Engram's (human, ai) wherever a
message is: session messages, checkpoints, extraction; an invalid role's error lists the valid ones."""

import pytest

from checkpoints.models import Checkpoint, Message, Session
from checkpoints.services import history_text
from core.roles import ROLES
from memory.extraction.rules import extract_rules
from memory.models import ExtractionJob

OPENAI_TURN = [
    {"role": "developer", "content": "You are a travel assistant.", "message_id": "d1"},
    {"role": "system", "content": "Answer briefly.", "message_id": "s1"},
    {"role": "user", "content": "Remember that I am allergic to peanuts", "message_id": "u1"},
    {"role": "assistant", "content": "Noted, no peanuts.", "message_id": "a1"},
    {"role": "tool", "content": '{"ok": true}', "message_id": "t1"},
]


def test_it_stores_openai_roles_as_sent_and_queues_extraction(key_a, org_a):
    _, client = key_a
    response = client.post(
        "/api/v1/sessions/trip/messages", {"user_id": "u1", "messages": OPENAI_TURN}, format="json"
    )
    assert response.status_code == 201, response.content
    assert [m["role"] for m in response.json()["messages"]] == [
        "developer",
        "system",
        "user",
        "assistant",
        "tool",
    ]
    stored = Message.objects.filter(session__org=org_a, session__session_id="trip")
    assert [m.role for m in stored] == ["developer", "system", "user", "assistant", "tool"]
    job = ExtractionJob.objects.get(pk=response.json()["extraction_job"]["id"])
    assert [m["role"] for m in job.messages] == ["developer", "system", "user", "assistant", "tool"]
    detail = client.get("/api/v1/sessions/trip").json()
    assert [m["role"] for m in detail["messages"]] == ["developer", "system", "user", "assistant", "tool"]


def test_it_queues_no_extraction_without_a_user_message(key_a, org_a):
    _, client = key_a
    response = client.post(
        "/api/v1/sessions/quiet/messages",
        {"user_id": "u1", "messages": [{"role": "assistant", "content": "Remember that I am tall"}]},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["extraction_job"] is None


@pytest.mark.parametrize("role", ["robot", "User", "function", ""])
def test_it_refuses_an_invalid_role_listing_the_valid_ones(key_a, org_a, role):
    _, client = key_a
    response = client.post(
        "/api/v1/sessions/bad/messages",
        {"user_id": "u1", "messages": [{"role": role, "content": "hello there"}]},
        format="json",
    )
    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert "Valid values: " + ", ".join(ROLES) in message
    assert not Session.objects.filter(org=org_a, session_id="bad").exists()


def test_it_lists_the_valid_roles_in_chinese(key_a, org_a):
    _, client = key_a
    response = client.post(
        "/api/v1/sessions/bad/messages",
        {"user_id": "u1", "messages": [{"role": "robot", "content": "hello there"}]},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    assert response.status_code == 400
    assert "可选值：" + ", ".join(ROLES) in response.json()["error"]["message"]


def test_checkpoints_take_openai_roles_and_refuse_unknown_ones(key_a, org_a):
    _, client = key_a
    messages = [{k: v for k, v in m.items() if k != "message_id"} for m in OPENAI_TURN]
    saved = client.put(
        "/api/v1/sessions/run-9/checkpoints", {"user_id": "u1", "messages": messages}, format="json"
    )
    assert saved.status_code == 201, saved.content
    assert [m["role"] for m in saved.json()["messages"]] == [m["role"] for m in OPENAI_TURN]

    refused = client.put(
        "/api/v1/sessions/run-9/checkpoints",
        {"user_id": "u1", "messages": [*messages, {"role": "bot", "content": "x"}]},
        format="json",
    )
    assert refused.status_code == 400, refused.content
    message = refused.json()["error"]["message"]
    assert "[5].role" in message and "Valid values: " + ", ".join(ROLES) in message
    assert Checkpoint.objects.filter(org=org_a, session__session_id="run-9").count() == 1


def test_extraction_reads_user_messages_in_either_vocabulary():
    for role in ("user", "human"):
        found = extract_rules([{"role": role, "content": "Remember that I am allergic to peanuts"}])
        assert [c.content for c in found] == ["I am allergic to peanuts"], role
    for role in ("assistant", "ai", "system", "developer", "tool"):
        assert extract_rules([{"role": role, "content": "Remember that I am allergic to peanuts"}]) == []


def test_the_summary_names_each_role_by_what_it_is():
    rows = [
        Message(role=role, content="x") for role in ("user", "human", "assistant", "ai", "developer", "tool")
    ]
    assert history_text(rows).splitlines() == ["用户: x", "用户: x", "AI: x", "AI: x", "系统: x", "工具: x"]
