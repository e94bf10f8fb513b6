"""Pausing memory (per subject, per conversation) and feedback on memories (useful / wrong / outdated)."""

import pytest
from django.test import override_settings

from memory.extraction.services import extraction_job_run
from memory.feedback import signal
from memory.models import ExtractionJob, InjectionLog, MemoryFeedback, MemoryItem, MemoryPause
from memory.search.ranking import Hit, final_score
from projects.models import ApiKey

from .factories import MemoryItemFactory


def _add(client, content, **extra):
    return client.post("/api/v1/memories", {"content": content, **extra}, format="json")


# ---- pause ------------------------------------------------------------------------------------------


def test_a_paused_subject_stores_nothing_on_any_surface_while_search_and_context_work(key_a, org_a):
    _, client = key_a
    kept = _add(client, "Ursula prefers green tea in the morning", user_id="ursula")
    assert kept.status_code == 201
    state = client.put("/api/v1/users/ursula/memory-pause", {}, format="json")
    assert state.status_code == 200 and state.json()["paused"] is True and state.json()["paused_at"]

    single = _add(client, "Ursula moved to Hangzhou last spring", user_id="ursula")
    assert single.status_code == 200
    assert single.json()["status"] == "paused" and single.json()["paused"] == "subject"
    assert single.json()["stored"] == 0
    agent = client.post(
        "/api/v1/agents/helper/memories",
        {"content": "Ursula runs on Sundays", "userId": "ursula"},
        format="json",
    )
    assert agent.status_code == 200 and agent.json()["status"] == "paused"
    batch = client.post(
        "/api/v1/memories/batch",
        {"memories": [{"content": "Ursula plays the cello", "user_id": "ursula"}] * 2},
        format="json",
    )
    assert batch.status_code == 200
    assert batch.json()["status"] == "paused" and batch.json()["paused"] == 2 and batch.json()["created"] == 0
    assert {r["status"] for r in batch.json()["results"]} == {"paused"}
    tool = client.post(
        "/api/v1/tools/memory_add/invoke",
        {"arguments": {"content": "Ursula is allergic to cats"}, "user_id": "ursula"},
        format="json",
    )
    assert tool.status_code == 200 and tool.json()["result"]["status"] == "paused"
    # MCP (its own process): tests/test_mcp.py::test_a_paused_subject_gets_paused_and_nothing_is_stored
    assert list(MemoryItem.objects.filter(org=org_a).values_list("content", flat=True)) == [
        "Ursula prefers green tea in the morning"
    ]

    found = client.post("/api/v1/memories/search", {"query": "green tea", "user_id": "ursula"}, format="json")
    assert found.status_code == 200 and found.json()["results"][0]["content"].startswith("Ursula prefers")
    context = client.post("/api/v1/context", {"query": "tea", "user_id": "ursula"}, format="json")
    assert context.status_code == 200 and context.json()["relevant"]

    # Another subject of the org is not paused.
    assert _add(client, "Victor collects stamps", user_id="victor").status_code == 201
    resumed = client.delete("/api/v1/users/ursula/memory-pause")
    assert resumed.status_code == 200 and resumed.json()["paused"] is False
    assert _add(client, "Ursula moved to Hangzhou last spring", user_id="ursula").status_code == 201


def test_a_conversation_with_memory_off_stores_nothing_from_it_and_queues_no_extraction(key_a, org_a):
    _, client = key_a
    state = client.put("/api/v1/users/wen/memory-pause", {"session_id": "temp-1"}, format="json")
    assert state.json()["paused"] is False
    assert [s["session_id"] for s in state.json()["sessions"]] == ["temp-1"]

    in_it = _add(
        client, "Wen is planning a surprise party", user_id="wen", scope="session", session_id="temp-1"
    )
    assert in_it.status_code == 200 and in_it.json() == {
        **in_it.json(),
        "status": "paused",
        "paused": "session",
    }
    elsewhere = _add(
        client, "Wen is planning a trip to Kyoto", user_id="wen", scope="session", session_id="s-2"
    )
    assert elsewhere.status_code == 201

    turn = {"user_id": "wen", "messages": [{"role": "human", "content": "记住：我每天早上跑步五公里"}]}
    off = client.post("/api/v1/sessions/temp-1/messages", turn, format="json")
    assert off.status_code == 201
    assert off.json()["memory_paused"] == "session" and off.json()["extraction_job"] is None
    assert len(off.json()["messages"]) == 1  # the conversation itself is kept
    on = client.post("/api/v1/sessions/s-3/messages", turn, format="json")
    assert on.json()["memory_paused"] is None and on.json()["extraction_job"] is not None

    cleared = client.delete("/api/v1/users/wen/memory-pause?session_id=temp-1")
    assert cleared.json()["sessions"] == []


