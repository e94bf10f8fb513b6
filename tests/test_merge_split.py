"""A merge never loses anything: what came in is recorded on the merge revision, and a false merge is
split back into its own memory through the public API, with revisions on both.

Single adds (similarity and identical text), batches (a stored row and an earlier item of the same
batch), and extraction (the thresholds' merge in a real worker, the model's NOOP) alike.
"""

import json

import pytest
from django.utils.dateparse import parse_datetime

from audit.models import AuditEvent
from memory.extraction.services import extraction_job_run
from memory.models import MemoryItem, MemoryRevision

from .factories import MemoryItemFactory
from .test_extraction_llm import memories, queue, stub  # noqa: F401 (the stub fixture)
from .test_worker import wait_for, worker  # noqa: F401 (the worker fixture)

URL = "/api/v1/memories"

# Every field a second add can bring; none equal to the first add's.
SECOND = {
    "memory_type": "preference",
    "agent_id": "",
    "session_id": "s-late",
    "skill": "",
    "source": "agent",
    "source_id": "crm:4711",
    "source_message_id": "msg-9",
    "confidence": 0.75,
    "visibility": "owner_only",
    "pinned": True,
    "tags": ["late", "editor"],
    "metadata": {"from": "second", "n": 2},
    "occurred_at": "2024-05-01T10:00:00Z",
    "valid_from": "2024-05-01T00:00:00Z",
    "valid_until": "2031-05-01T00:00:00Z",
    "expires_at": "2030-01-01T00:00:00Z",
}
FIELDS = [*SECOND, "content"]
TIMES = ("occurred_at", "valid_from", "valid_until", "expires_at")


def same_fields(body: dict, sent: dict) -> None:
    """Every field that was sent is the stored memory's, times compared as instants."""
    for name in FIELDS:
        got, want = body[name], sent[name]
        if name in TIMES:
            got, want = parse_datetime(got), parse_datetime(want)
        assert got == want, f"{name}: {got!r} != {want!r}"


def history(client, pk) -> list[dict]:
    response = client.get(f"{URL}/{pk}/history")
    assert response.status_code == 200
    return response.json()["results"]


@pytest.mark.parametrize(
    "first,second",
    [
        # A near-identical pair the similarity dedup merges.
        ("The user prefers dark mode in every editor.", "The user prefers dark mode in every editor!"),
        # The same text, everything else different: merged by content hash.
        ("The user prefers dark mode in every editor.", "The user prefers dark mode in every editor."),
    ],
    ids=["similar", "identical"],
)
def test_it_splits_a_false_merge_back_with_nothing_lost(alice_client, alice, first, second):
    original = alice_client.post(URL, {"content": first, "tags": ["ui"]}, format="json").json()
    sent = {**SECOND, "content": second}
    response = alice_client.post(URL, sent, format="json")
    assert response.status_code == 200, response.content
    merged = response.json()
    assert merged["duplicate_of"] == merged["id"] == original["id"]
    assert merged["confirmations"] == 1 and merged["content"] == first
    assert MemoryItem.objects.count() == 1

    revisions = history(alice_client, original["id"])
    assert [r["action"] for r in revisions] == ["add", "merge"]
    merge = revisions[1]
    incoming = merge["incoming"]
    same_fields(incoming, sent)
    assert incoming["actor"] == "account:alice" and incoming["reason"] == merge["reason"]
    assert (incoming["similarity"] is None) == (first == second)
    assert merge["split_into"] is None

    response = alice_client.post(f"{URL}/{original['id']}/split", {"revision": 2}, format="json")
    assert response.status_code == 201, response.content
    split = response.json()
    assert split["split_from"] == original["id"] and split["id"] != original["id"]
    same_fields(split, sent)
    assert (split["scope"], split["user_id"], split["status"]) == ("user", "alice", "active")
    assert split["has_embedding"] is True and split["confirmations"] == 0
    row = MemoryItem.objects.get(pk=split["id"])
    assert row.search_tokens and row.created_by == alice

    kept = alice_client.get(f"{URL}/{original['id']}").json()
    assert kept["content"] == first and kept["confirmations"] == 0 and kept["status"] == "active"
    revisions = history(alice_client, original["id"])
    assert [r["action"] for r in revisions] == ["add", "merge", "split"]
    assert revisions[1]["split_into"] == split["id"]
    assert (revisions[2]["before"]["confirmations"], revisions[2]["after"]["confirmations"]) == (1, 0)
    [added] = history(alice_client, split["id"])
    assert added["action"] == "add" and added["reason"] == f"split from #{original['id']} revision 2"
    assert {"memory.split", "memory.merge"} <= set(AuditEvent.objects.values_list("action", flat=True))

    again = alice_client.post(f"{URL}/{original['id']}/split", {"revision": 2}, format="json")
    assert again.status_code == 409 and str(split["id"]) in again.json()["error"]["message"]
    assert MemoryItem.objects.count() == 2


