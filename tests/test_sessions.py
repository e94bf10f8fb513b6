"""Sessions: short-term memory with a rolling summary (seed 002), its access rules and TTL expiry."""

from datetime import timedelta

import pytest
from django.utils import timezone

from checkpoints import services
from checkpoints.models import Checkpoint, Message, Session
from core.llm import LLMError
from memory.llm import llm_config_set
from memory.models import ExtractionJob
from projects.models import Project
from projects.services import api_key_create

from .conftest import key_client
from .openai_server import Fail, OpenAIStub


def post(client, session_id, messages, **body):
    return client.post(
        f"/api/v1/sessions/{session_id}/messages", {"messages": messages, **body}, format="json"
    )


def turn(n: int) -> list[dict]:
    return [{"role": "human" if i % 2 == 0 else "ai", "content": f"message number {i:03d}"} for i in range(n)]


def append(org, session_id, messages, user_id="u1"):
    return services.messages_append(
        org=org, session_id=session_id, user_id=user_id, messages=messages, extract=False
    )


def test_it_appends_a_turn_and_queues_extraction(key_a, org_a):
    _, client = key_a
    response = post(
        client,
        "s-1",
        [
            {"role": "human", "content": "请记住，我对花生过敏，点餐时注意", "message_id": "m1"},
            {"role": "ai", "content": "好的，我记住了。", "message_id": "m2"},
        ],
        user_id="u1",
        agent_id="chef",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert [m["message_id"] for m in body["messages"]] == ["m1", "m2"]
    session = Session.objects.get(org=org_a, session_id="s-1")
    assert (session.user_id, session.agent_id, session.status) == ("u1", "chef", "active")
    assert Message.objects.filter(session=session).count() == 2
    job = ExtractionJob.objects.get(pk=body["extraction_job"]["id"])
    assert (job.status, job.user_id, job.session_id, job.agent_id) == ("pending", "u1", "s-1", "chef")
    assert [m["message_id"] for m in job.messages] == ["m1", "m2"]

    detail = client.get("/api/v1/sessions/s-1").json()
    assert [m["content"] for m in detail["messages"]][0].startswith("请记住")
    assert detail["summary"] == "" and detail["message_count"] == 2


def test_it_does_not_queue_extraction_when_asked_not_to_or_without_user_messages(key_a, org_a):
    _, client = key_a
    assert post(client, "s-2", turn(2), user_id="u1", extract=False).json()["extraction_job"] is None
    assert (
        post(client, "s-2", [{"role": "ai", "content": "only the assistant spoke"}], user_id="u1").json()[
            "extraction_job"
        ]
        is None
    )
    assert not ExtractionJob.objects.filter(org=org_a).exists()


def test_it_stores_a_repeated_message_id_once(key_a, org_a):
    _, client = key_a
    post(
        client, "s-3", [{"role": "human", "content": "hello there, friend", "message_id": "x"}], user_id="u1"
    )
    again = post(
        client, "s-3", [{"role": "human", "content": "hello there, friend", "message_id": "x"}], user_id="u1"
    )
    assert again.status_code == 201
    assert again.json()["duplicates"] == 1 and again.json()["extraction_job"] is None
    assert Message.objects.filter(session__session_id="s-3").count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [], "user_id": "u1"},
        {"messages": [{"role": "robot", "content": "hi"}], "user_id": "u1"},
        {"messages": [{"role": "human", "content": "hi", "extra": 1}], "user_id": "u1"},
        {"messages": [{"role": "human", "content": "hi"}], "user_id": "u1", "unknown": True},
        {"messages": [{"role": "human", "content": "hi"}]},  # an API key must name the subject
        {"messages": "hi", "user_id": "u1"},
    ],
)
def test_it_rejects_bad_input_and_writes_nothing(key_a, org_a, body):
    _, client = key_a
    response = client.post("/api/v1/sessions/s-bad/messages", body, format="json")
    assert response.status_code == 400, response.content
    assert "message" in response.json()["error"]
    assert not Session.objects.filter(org=org_a).exists()


def test_it_keeps_a_session_to_its_subject(
    alice_client, bob_client, charlie_client, key_a, key_b, alice, bob
):
    created = post(alice_client, "alice-s", turn(2))
    assert created.status_code == 201
    assert created.json()["session"]["user_id"] == "alice"
    # An account writes only for itself; someone else's session does not exist for it.
    assert post(alice_client, "other", turn(2), user_id="bob").status_code == 404
    assert bob_client.get("/api/v1/sessions/alice-s").status_code == 404
    assert post(bob_client, "alice-s", turn(2)).status_code == 404
    assert bob_client.delete("/api/v1/sessions/alice-s").status_code == 404
    assert charlie_client.get("/api/v1/sessions/alice-s").status_code == 404
    assert key_b[1].get("/api/v1/sessions/alice-s").status_code == 404
    # An org key acts for any subject, but cannot move a session to another one.
    assert key_a[1].get("/api/v1/sessions/alice-s").status_code == 200
    assert post(key_a[1], "alice-s", turn(2), user_id="bob").status_code == 409
    assert Message.objects.filter(session__session_id="alice-s").count() == 2
    assert [s["session_id"] for s in bob_client.get("/api/v1/sessions").json()["results"]] == []
    assert [s["session_id"] for s in alice_client.get("/api/v1/sessions").json()["results"]] == ["alice-s"]


