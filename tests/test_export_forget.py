"""Export, import and forgetting a subject: everything about them, in one transaction, nothing left behind."""

import zlib

from django.apps import apps

from checkpoints.models import Checkpoint, CheckpointArchive, Message, Session
from memory.models import EmbeddingConfig, ExtractionJob, InjectionLog, MemoryItem, MemoryRevision
from memory.services import memory_archive, memory_update
from profiles.models import ProfileRevision, UserProfile
from projects.access import system_actor
from projects.models import Organization
from projects.services import api_key_create
from workspace.subjects import NOT_SUBJECT_DATA

from .conftest import key_client
from .factories import MemoryItemFactory


def populate(org, user_id: str, project=None) -> None:
    """One row of every kind about the subject."""
    a = MemoryItemFactory(
        org=org, content=f"{user_id} prefers concise answers", memory_type="preference", user_id=user_id
    )
    b = MemoryItemFactory(org=org, content=f"{user_id} lives in Berlin", user_id=user_id)
    memory_update(actor=system_actor(b.org), item=b, content=f"{user_id} lives in Hamburg")
    old = MemoryItemFactory(
        org=org, content=f"{user_id} used to like tea", memory_type="preference", user_id=user_id
    )
    memory_archive(actor=system_actor(old.org), item=old)
    MemoryItemFactory(
        org=org,
        content=f"{user_id} exports billing as CSV",
        memory_type="habit",
        user_id=user_id,
        skill="billing",
    )
    MemoryItemFactory(
        org=org,
        content=f"{user_id} said the deadline is Friday",
        memory_type="context",
        user_id=user_id,
        scope="session",
        session_id=f"s-{user_id}",
    )
    if project is not None:
        MemoryItemFactory(
            org=org, content=f"{user_id} owns the release checklist", project=project, user_id=user_id
        )
    UserProfile.objects.create(
        org=org,
        user_id=user_id,
        profession="engineer",
        communication_style="concise",
        edited_fields=["profession"],
    )
    ProfileRevision.objects.create(
        org=org, user_id=user_id, actor="aggregation", changes={"profession": ["", "engineer"]}
    )
    session = Session.objects.create(
        org=org, session_id=f"s-{user_id}", user_id=user_id, project=project, summary="so far"
    )
    Message.objects.create(org=org, session=session, user_id=user_id, role="human", content="hello there")
    Message.objects.create(org=org, session=session, user_id=user_id, role="ai", content="hi!")
    first = Checkpoint.objects.create(org=org, session=session, user_id=user_id, agent_state={"step": 1})
    Checkpoint.objects.create(
        org=org, session=session, user_id=user_id, parent=first, agent_state={"step": 2}
    )
    CheckpointArchive.objects.create(
        org=org,
        session=session,
        user_id=user_id,
        original_id=12345,
        payload=zlib.compress(b'{"agent_state": {"step": 0}}'),
        created_at=session.created_at,
    )
    InjectionLog.objects.create(
        org=org, user_id=user_id, kind="context", query="what do I like?", memory_ids=[a.pk]
    )
    ExtractionJob.objects.create(
        org=org, user_id=user_id, messages=[{"role": "human", "content": "hi"}], status="done"
    )
    EmbeddingConfig.objects.create(org=org, user_id=user_id, provider="local", model="multilingual-e5-small")


def subject_models():
    """Every model with a user_id field (the app registry decides, so new models are covered)."""
    return [
        m
        for m in apps.get_models()
        if "user_id" in {f.name for f in m._meta.concrete_fields} and m._meta.label not in NOT_SUBJECT_DATA
    ]