def test_it_refuses_what_cannot_be_split(alice_client):
    pk = alice_client.post(URL, {"content": "The user prefers dark mode."}, format="json").json()["id"]
    alice_client.post(URL, {"content": "The user prefers dark mode."}, format="json")
    not_merge = alice_client.post(f"{URL}/{pk}/split", {"revision": 1}, format="json")
    assert not_merge.status_code == 400 and "not a merge" in not_merge.json()["error"]["message"]
    missing = alice_client.post(f"{URL}/{pk}/split", {"revision": 7}, format="json")
    assert missing.status_code == 404
    bad = alice_client.post(f"{URL}/{pk}/split", {"revision": "two"}, format="json")
    assert bad.status_code == 400 and "revision" in bad.json()["error"]["message"]
    # A merge written before merges were recorded: nothing to split, said so.
    MemoryRevision.objects.filter(item_ref=pk, number=2).update(incoming=None)
    old = alice_client.post(f"{URL}/{pk}/split", {"revision": 2}, format="json")
    assert old.status_code == 400 and "recorded nothing" in old.json()["error"]["message"]
    assert MemoryItem.objects.count() == 1


def test_it_lets_only_who_may_change_the_memory_split_it(
    alice_client, bob_client, charlie_client, project, org_a
):
    body = {"content": "Atlas ships on Fridays.", "scope": "project", "project": "atlas"}
    pk = alice_client.post(URL, body, format="json").json()["id"]
    assert alice_client.post(URL, {**body, "memory_type": "decision"}, format="json").status_code == 200
    mine = alice_client.post(URL, {"content": "The user likes tea."}, format="json").json()["id"]
    alice_client.post(URL, {"content": "The user likes tea."}, format="json")

    assert bob_client.get(f"{URL}/{pk}/history").status_code == 200  # a viewer reads it...
    assert bob_client.post(f"{URL}/{pk}/split", {"revision": 2}, format="json").status_code == 403
    assert bob_client.post(f"{URL}/{mine}/split", {"revision": 2}, format="json").status_code == 404
    assert charlie_client.post(f"{URL}/{pk}/split", {"revision": 2}, format="json").status_code == 404
    assert MemoryItem.objects.count() == 2
    assert not MemoryRevision.objects.filter(action="split").exists()

    response = alice_client.post(f"{URL}/{pk}/split", {"revision": 2}, format="json")
    assert response.status_code == 201
    split = response.json()
    assert (split["scope"], split["project"], split["memory_type"]) == ("project", project.pk, "decision")


def test_it_does_not_bring_a_secret_back(alice_client):
    """The gate is asked again: a recorded text that would be refused today stays in the history."""
    pk = alice_client.post(URL, {"content": "The user prefers dark mode."}, format="json").json()["id"]
    alice_client.post(URL, {"content": "The user prefers dark mode."}, format="json")
    revision = MemoryRevision.objects.get(item_ref=pk, number=2)
    revision.incoming = {**revision.incoming, "content": "password: hunter2hunter"}
    revision.save()
    response = alice_client.post(f"{URL}/{pk}/split", {"revision": 2}, format="json")
    assert response.status_code == 422 and response.json()["error"]["code"] == "sensitive_content"
    assert MemoryItem.objects.count() == 1 and MemoryRevision.objects.get(pk=revision.pk).split_into is None


