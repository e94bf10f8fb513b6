"""The LLM path against a real HTTP server on loopback speaking the OpenAI chat API (tests/openai_server.py).

Valid JSON, invalid JSON, a timeout, a 500: each ends with the right memories or a recorded failure;
no job is lost. Also the model's ADD / UPDATE / SUPERSEDE / NOOP decisions, and the jobs API.
"""

import json

import pytest

from checkpoints.services import messages_append
from core.backoff import backoff
from core.crypto import decrypt
from memory.extraction.services import RetryLater, extraction_job_run
from memory.models import ExtractionJob, LLMConfig, MemoryItem, MemoryRevision

from .factories import MemoryItemFactory
from .openai_server import Delay, Fail, OpenAIStub

SECRET = "sk-test-llm-0123456789abcdef"


@pytest.fixture
def stub(org_a, alice_client):
    with OpenAIStub() as server:
        response = alice_client.put(
            "/api/v1/llm-config",
            {"base_url": server.base_url, "model": "stub-chat", "api_key": SECRET},
            format="json",
        )
        assert response.status_code == 200, response.content
        yield server


def memories(*items) -> str:
    return json.dumps({"memories": list(items)}, ensure_ascii=False)


def queue(org, text, session_id="s1", user_id="u1"):
    _, _, job = messages_append(
        org=org,
        session_id=session_id,
        user_id=user_id,
        messages=[
            {"role": "human", "content": text, "message_id": "m1"},
            {"role": "ai", "content": "好的。", "message_id": "m2"},
            {"role": "human", "content": "谢谢", "message_id": "m3"},
        ],
    )
    return job


def test_it_stores_the_model_key_encrypted_and_never_returns_it(stub, alice_client, bob_client, key_a, org_a):
    config = LLMConfig.objects.get(org=org_a)
    assert SECRET not in config.api_key_encrypted and decrypt(config.api_key_encrypted) == SECRET
    body = alice_client.get("/api/v1/llm-config").json()
    assert body["config"]["has_api_key"] is True and body["effective"] == {
        "model": "stub-chat",
        "source": "org",
    }
    assert SECRET not in json.dumps(body)
    # Omitting the key keeps it; members and API keys may not change the org's model.
    alice_client.put("/api/v1/llm-config", {"base_url": stub.base_url, "model": "other"}, format="json")
    assert decrypt(LLMConfig.objects.get(org=org_a).api_key_encrypted) == SECRET
    assert (
        bob_client.put(
            "/api/v1/llm-config", {"base_url": stub.base_url, "model": "x"}, format="json"
        ).status_code
        == 403
    )
    assert key_a[1].get("/api/v1/llm-config").status_code == 403
    assert (
        alice_client.put(
            "/api/v1/llm-config", {"base_url": "not a url", "model": "x"}, format="json"
        ).status_code
        == 400
    )
    assert LLMConfig.objects.get(org=org_a).model == "other"
    assert alice_client.delete("/api/v1/llm-config").status_code == 204
    assert not LLMConfig.objects.filter(org=org_a).exists()


def test_it_keeps_what_the_model_extracts_through_the_gate(stub, org_a):
    stub.chat_replies.append(
        memories(
            {"content": "用户对花生过敏", "memory_type": "fact", "confidence": 0.95, "scope": "user"},
            {"content": "User might like jazz", "memory_type": "preference", "confidence": 0.4},
        )
    )
    job = queue(org_a, "我对花生过敏，今天想吃泰国菜，推荐一家吧")
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert (job.method, job.attempts, job.error) == ("llm", 1, "")
    assert [a["content"] for a in job.result["added"]] == ["用户对花生过敏"]
    assert [r["code"] for r in job.result["rejected"]] == ["low_confidence"]
    item = MemoryItem.objects.get(org=org_a)
    assert (item.source, item.session_id, item.source_message_id, item.confidence) == (
        "auto",
        "s1",
        "m1",
        0.95,
    )
    request = stub.requests[0]["body"]
    assert request["response_format"] == {"type": "json_object"} and request["model"] == "stub-chat"
    prompt = request["messages"][-1]["content"]
    assert "我对花生过敏" in prompt and "谢谢" not in prompt  # user messages under 10 characters are left out


