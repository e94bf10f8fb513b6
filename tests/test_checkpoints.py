"""Checkpoints (episodic memory, seed 000): save, resume, approve/reject pending tool calls, archive, restore."""

from datetime import timedelta

from django.utils import timezone

from checkpoints import services
from checkpoints.models import Checkpoint, CheckpointArchive, Session

CALLS = [
    {"id": "call_1", "type": "function", "function": {"name": "send_email", "arguments": '{"to": "a@b.c"}'}},
    {
        "id": "call_2",
        "type": "function",
        "function": {"name": "delete_file", "arguments": '{"path": "/tmp/x"}'},
    },
]


def save(client, session_id="run-1", **body):
    body.setdefault("user_id", "u1")
    return client.put(f"/api/v1/sessions/{session_id}/checkpoints", body, format="json")


def test_it_saves_and_resumes_the_latest_checkpoint(key_a, org_a):
    _, client = key_a
    first = save(
        client, messages=[{"role": "user", "content": "研究 LangGraph"}], agent_state={"todo": ["a", "b"]}
    )
    assert first.status_code == 201, first.content
    second = save(
        client,
        messages=[{"role": "user", "content": "研究 LangGraph"}, {"role": "assistant", "content": "..."}],
        agent_state={"todo": ["b"]},
        tool_states={"search": {"page": 2}},
        pending_tool_calls=CALLS,
        parent=first.json()["id"],
        metadata={"step": 2},
    )
    assert second.status_code == 201, second.content
    latest = client.get("/api/v1/sessions/run-1/checkpoints/latest").json()
    assert latest["id"] == second.json()["id"]
    assert latest["parent"] == first.json()["id"]
    assert latest["agent_state"] == {"todo": ["b"]} and latest["tool_states"] == {"search": {"page": 2}}
    assert [c["id"] for c in latest["pending_tool_calls"]] == ["call_1", "call_2"]
    assert latest["archived"] is False
    listed = client.get("/api/v1/sessions/run-1/checkpoints").json()["results"]
    assert [c["id"] for c in listed] == [second.json()["id"], first.json()["id"]]
    assert client.get(f"/api/v1/checkpoints/{first.json()['id']}").json()["agent_state"] == {
        "todo": ["a", "b"]
    }
    assert Checkpoint.objects.filter(org=org_a, session__session_id="run-1").count() == 2


def test_it_rejects_bad_checkpoints_and_writes_nothing(key_a, org_a):
    _, client = key_a
    save(client, "other-run")
    foreign = Checkpoint.objects.get(session__session_id="other-run").pk
    cases = [
        {"pending_tool_calls": [{"function": {"name": "x"}}]},  # no id
        {"pending_tool_calls": [{"id": "a"}, {"id": "a"}]},
        {"parent": foreign},  # a checkpoint of another session
        {"agent_state": "not an object"},
        {"surprise": 1},
    ]
    for body in cases:
        response = save(client, "run-x", **body)
        assert response.status_code == 400, (body, response.content)
        assert response.json()["error"]["message"]
    assert not Checkpoint.objects.filter(session__session_id="run-x").exists()


def test_it_approves_and_rejects_pending_tool_calls_in_new_checkpoints(key_a):
    _, client = key_a
    base = save(client, pending_tool_calls=CALLS, agent_state={"todo": ["send"]}).json()
    approved = client.post(
        f"/api/v1/checkpoints/{base['id']}/approve", {"tool_call_ids": ["call_1"]}, format="json"
    )
    assert approved.status_code == 201, approved.content
    body = approved.json()
    assert body["parent"] == base["id"] and body["agent_state"] == {"todo": ["send"]}
    assert [c["id"] for c in body["pending_tool_calls"]] == ["call_2"]
    decision = body["metadata"]["decisions"][0]
    assert (decision["tool_call_id"], decision["decision"]) == ("call_1", "approved")
    assert decision["tool_call"]["function"]["name"] == "send_email"

    # Only the latest checkpoint can be decided on; the older one is history.
    stale = client.post(f"/api/v1/checkpoints/{base['id']}/reject", {}, format="json")
    assert stale.status_code == 409
    unknown = client.post(
        f"/api/v1/checkpoints/{body['id']}/reject", {"tool_call_ids": ["nope"]}, format="json"
    )
    assert unknown.status_code == 400

    rejected = client.post(
        f"/api/v1/checkpoints/{body['id']}/reject", {"comment": "不要删文件"}, format="json"
    )
    assert rejected.status_code == 201
    final = rejected.json()
    assert final["pending_tool_calls"] == []
    assert [(d["tool_call_id"], d["decision"], d["comment"]) for d in final["metadata"]["decisions"]] == [
        ("call_2", "rejected", "不要删文件")
    ]
    assert client.get("/api/v1/sessions/run-1/checkpoints/latest").json()["id"] == final["id"]
    assert Checkpoint.objects.filter(session__session_id="run-1").count() == 3
    nothing_left = client.post(f"/api/v1/checkpoints/{final['id']}/approve", {}, format="json")
    assert nothing_left.status_code == 400