def test_it_lists_filters_and_deletes_sessions(key_a, org_a):
    _, client = key_a
    post(client, "a", turn(2), user_id="u1")
    post(client, "b", turn(2), user_id="u2")
    listed = client.get("/api/v1/sessions", {"user_id": "u2"}).json()["results"]
    assert [s["session_id"] for s in listed] == ["b"]
    assert client.delete("/api/v1/sessions/a").status_code == 204
    assert not Session.objects.filter(org=org_a, session_id="a").exists()
    assert not Message.objects.filter(session__session_id="a").exists()
    assert client.get("/api/v1/sessions/a").status_code == 404


def test_it_queues_compression_only_past_the_window(org_a, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        append(org_a, "w", turn(30))
    assert len(callbacks) == 0
    with django_capture_on_commit_callbacks() as callbacks:
        append(org_a, "w", turn(1))
    assert len(callbacks) == 1
    # While no compression has run, one more is queued per ten messages, not one per message.
    queued = []
    for _ in range(20):
        with django_capture_on_commit_callbacks() as callbacks:
            append(org_a, "w", turn(1))
        queued.append(len(callbacks))
    assert queued == [0] * 9 + [1] + [0] * 9 + [1]


def test_it_compresses_to_the_newest_20_and_summarizes_recursively(org_a):
    session, _, _ = append(org_a, "long", turn(31))
    result = services.session_compress(session_pk=session.pk)
    assert result == {"folded": 11, "method": "truncate"}
    session.refresh_from_db()
    kept = list(Message.objects.filter(session=session).values_list("content", flat=True))
    assert kept == [f"message number {i:03d}" for i in range(11, 31)]
    assert "message number 000" in session.summary and "message number 010" in session.summary
    assert "message number 011" not in session.summary
    assert session.summarized_count == 11

    more = [{"role": "human", "content": f"later message {i:03d}"} for i in range(11)]
    append(org_a, "long", more)
    assert services.session_compress(session_pk=session.pk)["folded"] == 11
    session.refresh_from_db()
    # Recursive: the new summary holds the old one and the newly folded messages.
    assert "message number 000" in session.summary and "message number 021" in session.summary
    assert session.summarized_count == 22
    assert Message.objects.filter(session=session).count() == 20
    # Nothing to do inside the window.
    assert services.session_compress(session_pk=session.pk) == {"folded": 0}


def test_it_caps_the_truncated_summary_at_4000_characters(org_a):
    session, _, _ = append(
        org_a, "big", [{"role": "human", "content": "x" * 500 + f" {i}"} for i in range(31)]
    )
    services.session_compress(session_pk=session.pk)
    session.refresh_from_db()
    assert len(session.summary) == 4000
    assert session.summary.endswith("x 10")  # the newest folded text survives the cut


def test_it_summarizes_with_the_model_recursively(org_a):
    with OpenAIStub() as stub:
        llm_config_set(org=org_a, base_url=stub.base_url, model="chat", api_key="sk-test-0123456789abcdef")
        stub.chat_replies.extend(["摘要一：用户喜欢表格。", "摘要二：用户喜欢表格，住在上海。"])
        session, _, _ = append(org_a, "llm", turn(31))
        assert services.session_compress(session_pk=session.pk)["method"] == "llm"
        append(org_a, "llm", turn(11))
        services.session_compress(session_pk=session.pk)
        session.refresh_from_db()
        assert session.summary == "摘要二：用户喜欢表格，住在上海。"
        second_prompt = stub.requests[1]["body"]["messages"][-1]["content"]
        assert "摘要一：用户喜欢表格。" in second_prompt  # the old summary is folded into the new one
        assert "保留事实、偏好、结论、待办和约束" in stub.requests[0]["body"]["messages"][0]["content"]


def test_it_drops_nothing_when_the_summary_cannot_be_made(org_a):
    with OpenAIStub() as stub:
        llm_config_set(org=org_a, base_url=stub.base_url, model="chat")
        stub.chat_replies.append(Fail(500))
        session, _, _ = append(org_a, "down", turn(31))
        with pytest.raises(LLMError):
            services.session_compress(session_pk=session.pk)
        session.refresh_from_db()
        assert Message.objects.filter(session=session).count() == 31
        assert session.summary == "" and session.summarized_count == 0
        # The task's last attempt folds without the model.
        assert services.session_compress(session_pk=session.pk, use_llm=False)["folded"] == 11
        assert Message.objects.filter(session=session).count() == 20


def test_it_retries_the_summary_through_celery_and_folds_without_the_model_at_last(org_a, celery_retries):
    """session_compress's retries are Celery's (up to base·2^retries seconds, full jitter); its third and
    last attempt folds with the rule summary, so the window cannot grow while the model is down."""
    from django.conf import settings

    from checkpoints.tasks import session_compress

    with OpenAIStub() as stub:
        llm_config_set(org=org_a, base_url=stub.base_url, model="chat")
        stub.chat_replies.extend([Fail(500), Fail(500), Fail(500)])
        session, _, _ = append(org_a, "down-task", turn(31))
        result = session_compress.apply(args=[session.pk])
        assert len([r for r in stub.requests if r["path"].endswith("/chat/completions")]) == 2
    assert result.state == "SUCCESS" and result.result["folded"] == 11
    session.refresh_from_db()
    assert session.summarized_count == 11 and "message number 010" in session.summary
    assert Message.objects.filter(session=session).count() == 20
    base = settings.EXTRACTION_RETRY_BACKOFF
    waits = [when for name, when in celery_retries if name == "checkpoints.tasks.session_compress"]
    assert len(waits) == 2 and all(0 <= w <= max(1, base) * 2**n for n, w in enumerate(waits)), waits


def test_it_expires_idle_sessions_but_keeps_their_checkpoints(org_a, key_a):
    old, _, _ = append(org_a, "idle", turn(4))
    fresh, _, _ = append(org_a, "fresh", turn(4))
    Session.objects.filter(pk=old.pk).update(
        last_activity_at=timezone.now() - timedelta(days=8), summary="earlier", summarized_count=3
    )
    services.checkpoint_save(org=org_a, session_id="idle", user_id="u1", agent_state={"step": 1})
    Session.objects.filter(pk=old.pk).update(last_activity_at=timezone.now() - timedelta(days=8))

    assert services.sessions_expire() == 1
    old.refresh_from_db()
    fresh.refresh_from_db()
    assert (old.status, old.summary, old.summarized_count) == ("expired", "", 0)
    assert not Message.objects.filter(session=old).exists()
    assert Checkpoint.objects.filter(session=old).count() == 1
    assert fresh.status == "active" and Message.objects.filter(session=fresh).count() == 4

    # A new message revives the session, with a fresh window.
    append(org_a, "idle", turn(1))
    old.refresh_from_db()
    assert old.status == "active" and Message.objects.filter(session=old).count() == 1


def test_it_refuses_writes_with_a_read_only_key_and_keeps_restricted_keys_to_their_projects(
    key_a, org_a, project
):
    _, secret = api_key_create(org=org_a, name="reader", read_only=True)
    reader = key_client(secret)
    assert post(reader, "ro", turn(2), user_id="u1").status_code == 403
    assert reader.put("/api/v1/sessions/ro/checkpoints", {"user_id": "u1"}, format="json").status_code == 403
    assert not Session.objects.filter(org=org_a, session_id="ro").exists()

    Project.objects.create(org=org_a, name="Other", slug="other")
    post(key_a[1], "in-atlas", turn(2), user_id="u1", project="atlas")
    post(key_a[1], "in-other", turn(2), user_id="u1", project="other")
    _, secret = api_key_create(org=org_a, name="atlas-only", projects=[project])
    atlas_only = key_client(secret)
    assert atlas_only.get("/api/v1/sessions/in-atlas").status_code == 200
    assert atlas_only.get("/api/v1/sessions/in-other").status_code == 404
    listed = [s["session_id"] for s in atlas_only.get("/api/v1/sessions").json()["results"]]
    assert listed == ["in-atlas"]
    assert post(atlas_only, "x", turn(2), user_id="u1", project="other").status_code == 404


def test_it_accepts_an_assistant_turn_without_text(key_a):
    response = post(
        key_a[1], "tools", [{"role": "ai", "content": ""}, {"role": "tool", "content": "42"}], user_id="u1"
    )
    assert response.status_code == 201 and len(response.json()["messages"]) == 2


@pytest.fixture
def broker_down():
    """The Celery app publishes to a closed port for the duration of the test (Redis is down)."""
    import socket

    from config.celery import app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    before = app.conf.broker_write_url
    app.conf.broker_write_url = f"redis://127.0.0.1:{closed}/0"
    # Both pools hold connections: a producer pool left on the closed port fails later tests' sends.
    app._pool = app.amqp._producer_pool = None
    try:
        yield
    finally:
        app.conf.broker_write_url = before
        app._pool = app.amqp._producer_pool = None


def test_it_answers_a_stored_turn_while_the_broker_is_down(
    key_a, org_a, broker_down, django_capture_on_commit_callbacks
):
    _, client = key_a
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, "s-down", [{"role": "human", "content": "I moved to Bristol"}], user_id="u1")
    assert response.status_code == 201, response.content
    job = ExtractionJob.objects.get(pk=response.json()["extraction_job"]["id"])
    assert job.status == "pending"  # the sweep sends it again once the broker is back
    assert Message.objects.filter(session__session_id="s-down").count() == 1