def test_it_holds_the_models_candidates_to_the_statement_form(stub, org_a):
    stub.chat_replies.append(
        memories(
            {"content": "我住在成都", "memory_type": "fact", "confidence": 0.9},
            {"content": "帮我写一封请假邮件", "memory_type": "fact", "confidence": 0.9},
            {"content": "My son is nine", "memory_type": "fact", "confidence": 0.9},
            {"content": "用户这周在出差", "memory_type": "fact", "confidence": 0.9},  # a stretch of now
            {"content": "The user is so stressed about work", "memory_type": "fact", "confidence": 0.9},
        )
    )
    job = queue(org_a, "我住在成都，我儿子九岁了，帮我写一封请假邮件")
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert job.method == "llm"
    assert [a["content"] for a in job.result["added"]] == ["用户住在成都", "The user's son is nine"]
    prompt = stub.requests[0]["body"]["messages"][0]["content"]
    assert "third person" in prompt and "split independent facts" in prompt


def test_it_repairs_invalid_json_once(stub, org_a):
    stub.chat_replies.extend(
        [
            "Sure! Here are the memories: 用户对花生过敏",
            memories({"content": "用户对花生过敏", "confidence": 0.9}),
        ]
    )
    job = queue(org_a, "我对花生过敏，今天想吃泰国菜，推荐一家吧")
    extraction_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.method == "llm" and [a["content"] for a in job.result["added"]] == ["用户对花生过敏"]
    assert len(stub.requests) == 2
    assert "not valid JSON" in stub.requests[1]["body"]["messages"][-1]["content"]


def test_it_falls_back_to_the_rules_when_the_json_stays_invalid(stub, org_a):
    stub.chat_replies.extend(["not json", '{"memories": "nope"}'])
    job = queue(org_a, "请记住，我对花生过敏，点菜时注意")
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert job.method == "rules" and "invalid JSON" in job.error and "rule path" in job.error
    assert [a["content"] for a in job.result["added"]] == ["用户对花生过敏"]
    assert MemoryItem.objects.filter(org=org_a, status="active").count() == 1


def test_it_retries_a_timeout_and_then_uses_the_rules(stub, org_a, settings):
    settings.ENGRAM_LLM_TIMEOUT = 0.3
    settings.EXTRACTION_RETRY_BACKOFF = 5.0
    stub.chat_replies.extend([Delay(1.5), "late", Delay(1.5), "late", Delay(1.5), "late"])
    job = queue(org_a, "请记住，我对花生过敏，点菜时注意")
    for attempt in (1, 2):
        with pytest.raises(RetryLater) as retry:
            extraction_job_run(job_id=job.pk)
        # The job row's attempt count decides the wait: 5 s, then 20 s (plus jitter fixed by the job's id).
        assert retry.value.countdown == backoff(attempt, base=5.0, cap=300, salt=job.pk)
        assert 5 * 4 ** (attempt - 1) <= retry.value.countdown < 5 * 4 ** (attempt - 1) + 5
        job.refresh_from_db()
        assert (job.status, job.attempts) == ("pending", attempt)  # released, never lost
        assert "Timeout" in job.error and "will retry" in job.error
        assert not MemoryItem.objects.filter(org=org_a).exists()
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert (job.method, job.attempts) == ("rules", 3)
    assert "attempt 3" in job.error and "used the rule path" in job.error
    assert [a["content"] for a in job.result["added"]] == ["用户对花生过敏"]


def test_it_retries_a_500_and_then_succeeds_with_the_model(stub, org_a):
    stub.chat_replies.extend([Fail(500), memories({"content": "用户对花生过敏", "confidence": 0.9})])
    job = queue(org_a, "我对花生过敏，今天想吃泰国菜，推荐一家吧")
    with pytest.raises(RetryLater):
        extraction_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == "pending" and "500" in job.error
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert (job.method, job.attempts, job.error) == ("llm", 2, "")
    assert MemoryItem.objects.get(org=org_a).content == "用户对花生过敏"