def rows_about(org, user_id: str) -> dict[str, set[int]]:
    """Primary keys of every row about the subject: a user_id match, or a foreign-key chain to one."""
    found: dict[str, set[int]] = {}
    for model in subject_models():
        qs = model.objects.filter(user_id=user_id)
        if "org" in {f.name for f in model._meta.concrete_fields}:
            qs = qs.filter(org=org)
        found.setdefault(model._meta.label, set()).update(qs.values_list("pk", flat=True))
    for _ in range(2):  # follow foreign keys two steps out (message -> session, revision -> item, ...)
        for model in apps.get_models():
            for f in model._meta.concrete_fields:
                if f.many_to_one and found.get(f.related_model._meta.label):
                    ids = found[f.related_model._meta.label]
                    pks = model.objects.filter(**{f"{f.name}__in": ids}).values_list("pk", flat=True)
                    found.setdefault(model._meta.label, set()).update(pks)
    return found


def remaining(found: dict[str, set[int]]) -> dict[str, int]:
    out = {}
    for label, pks in found.items():
        n = apps.get_model(label).objects.filter(pk__in=pks).count()
        if n:
            out[label] = n
    return out


# ---- forgetting -----------------------------------------------------------------------------------


def test_it_forgets_every_row_about_the_subject_and_nothing_else(
    alice_client, org_a, org_b, alice, bob, project
):
    populate(org_a, "alice", project)
    populate(org_a, "bob")
    populate(org_b, "alice")  # the same user_id in another org is someone else
    before = rows_about(org_a, "alice")
    for label in (
        "memory.MemoryItem",
        "memory.MemoryRevision",
        "memory.InjectionLog",
        "memory.ExtractionJob",
        "memory.EmbeddingConfig",
        "profiles.UserProfile",
        "profiles.ProfileRevision",
        "checkpoints.Session",
        "checkpoints.Message",
        "checkpoints.Checkpoint",
        "checkpoints.CheckpointArchive",
    ):
        assert before.get(label), f"the test must create {label} rows"
    bob_before = remaining(rows_about(org_a, "bob"))
    other_org_before = remaining(rows_about(org_b, "alice"))

    response = alice_client.delete("/api/v1/users/alice")

    assert response.status_code == 200, response.content
    body = response.json()
    assert remaining(before) == {}, "rows about alice were left behind"
    assert remaining(rows_about(org_a, "alice")) == {}
    assert body["deleted"]["MemoryItem"] == 6
    assert body["deleted"]["Message"] == 2 and body["deleted"]["Checkpoint"] == 2
    assert body["total"] == sum(len(v) for v in before.values())
    assert remaining(rows_about(org_a, "bob")) == bob_before
    assert remaining(rows_about(org_b, "alice")) == other_org_before
    assert Organization.objects.filter(pk=org_a.pk).exists()
    assert alice_client.get("/api/v1/profiles/users/alice").status_code == 200  # the account still works


def test_it_forgets_without_a_cap(key_a, org_a):
    _, client = key_a
    memory_ids = [
        MemoryItemFactory(org=org_a, content=f"Fact number {n} about many", user_id="many").pk
        for n in range(30)
    ]
    session = Session.objects.create(org=org_a, session_id="big", user_id="many")
    Message.objects.bulk_create(
        [
            Message(org=org_a, session=session, user_id="many", role="human", content=f"m{n}")
            for n in range(2500)
        ]
    )
    response = client.delete("/api/v1/users/many")
    assert response.status_code == 200
    assert response.json()["deleted"]["Message"] == 2500
    assert not MemoryItem.objects.filter(pk__in=memory_ids).exists()
    assert not Message.objects.filter(org=org_a).exists()


def test_it_lets_only_the_subject_keys_and_org_admins_forget(
    alice_client, bob_client, charlie_client, org_a, alice, bob
):
    MemoryItemFactory(org=org_a, content="alice likes rowing", user_id="alice")
    MemoryItemFactory(org=org_a, content="bob likes chess", user_id="bob")
    assert bob_client.delete("/api/v1/users/alice").status_code == 404
    assert charlie_client.delete("/api/v1/users/alice").status_code == 200  # org B's alice: nothing there
    assert MemoryItem.objects.filter(user_id="alice").count() == 1
    _, secret = api_key_create(org=org_a, name="ro", read_only=True)
    assert key_client(secret).delete("/api/v1/users/alice").status_code == 403
    assert MemoryItem.objects.filter(user_id="alice").count() == 1
    # alice owns org A: she may carry out an erasure for bob, but may not read his data
    assert alice_client.get("/api/v1/users/bob/export").status_code == 404
    assert alice_client.delete("/api/v1/users/bob").status_code == 200
    assert not MemoryItem.objects.filter(user_id="bob").exists()