def test_it_keeps_checkpoints_to_their_subject(alice_client, bob_client, charlie_client, key_b, alice, bob):
    created = save(alice_client, "alice-run", user_id="alice", pending_tool_calls=CALLS)
    assert created.status_code == 201
    pk = created.json()["id"]
    assert save(bob_client, "alice-run", user_id="bob").status_code == 404
    for client in (bob_client, charlie_client, key_b[1]):
        assert client.get(f"/api/v1/checkpoints/{pk}").status_code == 404
        assert client.get("/api/v1/sessions/alice-run/checkpoints/latest").status_code == 404
        assert client.post(f"/api/v1/checkpoints/{pk}/approve", {}, format="json").status_code == 404
    assert Checkpoint.objects.filter(session__session_id="alice-run").count() == 1


def _age(checkpoint_ids, days=40):
    Checkpoint.objects.filter(pk__in=checkpoint_ids).update(created_at=timezone.now() - timedelta(days=days))


def test_it_archives_old_checkpoints_but_never_the_latest_of_a_live_session(key_a, org_a):
    _, client = key_a
    ids = [save(client, agent_state={"step": i}, parent=None).json()["id"] for i in range(3)]
    other = save(client, "ended", agent_state={"step": "end"}).json()["id"]
    _age(ids + [other])
    Session.objects.filter(session_id="ended").update(status="expired")

    assert services.checkpoints_archive() == 3  # ids[0], ids[1] and the ended session's only one
    assert list(Checkpoint.objects.filter(session__session_id="run-1").values_list("pk", flat=True)) == [
        ids[2]
    ]
    archived = CheckpointArchive.objects.get(original_id=ids[0])
    assert archived.org == org_a and len(bytes(archived.payload)) > 0
    assert services.checkpoints_archive() == 0

    # Archived checkpoints stay readable, compressed rows decoded.
    read = client.get(f"/api/v1/checkpoints/{ids[0]}").json()
    assert read["archived"] is True and read["agent_state"] == {"step": 0}
    assert client.get("/api/v1/sessions/ended/checkpoints/latest").json()["agent_state"] == {"step": "end"}
    assert [c["id"] for c in client.get("/api/v1/sessions/run-1/checkpoints/archived").json()["results"]] == [
        ids[1],
        ids[0],
    ]
    # Deciding on an archived checkpoint needs a restore first.
    assert client.post(f"/api/v1/checkpoints/{ids[0]}/approve", {}, format="json").status_code == 409


def test_it_restores_an_archived_checkpoint_as_the_newest(key_a):
    _, client = key_a
    first = save(client, agent_state={"step": 1}, pending_tool_calls=CALLS[:1]).json()["id"]
    second = save(client, agent_state={"step": 2}, parent=first).json()["id"]
    _age([first])
    services.checkpoints_archive()
    # The live child still names its archived parent.
    assert client.get(f"/api/v1/checkpoints/{second}").json()["parent"] == first

    restored = client.post(f"/api/v1/checkpoints/{first}/restore")
    assert restored.status_code == 201, restored.content
    body = restored.json()
    assert body["agent_state"] == {"step": 1} and body["metadata"]["restored_from"] == first
    assert [c["id"] for c in body["pending_tool_calls"]] == ["call_1"]
    latest = client.get("/api/v1/sessions/run-1/checkpoints/latest").json()
    assert latest["id"] == body["id"] and latest["id"] > second
    # Restoring works again from the same archive row; a live checkpoint cannot be "restored".
    assert client.post(f"/api/v1/checkpoints/{second}/restore").status_code == 409
    assert CheckpointArchive.objects.filter(original_id=first).exists()
    # The restored one can be approved like any latest checkpoint.
    assert client.post(f"/api/v1/checkpoints/{body['id']}/approve", {}, format="json").status_code == 201


def test_it_answers_out_of_range_ids_with_client_errors(key_a):
    _, client = key_a
    big = "9" * 30
    assert client.get(f"/api/v1/checkpoints/{big}").status_code == 404
    assert client.get(f"/api/v1/extraction-jobs/{big}").status_code == 404
    assert client.post(f"/api/v1/checkpoints/{big}/restore").status_code == 404
    body = {"user_id": "u1", "project": big, "messages": [{"role": "human", "content": "hi"}]}
    assert client.post("/api/v1/sessions/s/messages", body, format="json").status_code == 404
    assert save(client, "s2", parent=int(big)).status_code == 400
    assert not Session.objects.exists()