def test_it_uses_the_rules_at_once_when_the_model_refuses_the_key(stub, org_a):
    stub.chat_replies.append(Fail(401))
    job = queue(org_a, "请记住，我对花生过敏，点菜时注意")
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert (job.method, job.attempts) == ("rules", 1) and "401" in job.error
    assert SECRET not in job.error


def test_it_lets_the_model_supersede_an_existing_memory(stub, org_a):
    old = MemoryItemFactory(org=org_a, user_id="u1", content="我住在北京的朝阳区", embedded=True)
    stub.chat_replies.extend(
        [
            memories(
                {
                    "content": "用户现在住在上海浦东",
                    "memory_type": "fact",
                    "confidence": 0.9,
                    "correction": True,
                }
            ),
            json.dumps({"action": "SUPERSEDE", "id": old.pk, "content": None, "reason": "moved"}),
        ]
    )
    job = queue(org_a, "我搬家了，现在住在上海浦东")
    extraction_job_run(job_id=job.pk)
    job.refresh_from_db()
    [superseded] = job.result["superseded"]
    assert superseded["old_id"] == old.pk and "model: SUPERSEDE" in superseded["reason"]
    old.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == superseded["id"]
    decide = json.loads(stub.requests[1]["body"]["messages"][-1]["content"])
    assert decide["existing"][0]["id"] == old.pk  # the model chooses among the nearest items


def test_it_lets_the_model_update_or_skip(stub, org_a):
    old = MemoryItemFactory(org=org_a, user_id="u1", content="用户喜欢喝咖啡", embedded=True)
    stub.chat_replies.extend(
        [
            memories(
                {"content": "用户喜欢喝美式咖啡，不加糖", "memory_type": "preference", "confidence": 0.9}
            ),
            json.dumps({"action": "UPDATE", "id": old.pk, "content": "用户喜欢喝美式咖啡，不加糖"}),
        ]
    )
    extraction_job_run(job_id=queue(org_a, "我喜欢喝美式咖啡，不加糖，帮我点一杯").pk)
    old.refresh_from_db()
    assert old.content == "用户喜欢喝美式咖啡，不加糖" and old.status == "active"
    update = MemoryRevision.objects.get(item_ref=old.pk, action="update")
    assert update.before["content"] == "用户喜欢喝咖啡"  # the old text stays in the history

    stub.chat_replies.extend(
        [
            memories({"content": "用户喜欢美式咖啡", "memory_type": "preference", "confidence": 0.9}),
            json.dumps({"action": "NOOP", "id": old.pk}),
        ]
    )
    job = queue(org_a, "对了，我喜欢美式咖啡，记得吧", session_id="s2")
    extraction_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert [m["id"] for m in job.result["merged"]] == [old.pk] and job.result["added"] == []
    assert MemoryItem.objects.filter(org=org_a).count() == 1


def test_it_does_not_let_the_model_invent_ids(stub, org_a):
    old = MemoryItemFactory(org=org_a, user_id="u1", content="我住在北京的朝阳区", embedded=True)
    stub.chat_replies.extend(
        [
            memories(
                {
                    "content": "我现在住在上海浦东",
                    "memory_type": "fact",
                    "confidence": 0.9,
                    "correction": True,
                }
            ),
            json.dumps({"action": "SUPERSEDE", "id": 987654321}),
            json.dumps({"action": "UPDATE", "id": 987654321, "content": "x"}),
        ]
    )
    job = queue(org_a, "不对，我现在住在上海浦东")
    extraction_job_run(job_id=job.pk)
    job.refresh_from_db()
    [superseded] = job.result["superseded"]
    assert superseded["old_id"] == old.pk  # the thresholds decided: a correction of the nearest fact
    assert "could not decide" in superseded["reason"]
    assert not MemoryItem.objects.filter(pk=987654321).exists()