# ---- export and import ----------------------------------------------------------------------------


def test_it_exports_everything_without_secrets_or_vectors(
    alice_client, bob_client, org_a, alice, bob, project
):
    populate(org_a, "alice", project)
    EmbeddingConfig.objects.filter(user_id="alice").update(api_key_encrypted="gAAAA-encrypted-secret")
    response = alice_client.get("/api/v1/users/alice/export")
    assert response.status_code == 200
    data = response.json()
    assert data["format"] == "engram-subject-export" and data["user_id"] == "alice"
    assert len(data["memories"]) == 6
    assert {m["status"] for m in data["memories"]} == {"active", "archived"}
    assert len(data["memory_revisions"]) == MemoryRevision.objects.filter(user_id="alice").count()
    assert data["profile"]["profession"] == "engineer"
    assert len(data["sessions"]) == 1
    session = data["sessions"][0]
    assert [m["content"] for m in session["messages"]] == ["hello there", "hi!"]
    assert len(session["checkpoints"]) == 2 and len(session["archived_checkpoints"]) == 1
    assert len(data["injection_logs"]) == 1 and len(data["extraction_jobs"]) == 1
    text = response.content.decode()
    assert "gAAAA-encrypted-secret" not in text and "api_key_encrypted" not in text
    assert '"embedding"' not in text
    assert bob_client.get("/api/v1/users/alice/export").status_code == 404


def test_it_restores_the_memories_after_export_forget_import(alice_client, org_a, alice, project):
    populate(org_a, "alice", project)

    def state():
        return sorted(
            MemoryItem.objects.filter(org=org_a, user_id="alice").values_list(
                "content", "memory_type", "scope", "skill", "status", "session_id", "project_id"
            )
        )

    memories_before = state()
    exported = alice_client.get("/api/v1/users/alice/export").json()
    assert alice_client.delete("/api/v1/users/alice").status_code == 200
    assert not MemoryItem.objects.filter(user_id="alice").exists()

    response = alice_client.post("/api/v1/users/alice/import", exported, format="json")

    assert response.status_code == 201, response.content
    report = response.json()
    assert report["refused"] == []
    assert report["taken"]["memories"] == 6
    assert state() == memories_before
    profile = UserProfile.objects.get(org=org_a, user_id="alice")
    assert (profile.profession, profile.communication_style, profile.edited_fields) == (
        "engineer",
        "concise",
        ["profession"],
    )
    session = Session.objects.get(org=org_a, user_id="alice")
    assert list(session.messages.values_list("content", flat=True)) == ["hello there", "hi!"]
    second = session.checkpoints.get(agent_state={"step": 2})
    assert second.parent.agent_state == {"step": 1}
    archive = CheckpointArchive.objects.get(session=session)
    assert zlib.decompress(bytes(archive.payload)) == b'{"agent_state": {"step": 0}}'
    log = InjectionLog.objects.get(org=org_a, user_id="alice")
    liked = MemoryItem.objects.get(user_id="alice", content="alice prefers concise answers")
    assert log.memory_ids == [liked.pk]  # ids remapped
    assert ExtractionJob.objects.filter(org=org_a, user_id="alice").count() == 1
    assert all(r.action == "add" for r in MemoryRevision.objects.filter(item=liked))


