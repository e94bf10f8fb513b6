"""Deduplication sees only what the caller may read (issue 13, finding 1).

Alice keeps an owner_only note in her project. An Editor of the project (erin) and an org API key add
the same text, or the same text plus "!": for them it is a new memory. The answer names neither the
note's id nor its tags, metadata or similarity, and the note is not changed (no tag merge, no merge
revision). A duplicate the caller may read still merges as before.
"""

import json

import pytest

from checkpoints.services import messages_append
from memory.drafts import MemoryDraft
from memory.extraction.services import extraction_job_run
from memory.models import ExtractionJob, MemoryItem, MemoryRevision
from memory.services import memory_create
from projects.access import actor_for_key, memory_read_q, system_actor_for_job
from projects.models import ProjectRole
from projects.services import api_key_create, org_membership_set, project_member_add

from .conftest import client_for, key_client
from .factories import AccountFactory
from .openai_server import OpenAIStub

TEXT = "The incident review for the payment outage is kept in the ops wiki"
PRIVATE_TAG = "alice-private-tag"
PRIVATE_META = "alice-private-metadata"


@pytest.fixture
def erin(org_a, project, alice_actor):
    """An Editor in alice's project."""
    account = AccountFactory(username="erin")
    org_membership_set(org=org_a, account=account)
    project_member_add(actor=alice_actor, project=project, account=account, role=ProjectRole.EDITOR)
    return account


def alice_note(alice_actor, org_a, project, visibility="owner_only", content=TEXT) -> MemoryItem:
    draft = MemoryDraft(
        content=content,
        scope="project",
        project=project,
        visibility=visibility,
        tags=[PRIVATE_TAG],
        metadata={"note": PRIVATE_META},
    )
    result = memory_create(actor=alice_actor, org=org_a, draft=draft)
    assert result.created and result.item.embedding is not None
    return result.item


def assert_untouched(note: MemoryItem) -> None:
    row = MemoryItem.objects.get(pk=note.pk)
    assert (row.tags, row.version, row.content, row.metadata) == (
        [PRIVATE_TAG],
        note.version,
        TEXT,
        {"note": PRIVATE_META},
    )
    assert list(MemoryRevision.objects.filter(item_ref=note.pk).values_list("action", flat=True)) == ["add"]


def assert_no_leak(body, note: MemoryItem) -> None:
    text = json.dumps(body)
    assert PRIVATE_TAG not in text and PRIVATE_META not in text, body
    assert "similarity" not in text and "duplicate_of" not in text.replace('"duplicate_of": null', ""), body
    ids = {v for k, v in _pairs(body) if k in ("id", "duplicate_of")}
    assert note.pk not in ids, body