def test_it_fails_a_broken_job_visibly_and_retries_it(org_a, key_a, bob_client, charlie_client, settings):
    settings.EXTRACTION_MAX_ATTEMPTS = 1
    job = ExtractionJob.objects.create(
        org=org_a, user_id="u1", messages=[{"role": "human", "content": 12345}]
    )
    assert extraction_job_run(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.status == "failed" and "TypeError" in job.error and job.finished_at

    _, client = key_a
    listed = client.get("/api/v1/extraction-jobs", {"status": "failed", "user_id": "u1"}).json()["results"]
    assert [j["id"] for j in listed] == [job.pk]
    assert client.get("/api/v1/extraction-jobs", {"status": "bogus"}).status_code == 400
    for outsider in (bob_client, charlie_client):
        assert outsider.get(f"/api/v1/extraction-jobs/{job.pk}").status_code == 404
        assert outsider.post(f"/api/v1/extraction-jobs/{job.pk}/retry").status_code == 404
    retried = client.post(f"/api/v1/extraction-jobs/{job.pk}/retry")
    assert retried.status_code == 202 and retried.json()["status"] == "pending"
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("pending", 0)

    ExtractionJob.objects.filter(pk=job.pk).update(
        messages=[{"role": "human", "content": "请记住，我对花生过敏，点菜时注意"}]
    )
    assert extraction_job_run(job_id=job.pk) == "done"
    assert (
        client.get(f"/api/v1/extraction-jobs/{job.pk}").json()["result"]["added"][0]["content"]
        == "用户对花生过敏"
    )
    assert client.post(f"/api/v1/extraction-jobs/{job.pk}/retry").status_code == 409


def test_it_asks_the_model_to_decide_only_about_memories_of_the_same_subject(stub, org_a):
    MemoryItemFactory(org=org_a, user_id="u1", content="User likes coffee", embedded=True)
    stub.chat_replies.append(
        memories({"content": "Works as a procurement manager at a trading company", "memory_type": "core"})
    )
    job = queue(org_a, "I work as a procurement manager at a trading company.")
    extraction_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert [a["content"] for a in job.result["added"]] == [
        "Works as a procurement manager at a trading company"
    ]
    assert len(stub.requests) == 1  # the extraction call only: nothing similar enough to decide about


def test_it_shows_the_model_the_earlier_turn_as_context_only(stub, org_a):
    queue(org_a, "请记住，我对花生过敏，点菜时注意", session_id="ctx")
    _, _, second = messages_append(
        org=org_a,
        session_id="ctx",
        user_id="u1",
        messages=[{"role": "human", "content": "那我今晚吃什么比较好呢，推荐一下", "message_id": "m9"}],
    )
    assert [m.get("context", False) for m in second.messages] == [True, True, True, False]
    assert second.messages[0]["content"] == "请记住，我对花生过敏，点菜时注意"
    stub.chat_replies.append(memories())
    extraction_job_run(job_id=second.pk)
    prompt = stub.requests[-1]["body"]["messages"][-1]["content"]
    assert (
        prompt.index("context only")
        < prompt.index("花生过敏")
        < prompt.index("This turn")
        < prompt.index("今晚")
    )


def test_it_does_not_extract_an_earlier_turn_again_without_a_model(org_a):
    first = queue(org_a, "请记住，我对花生过敏，点菜时注意", session_id="ctx")
    extraction_job_run(job_id=first.pk)
    _, _, second = messages_append(
        org=org_a,
        session_id="ctx",
        user_id="u1",
        messages=[{"role": "human", "content": "那我今晚吃什么比较好呢，推荐一下"}],
    )
    extraction_job_run(job_id=second.pk)
    second.refresh_from_db()
    assert second.result["candidates"] == 0 and second.result["skipped"] == []
    assert MemoryItem.objects.filter(org=org_a).count() == 1