def test_a_job_queued_before_the_pause_extracts_nothing(key_a, org_a):
    _, client = key_a
    turn = {
        "user_id": "xia",
        "messages": [{"role": "human", "content": "记住：我对花生过敏，以后推荐菜的时候注意"}],
    }
    with override_settings(CELERY_TASK_ALWAYS_EAGER=False):
        answer = client.post("/api/v1/sessions/s-x/messages", turn, format="json")
    job = ExtractionJob.objects.get(pk=answer.json()["extraction_job"]["id"])
    MemoryPause.objects.create(org=org_a, user_id="xia")
    ExtractionJob.objects.filter(pk=job.pk).update(status="pending", attempts=0, result={})
    MemoryItem.objects.filter(org=org_a, user_id="xia").delete()
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert job.result["paused"] == "subject" and job.result["added"] == []
    assert not MemoryItem.objects.filter(org=org_a, user_id="xia").exists()


def test_who_may_pause(alice_client, bob_client, key_a, org_a):
    assert alice_client.put("/api/v1/users/alice/memory-pause", {}, format="json").status_code == 200
    assert bob_client.get("/api/v1/users/alice/memory-pause").status_code == 404
    assert bob_client.put("/api/v1/users/alice/memory-pause", {}, format="json").status_code == 404
    assert bob_client.put("/api/v1/users/bob/memory-pause", {"bogus": 1}, format="json").status_code == 400
    key, client = key_a
    ApiKey.objects.filter(pk=key.pk).update(read_only=True)
    assert client.get("/api/v1/users/alice/memory-pause").json()["paused"] is True
    assert client.delete("/api/v1/users/alice/memory-pause").status_code == 403
    # A conversation of another person cannot be switched off under one's own name.
    alice_client.post(
        "/api/v1/sessions/alice-s/messages",
        {"messages": [{"role": "human", "content": "hello there, how are you"}], "extract": False},
        format="json",
    )
    assert (
        bob_client.put("/api/v1/users/bob/memory-pause", {"session_id": "alice-s"}, format="json").status_code
        == 404
    )


def test_the_web_add_form_says_memory_is_paused(alice, org_a, client):
    client.force_login(alice)
    MemoryPause.objects.create(org=org_a, user_id="alice")
    page = client.post(
        "/memories/add/",
        {"content": "I like long walks by the river", "memory_type": "preference", "visibility": "members"},
    )
    assert "Memory is paused for this person" in page.content.decode()
    assert not MemoryItem.objects.filter(org=org_a).exists()


# ---- feedback ---------------------------------------------------------------------------------------


def test_signal_is_bounded_and_each_person_counts_once():
    assert signal([]) == 0
    assert signal(["useful"]) == 0.5 and signal(["wrong"]) == -0.5 and signal(["outdated"]) == -0.5
    assert signal(["useful"] * 1000) < 1 and signal(["wrong"] * 1000) > -1
    assert signal(["useful", "wrong"]) == 0


def test_feedback_adjusts_the_score_by_a_small_bounded_amount():
    def hit(feedback, relevance):
        h = Hit(
            row={"id": 1, "confidence": 0.9, "scope": "user", "feedback": feedback},
            vector_similarity=None,
            keyword_raw=0,
        )
        h.relevance = relevance
        final_score(h)
        return h.score

    assert hit(0.5, 0.6) - hit(0.0, 0.6) == pytest.approx(0.025)
    assert hit(-0.5, 0.6) - hit(0.0, 0.6) == pytest.approx(-0.025)
    assert hit(5.0, 0.6) - hit(0.0, 0.6) == pytest.approx(0.05)  # clipped: never more than the weight
    # Unanimous praise cannot lift a weak match over a clearly better one.
    assert hit(1.0, 0.3) < hit(-1.0, 0.6)