def _pairs(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k, v
            yield from _pairs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _pairs(v)


def callers(erin, org_a):
    _, secret = api_key_create(org=org_a, name="agent")
    return {"editor": client_for(erin), "org key": key_client(secret)}


def add(client, surface: str, content: str, project) -> tuple[int, dict]:
    """Add one project memory through a surface; (id of the stored row or None, response body)."""
    payload = {"content": content, "scope": "project", "project": project.pk, "tags": ["x"]}
    if surface == "single":
        response = client.post("/api/v1/memories", payload, format="json")
        assert response.status_code in (200, 201), response.content
        return (response.json()["id"] if response.status_code == 201 else None), response.json()
    if surface.startswith("batch"):
        body = {"memories": [payload], "infer": surface == "batch-infer"}
        response = client.post("/api/v1/memories/batch", body, format="json")
        assert response.status_code == 200, response.content
        [row] = response.json()["results"]
        return (row["id"] if row["status"] == "created" else None), response.json()
    response = client.post(
        "/api/v1/tools/memory_add/invoke",
        {"arguments": {"content": content, "scope": "project"}, "project": str(project.pk), "user_id": "u1"},
        format="json",
    )
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    return (result["id"] if result["status"] == "created" else None), response.json()


SURFACES = ["single", "batch", "batch-infer", "tool"]


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("caller", ["editor", "org key"])
@pytest.mark.parametrize("content", [TEXT + "!", TEXT], ids=["near", "identical"])
def test_it_stores_a_copy_of_a_memory_the_caller_may_not_read_as_a_new_one(
    surface, caller, content, erin, alice_actor, org_a, project
):
    note = alice_note(alice_actor, org_a, project)
    client = callers(erin, org_a)[caller]
    assert client.get(f"/api/v1/memories/{note.pk}").status_code == 404
    new_id, body = add(client, surface, content, project)
    assert new_id is not None and new_id != note.pk, body
    assert_no_leak(body, note)
    assert_untouched(note)
    assert MemoryItem.objects.get(pk=new_id).content == content


def test_it_still_merges_a_duplicate_the_caller_may_read(erin, alice_actor, org_a, project):
    note = alice_note(alice_actor, org_a, project, visibility="members")
    for name, client in callers(erin, org_a).items():
        assert client.get(f"/api/v1/memories/{note.pk}").status_code == 200
        single = client.post(
            "/api/v1/memories",
            {"content": TEXT + "!", "scope": "project", "project": project.pk, "tags": [name]},
            format="json",
        )
        assert single.status_code == 200, single.content
        assert single.json()["duplicate_of"] == note.pk and single.json()["similarity"] > 0.95
        batch = client.post(
            "/api/v1/memories/batch",
            {"memories": [{"content": TEXT, "scope": "project", "project": project.pk}], "infer": False},
            format="json",
        )
        assert batch.json()["results"][0]["duplicate_of"] == note.pk
    row = MemoryItem.objects.get(pk=note.pk)
    assert row.tags == [PRIVATE_TAG, "editor", "org key"]
    assert MemoryItem.objects.filter(project=project).count() == 1
    actions = list(MemoryRevision.objects.filter(item_ref=note.pk).values_list("action", flat=True))
    assert actions == ["add", "merge", "merge", "merge", "merge"]


def test_an_extraction_job_reconciles_only_with_what_its_sender_may_read(alice_actor, org_a, project):
    note = alice_note(alice_actor, org_a, project)
    key, secret = api_key_create(org=org_a, name="agent")
    with OpenAIStub() as stub:
        response = client_for(alice_actor.account).put(
            "/api/v1/llm-config",
            {"base_url": stub.base_url, "model": "stub-chat", "api_key": "sk-x"},
            format="json",
        )
        assert response.status_code == 200
        candidate = {"content": TEXT + "!", "memory_type": "fact", "confidence": 0.95, "scope": "project"}
        stub.chat_replies.append(json.dumps({"memories": [candidate]}))
        _, _, job = messages_append(
            org=org_a,
            session_id="s1",
            user_id="u1",
            project=project,
            created_by_key=key,
            messages=[{"role": "human", "content": "Remember: " + TEXT + "!", "message_id": "m1"}],
        )
        assert extraction_job_run(job_id=job.pk) == "done"
        # The model was not shown alice's note to decide about: one request, the extraction.
        assert len(stub.requests) == 1
    job.refresh_from_db()
    [added] = job.result["added"]
    assert added["id"] != note.pk and job.result["merged"] == job.result["superseded"] == []
    assert str(note.pk) not in json.dumps(job.result)
    assert_untouched(note)


def test_the_system_actor_of_a_job_reads_what_the_jobs_sender_may_read(alice, alice_actor, org_a, project):
    private = alice_note(alice_actor, org_a, project)
    key, _ = api_key_create(org=org_a, name="agent")
    own = memory_create(
        actor=actor_for_key(key),
        org=org_a,
        draft=MemoryDraft(
            content="The key's own private note", scope="project", project=project, visibility="owner_only"
        ),
    ).item
    shared = alice_note(alice_actor, org_a, project, visibility="members", content="A shared note")

    def readable(**job_fields):
        job = ExtractionJob(org=org_a, **job_fields)
        actor = system_actor_for_job(job)
        assert actor.is_system and actor.label == "system"
        return set(MemoryItem.objects.filter(memory_read_q(actor)).values_list("pk", flat=True))

    alice_user_id = alice_actor.user_id
    assert readable(user_id="u1", created_by_key=key) == {own.pk, shared.pk}
    assert readable(user_id=alice_user_id) == {private.pk, shared.pk}
    assert readable(user_id="nobody-with-an-account") == {shared.pk}