def test_it_imports_through_the_gate_and_reports_refusals(key_a, org_a):
    _, client = key_a
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [
            {
                "id": 1,
                "content": "Likes green tea",
                "memory_type": "preference",
                "scope": "user",
                "status": "active",
            },
            {"id": 2, "content": "my password is hunter2hunter2", "scope": "user", "status": "active"},
            {"id": 3, "content": "ok", "scope": "user"},
            {"id": 4, "content": "Shared fact", "scope": "project", "project_slug": "nowhere"},
            {"id": 5, "content": "Guessed something", "scope": "user", "confidence": 0.1},
        ],
    }
    response = client.post("/api/v1/users/ext-7/import", data, format="json")
    assert response.status_code == 201, response.content
    report = response.json()
    assert report["taken"] == {"memories": 1}
    assert {r["id"]: r["code"] for r in report["refused"]} == {
        2: "sensitive_content",
        3: "too_short",
        4: "no_project",
        5: "low_confidence",
    }
    assert list(MemoryItem.objects.filter(org=org_a).values_list("user_id", "content")) == [
        ("ext-7", "Likes green tea")
    ]
    assert not MemoryItem.objects.filter(content__icontains="hunter2").exists()


def test_it_rejects_files_that_are_not_exports(alice_client, alice):
    for body in ({"hello": "world"}, {"format": "engram-subject-export", "version": 99}, [1, 2]):
        response = alice_client.post("/api/v1/users/alice/import", body, format="json")
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_export"
    bad = {"format": "engram-subject-export", "version": 1, "memories": "nope"}
    assert alice_client.post("/api/v1/users/alice/import", bad, format="json").status_code == 400
    assert not MemoryItem.objects.exists()


def test_it_refuses_import_into_someone_else(bob_client, alice, bob):
    body = {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [{"content": "planted fact", "scope": "user"}],
    }
    assert bob_client.post("/api/v1/users/alice/import", body, format="json").status_code == 404
    assert not MemoryItem.objects.exists()


def test_it_imports_conversations_without_their_secrets(key_a, org_a):
    """Messages, summaries and checkpoints, live or archived, come in redacted, as if said here."""
    import base64
    import json

    _, client = key_a
    secret = "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"
    archived = {"messages": [{"role": "user", "content": f"use {secret}"}], "pending_tool_calls": []}
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "sessions": [
            {
                "id": 1,
                "session_id": "imported-run",
                "summary": f"The user shared the key {secret}",
                "messages": [{"role": "human", "content": f"my key is {secret}"}],
                "checkpoints": [
                    {
                        "id": 10,
                        "messages": [{"role": "user", "content": f"my key is {secret}"}],
                        "agent_state": {"env": {"KEY": secret}},
                        "pending_tool_calls": [{"id": "call_1", "function": {"arguments": secret}}],
                    }
                ],
                "archived_checkpoints": [
                    {
                        "original_id": 9,
                        "payload": base64.b64encode(zlib.compress(json.dumps(archived).encode())).decode(),
                    }
                ],
            }
        ],
    }
    response = client.post("/api/v1/users/ext-9/import", data, format="json")
    assert response.status_code == 201, response.content
    session = Session.objects.get(org=org_a, session_id="imported-run")
    checkpoint = Checkpoint.objects.get(session=session)
    archive = CheckpointArchive.objects.get(session=session)
    stored = [
        session.summary,
        list(Message.objects.filter(session=session).values_list("content", flat=True)),
        checkpoint.messages,
        checkpoint.agent_state,
        checkpoint.pending_tool_calls,
        zlib.decompress(bytes(archive.payload)).decode(),
    ]
    assert secret not in str(stored) and "[redacted]" in str(stored)
    assert checkpoint.pending_tool_calls[0]["id"] == "call_1"

    data["sessions"][0]["session_id"] = "broken-run"
    data["sessions"][0]["archived_checkpoints"][0]["payload"] = "not base64!"
    response = client.post("/api/v1/users/ext-9/import", data, format="json")
    assert response.status_code == 400, response.content
    assert not Session.objects.filter(session_id="broken-run").exists()
