"""Secrets said in a conversation are not kept: messages and extraction jobs store them redacted."""

import pytest

from checkpoints.models import Checkpoint, Message
from checkpoints.services import messages_append
from core.secrets import redact
from memory.extraction.services import extraction_job_run
from memory.gate import GateRejection, check_sensitive
from memory.models import ExtractionJob, MemoryItem

SECRET_TURNS = [
    ("请记住，我的数据库密码是 Tr0ub4dor&3x，别忘了", "Tr0ub4dor&3x"),
    ("Remember my OpenAI key sk-proj-AbCdEfGhIjKlMnOpQrStUv123456", "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"),
    ("记一下我的卡号 4111 1111 1111 1111，下次付款用", "4111 1111 1111 1111"),
]


@pytest.mark.parametrize("text, secret", SECRET_TURNS)
def test_it_stores_the_turn_without_the_secret_and_remembers_nothing_of_it(org_a, text, secret):
    _, created, job = messages_append(
        org=org_a, session_id="s-secret", user_id="u1", messages=[{"role": "human", "content": text}]
    )
    stored = Message.objects.get(pk=created[0].pk)
    assert secret not in stored.content and "[redacted]" in stored.content
    assert all(secret not in m["content"] for m in ExtractionJob.objects.get(pk=job.pk).messages)
    assert extraction_job_run(job_id=job.pk) == "done"
    assert not MemoryItem.objects.filter(org=org_a, user_id="u1").exists()
    job.refresh_from_db()
    assert secret not in str(job.result) and secret not in job.error


def test_it_leaves_talk_about_secrets_alone():
    for text in ("用户希望密码策略至少 12 位", "prefers token-based auth", "订单号 1234567890123 已发货"):
        assert redact(text) == text


def test_it_refuses_a_memory_that_only_holds_a_removed_secret():
    with pytest.raises(GateRejection) as refused:
        check_sensitive("my password is [redacted]")
    assert refused.value.code == "sensitive_content"


def test_a_checkpoint_is_kept_without_secrets(key_a):
    _, client = key_a
    response = client.put(
        "/api/v1/sessions/run-secret/checkpoints",
        {
            "user_id": "u1",
            "messages": [{"role": "user", "content": "my password is Tr0ub4dor&3x, log in for me"}],
            "agent_state": {
                "env": {"OPENAI_API_KEY": "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"},
                "todo": ["log in"],
            },
            "tool_states": {"browser": {"typed": ["4111 1111 1111 1111"]}},
            "pending_tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "pay", "arguments": '{"card": "4111111111111111"}'},
                }
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    stored = Checkpoint.objects.get(pk=response.json()["id"])
    text = str([stored.messages, stored.agent_state, stored.tool_states, stored.pending_tool_calls])
    for secret in (
        "Tr0ub4dor&3x",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456",
        "4111 1111 1111 1111",
        "4111111111111111",
    ):
        assert secret not in text and secret not in response.content.decode()
    assert "[redacted]" in stored.messages[0]["content"]
    # Everything else is kept as it was: keys, ids, other values.
    assert stored.agent_state["todo"] == ["log in"] and "OPENAI_API_KEY" in stored.agent_state["env"]
    assert stored.pending_tool_calls[0]["id"] == "call_1"
    decided = client.post(
        f"/api/v1/checkpoints/{stored.pk}/reject",
        {"comment": "never pay with 4111 1111 1111 1111"},
        format="json",
    )
    assert decided.status_code in (200, 201), decided.content
    assert "4111 1111 1111 1111" not in decided.content.decode()
    decision = Checkpoint.objects.latest("id").metadata["decisions"][0]
    assert decision["comment"] == "never pay with [redacted]"