def test_it_records_and_splits_batch_merges(key_a):
    _, client = key_a
    stored = client.post(URL, {"content": "User u1 works at a bakery", "user_id": "u1"}, format="json")
    stored = stored.json()
    batch = [
        {"content": "User u1 works at a bakery", "user_id": "u1", "metadata": {"k": "stored"}, "tags": ["a"]},
        {"content": "User u1 drives a blue car", "user_id": "u1"},
        {
            "content": "User u1 drives a blue car",
            "user_id": "u1",
            "memory_type": "event",
            "metadata": {"k": "in-batch"},
            "occurred_at": "2023-03-03T03:03:03Z",
        },
    ]
    response = client.post(f"{URL}/batch", {"memories": batch, "infer": False}, format="json")
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["duplicate", "created", "duplicate"]
    assert results[0]["duplicate_of"] == stored["id"] and results[2]["duplicate_of"] == results[1]["id"]

    for pk, sent in ((stored["id"], batch[0]), (results[1]["id"], batch[2])):
        [add, merge] = history(client, pk)
        assert (add["action"], merge["action"], merge["number"]) == ("add", "merge", 2)
        assert merge["incoming"]["metadata"] == sent["metadata"]
        assert client.get(f"{URL}/{pk}").json()["confirmations"] == 1
        split = client.post(f"{URL}/{pk}/split", {"revision": 2}, format="json")
        assert split.status_code == 201, split.content
        assert (split.json()["content"], split.json()["metadata"]) == (sent["content"], sent["metadata"])
    split = MemoryItem.objects.get(metadata={"k": "in-batch"})
    assert (split.memory_type, split.occurred_at.year) == ("event", 2023)
    assert MemoryItem.objects.get(pk=stored["id"]).tags == ["a"]  # the merge added the tag, as before


def test_it_records_a_similarity_merge_within_a_batch(key_a):
    _, client = key_a
    batch = [
        {"content": "The user prefers dark mode in every editor.", "user_id": "u1"},
        {"content": "The user prefers dark mode in every editor!", "user_id": "u1", "tags": ["t"]},
    ]
    body = {"memories": batch, "infer": False, "dedup": True}
    results = client.post(f"{URL}/batch", body, format="json").json()["results"]
    assert [r["status"] for r in results] == ["created", "duplicate"]
    [_, merge] = history(client, results[0]["id"])
    assert merge["incoming"]["content"] == batch[1]["content"] and merge["incoming"]["similarity"] > 0.9
    split = client.post(f"{URL}/{results[0]['id']}/split", {"revision": 2}, format="json").json()
    assert (split["content"], split["tags"]) == (batch[1]["content"], ["t"])


def test_it_records_what_extraction_merged_in_the_worker(worker, key_a, org_a):  # noqa: F811
    _, client = key_a

    def post(session, message_id):
        text = "请记住，我住在北京的朝阳区"
        body = {"user_id": "u1", "messages": [{"role": "human", "content": text, "message_id": message_id}]}
        response = client.post(f"/api/v1/sessions/{session}/messages", body, format="json")
        assert response.status_code == 201, response.content
        job = wait_for(response.json()["extraction_job"]["id"])
        assert job.status == "done", job.error
        return job

    post("w-1", "m1")
    job = post("w-2", "m2")
    [merged] = job.result["merged"]
    item = MemoryItem.objects.get(pk=merged["id"])
    assert item.confirmations == 1 and item.session_id == "w-1"
    merge = MemoryRevision.objects.get(item_ref=item.pk, action="merge")
    assert merge.incoming["content"] == item.content
    assert (merge.incoming["source"], merge.incoming["source_id"]) == ("auto", f"extraction-job:{job.pk}")
    assert (merge.incoming["session_id"], merge.incoming["source_message_id"]) == ("w-2", "m2")

    response = client.post(f"{URL}/{item.pk}/split", {"revision": merge.number}, format="json")
    assert response.status_code == 201, response.content
    split = response.json()
    assert (split["session_id"], split["source_id"]) == ("w-2", f"extraction-job:{job.pk}")


def test_it_records_the_models_noop_as_a_merge(stub, org_a, key_a):  # noqa: F811
    old = MemoryItemFactory(org=org_a, user_id="u1", content="用户喜欢喝美式咖啡", embedded=True)
    stub.chat_replies.extend(
        [
            memories({"content": "用户喜欢美式咖啡", "memory_type": "preference", "confidence": 0.9}),
            json.dumps({"action": "NOOP", "id": old.pk, "reason": "already known"}),
        ]
    )
    job = queue(org_a, "对了，我喜欢美式咖啡，记得吧")
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert [m["id"] for m in job.result["merged"]] == [old.pk]
    old.refresh_from_db()
    assert old.confirmations == 1 and old.content == "用户喜欢喝美式咖啡"
    merge = MemoryRevision.objects.get(item_ref=old.pk, action="merge")
    assert merge.incoming["content"] == "用户喜欢美式咖啡" and "NOOP" in merge.reason
    assert (merge.incoming["memory_type"], merge.incoming["confidence"]) == ("preference", 0.9)
    assert merge.incoming["similarity"] is not None

    _, client = key_a
    response = client.post(f"{URL}/{old.pk}/split", {"revision": merge.number}, format="json")
    assert response.status_code == 201, response.content
    assert (response.json()["content"], response.json()["source"]) == ("用户喜欢美式咖啡", "auto")