def test_feedback_is_recorded_once_per_person_and_moves_search(alice_client, bob_client, org_a, key_a):
    a = MemoryItemFactory(org=org_a, user_id="alice", content="Alice drinks oolong tea every afternoon")
    b = MemoryItemFactory(org=org_a, user_id="alice", content="Alice drinks oolong tea after lunch")
    query = {"query": "oolong tea", "user_id": "alice", "explain": True}
    before = {
        r["id"]: r["score"]
        for r in alice_client.post("/api/v1/memories/search", query, format="json").json()["results"]
    }
    context = alice_client.post(
        "/api/v1/context", {"query": "oolong tea", "user_id": "alice"}, format="json"
    ).json()
    injection = context["injection_id"]

    given = alice_client.post(
        f"/api/v1/memories/{b.pk}/feedback", {"value": "useful", "injection": injection}, format="json"
    )
    assert given.status_code == 201, given.json()
    assert given.json()["memory_feedback"] == 0.5 and given.json()["injection"] == injection
    again = alice_client.post(f"/api/v1/memories/{b.pk}/feedback", {"value": "useful"}, format="json")
    assert again.json()["memory_feedback"] == 0.5  # the same person again: still counted once
    wrong = alice_client.post(
        f"/api/v1/memories/{a.pk}/feedback", {"value": "wrong", "note": "I stopped"}, format="json"
    )
    assert wrong.json()["memory_feedback"] == -0.5
    after = alice_client.post("/api/v1/memories/search", query, format="json").json()["results"]
    scores = {r["id"]: r for r in after}
    assert scores[b.pk]["score"] - before[b.pk] == pytest.approx(0.025, abs=2e-4)
    assert scores[a.pk]["score"] - before[a.pk] == pytest.approx(-0.025, abs=2e-4)
    assert scores[b.pk]["explain"]["feedback"] == 0.5
    listed = alice_client.get(f"/api/v1/memories/{b.pk}/feedback").json()
    assert [r["value"] for r in listed["results"]] == ["useful", "useful"]

    # Only the person the memory is about; others get 404, bad input 400.
    assert (
        bob_client.post(f"/api/v1/memories/{a.pk}/feedback", {"value": "useful"}, format="json").status_code
        == 404
    )
    assert (
        alice_client.post(f"/api/v1/memories/{a.pk}/feedback", {"value": "meh"}, format="json").status_code
        == 400
    )
    other = InjectionLog.objects.create(org=org_a, user_id="alice", memory_ids=[b.pk])
    mismatch = alice_client.post(
        f"/api/v1/memories/{a.pk}/feedback", {"value": "useful", "injection": other.pk}, format="json"
    )
    assert mismatch.status_code == 400 and "injection" in mismatch.json()["error"]["message"]
    _, client = key_a
    nobody = client.post(f"/api/v1/memories/{a.pk}/feedback", {"value": "useful"}, format="json")
    assert nobody.status_code == 400 and "user_id" in nobody.json()["error"]["message"]
    not_about = client.post(
        f"/api/v1/memories/{a.pk}/feedback", {"value": "useful", "user_id": "bob"}, format="json"
    )
    assert not_about.status_code == 400
    by_key = client.post(
        f"/api/v1/memories/{a.pk}/feedback", {"value": "useful", "user_id": "alice"}, format="json"
    )
    assert by_key.status_code == 201 and by_key.json()["memory_feedback"] == 0.5  # alice's latest word


def test_forget_takes_the_feedback_and_leaves_the_pause(alice_client, org_a, project):
    own = MemoryItemFactory(org=org_a, user_id="alice", content="Alice keeps a paper diary")
    shared = MemoryItemFactory(
        org=org_a, project=project, scope="project", visibility="public", content="Atlas ships on Fridays"
    )
    alice_client.post(f"/api/v1/memories/{own.pk}/feedback", {"value": "useful"}, format="json")
    alice_client.post(f"/api/v1/memories/{shared.pk}/feedback", {"value": "outdated"}, format="json")
    shared.refresh_from_db()
    assert shared.feedback == -0.5
    alice_client.put("/api/v1/users/alice/memory-pause", {}, format="json")
    exported = alice_client.get("/api/v1/users/alice/export").json()
    assert sorted(f["value"] for f in exported["feedback"]) == ["outdated", "useful"]
    forgotten = alice_client.delete("/api/v1/users/alice").json()
    assert forgotten["deleted"]["MemoryFeedback"] == 2
    assert not MemoryFeedback.objects.filter(org=org_a).exists()
    shared.refresh_from_db()
    assert shared.feedback == 0  # the project memory stays, without her word
    assert alice_client.get("/api/v1/users/alice/memory-pause").json()["paused"] is True


def test_the_staff_statistics_count_feedback_and_pauses_without_content(alice_client, org_a):
    from django.test import Client

    from .factories import AccountFactory

    a = MemoryItemFactory(org=org_a, user_id="alice", content="Alice's very private health note")
    for value in ("useful", "wrong", "wrong"):
        assert (
            alice_client.post(
                f"/api/v1/memories/{a.pk}/feedback", {"value": value}, format="json"
            ).status_code
            == 201
        )
    MemoryPause.objects.create(org=org_a, user_id="alice", session_id="s-1")
    staff = Client()
    staff.force_login(AccountFactory(username="staff", is_staff=True, is_superuser=True))
    response = staff.get("/admin/projects/organization/statistics/")
    stats = response.context["stats"]
    assert dict(stats["feedback"]) == {"useful": 1, "wrong": 2, "outdated": 0}
    assert stats["pauses"] == {"subjects paused": 0, "conversations not remembered": 1}
    assert "private health note" not in response.content.decode()


def test_a_new_markdown_bullet_is_refused_while_paused_and_nothing_is_applied(alice_client, org_a):
    doc = alice_client.get("/api/v1/memories/markdown").json()
    MemoryPause.objects.create(org=org_a, user_id="alice")
    document = doc["document"].rstrip() + "\n\n## Preferences\n\n- Alice likes quiet trains\n"
    answer = alice_client.put(
        "/api/v1/memories/markdown", {"document": document, "base_version": doc["version"]}, format="json"
    )
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "paused"
    assert "Line" in answer.json()["error"]["message"]
    assert not MemoryItem.objects.filter(org=org_a).exists()
