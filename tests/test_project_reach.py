"""A key restricted to project p1 reaches nothing of project p2, and an export holds exactly what its caller
may read (issue 13, findings 2 and 4). The cast: org A with projects p1 and p2, the subject alice, an
org-wide key, a p1-restricted key and a read-only p1 key."""

import zlib
from dataclasses import dataclass

import pytest

from checkpoints.models import Checkpoint, CheckpointArchive, Message, Session
from memory.models import EmbeddingConfig, ExtractionJob, InjectionLog, MemoryItem
from profiles.models import UserProfile
from projects.models import Project
from projects.services import api_key_create

from .conftest import client_for, key_client
from .factories import MemoryItemFactory


@dataclass
class World:
    p1: Project
    p2: Project
    memories: dict[str, int]
    sessions: dict[str, int]
    logs: dict[str, int]
    jobs: dict[str, int]
    org_key: object
    p1_key: object
    p1_reader: object


def _session(org, name: str, project) -> Session:
    session = Session.objects.create(
        org=org, session_id=name, user_id="alice", project=project, summary=f"summary of {name}"
    )
    Message.objects.create(org=org, session=session, user_id="alice", role="human", content=f"said in {name}")
    Checkpoint.objects.create(org=org, session=session, user_id="alice", agent_state={"in": name})
    CheckpointArchive.objects.create(
        org=org,
        session=session,
        user_id="alice",
        original_id=900 + session.pk,
        payload=zlib.compress(b'{"agent_state": {"step": 0}}'),
        created_at=session.created_at,
    )
    return session


@pytest.fixture
def world(org_a, alice, bob, key_a) -> World:
    p1 = Project.objects.create(org=org_a, name="P1", slug="p1")
    p2 = Project.objects.create(org=org_a, name="P2", slug="p2")
    memories = {
        "user": MemoryItemFactory(org=org_a, content="Alice drinks green tea", user_id="alice"),
        "p1": MemoryItemFactory(org=org_a, project=p1, content="P1 ships on Fridays", user_id="alice"),
        "p2": MemoryItemFactory(org=org_a, project=p2, content="P2 codename is Heron", user_id="alice"),
        # bob's own note about alice: only bob may read it
        "p1_bobs": MemoryItemFactory(
            org=org_a,
            project=p1,
            content="Alice was late twice",
            user_id="alice",
            visibility="owner_only",
            created_by=bob,
        ),
    }
    sessions = {
        "none": _session(org_a, "s-none", None),
        "p1": _session(org_a, "s-p1", p1),
        "p2": _session(org_a, "s-p2", p2),
    }
    logs = {
        name: InjectionLog.objects.create(
            org=org_a, user_id="alice", project=project, kind="context", query=f"question about {name}"
        )
        for name, project in (("none", None), ("p1", p1), ("p2", p2))
    }
    jobs = {
        name: ExtractionJob.objects.create(
            org=org_a,
            user_id="alice",
            project=project,
            session_id=f"s-{name}",
            messages=[{"role": "human", "content": f"job words of {name}"}],
            status="done",
        )
        for name, project in (("none", None), ("p1", p1), ("p2", p2))
    }
    UserProfile.objects.create(org=org_a, user_id="alice", profession="pilot")
    EmbeddingConfig.objects.create(
        org=org_a, user_id="alice", provider="local", model="multilingual-e5-small"
    )
    _, p1_secret = api_key_create(org=org_a, name="p1-only", projects=[p1])
    _, reader_secret = api_key_create(org=org_a, name="p1-reader", projects=[p1], read_only=True)
    return World(
        p1=p1,
        p2=p2,
        memories={k: v.pk for k, v in memories.items()},
        sessions={k: v.pk for k, v in sessions.items()},
        logs={k: v.pk for k, v in logs.items()},
        jobs={k: v.pk for k, v in jobs.items()},
        org_key=key_a[1],
        p1_key=key_client(p1_secret),
        p1_reader=key_client(reader_secret),
    )


def ids(world: World, kind: str, *names: str) -> set[int]:
    return {getattr(world, kind)[n] for n in names}


# ---- export (finding 2) ---------------------------------------------------------------------------


def exported(client) -> dict:
    response = client.get("/api/v1/users/alice/export")
    assert response.status_code == 200, response.content
    return response.json()


def export_ids(data: dict) -> dict[str, set[int]]:
    sessions = data["sessions"]
    return {
        "memories": {m["id"] for m in data["memories"]},
        "revisions": {r["item_ref"] for r in data["memory_revisions"]},
        "sessions": {s["id"] for s in sessions},
        "messages": {m["session_id"] for s in sessions for m in s["messages"]},
        "checkpoints": {c["session_id"] for s in sessions for c in s["checkpoints"]},
        "archives": {a["session_id"] for s in sessions for a in s["archived_checkpoints"]},
        "logs": {i["id"] for i in data["injection_logs"]},
        "jobs": {j["id"] for j in data["extraction_jobs"]},
    }


def test_a_p1_key_exports_nothing_of_p2_and_no_one_elses_private_memory(world):
    for client in (world.p1_key, world.p1_reader):  # read-only keys export what they can read
        data = exported(client)
        got = export_ids(data)
        assert got["memories"] == ids(world, "memories", "user", "p1")
        assert got["revisions"] <= got["memories"]
        p1_sessions = ids(world, "sessions", "none", "p1")
        for kind in ("sessions", "messages", "checkpoints", "archives"):
            assert got[kind] == p1_sessions, kind
        assert got["logs"] == ids(world, "logs", "none", "p1")
        assert got["jobs"] == ids(world, "jobs", "none", "p1")
        assert data["profile"]["profession"] == "pilot"
        assert data["embedding_config"] is None  # keys may not read embedding settings
        text = str(data)
        for secret in ("Heron", "late twice", "s-p2", "job words of p2", "question about p2"):
            assert secret not in text
        # the export agrees with what the same key reads one by one
        for name, pk in world.memories.items():
            status = client.get(f"/api/v1/memories/{pk}").status_code
            assert status == (200 if pk in got["memories"] else 404), name


def test_an_org_key_exports_every_project_but_not_owner_only_memories_of_people(world):
    got = export_ids(exported(world.org_key))
    assert got["memories"] == ids(world, "memories", "user", "p1", "p2")
    assert got["sessions"] == ids(world, "sessions", "none", "p1", "p2")
    assert got["logs"] == ids(world, "logs", "none", "p1", "p2")
    assert got["jobs"] == ids(world, "jobs", "none", "p1", "p2")
    assert world.org_key.get(f"/api/v1/memories/{world.memories['p1_bobs']}").status_code == 404


def test_the_subject_exports_what_it_may_read_and_its_own_settings(world, alice):
    data = exported(client_for(alice))
    assert export_ids(data)["memories"] == ids(world, "memories", "user", "p1", "p2")
    assert data["embedding_config"]["model"] == "multilingual-e5-small"


# ---- the other ways into p2 (finding 4) -------------------------------------------------------------


def context(client, session_id: str, **extra) -> dict:
    response = client.post(
        "/api/v1/context", {"user_id": "alice", "session_id": session_id, **extra}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_context_gives_a_p1_key_no_message_of_a_p2_session(world):
    body = context(world.p1_key, "s-p2")
    assert body["recent_messages"] == [] and body["summary"] == ""
    assert "said in s-p2" not in body["prompt"]
    assert [m["content"] for m in context(world.p1_key, "s-p1")["recent_messages"]] == ["said in s-p1"]
    assert [m["content"] for m in context(world.org_key, "s-p2")["recent_messages"]] == ["said in s-p2"]


def test_a_context_call_about_a_p2_session_is_logged_under_p2(world):
    injection_id = context(world.org_key, "s-p2", query="what is the codename")["injection_id"]
    assert InjectionLog.objects.get(pk=injection_id).project_id == world.p2.pk
    listed = world.p1_key.get("/api/v1/injections", {"user_id": "alice"}).json()["results"]
    assert injection_id not in {i["id"] for i in listed}


def test_a_p1_key_sees_no_extraction_job_of_p2(world):
    assert world.p1_key.get(f"/api/v1/extraction-jobs/{world.jobs['p2']}").status_code == 404
    assert world.p1_key.post(f"/api/v1/extraction-jobs/{world.jobs['p2']}/retry").status_code == 404
    assert world.p1_key.get(f"/api/v1/extraction-jobs/{world.jobs['p1']}").status_code == 200
    assert world.p1_key.get("/api/v1/extraction-jobs", {"session_id": "s-p2"}).json()["results"] == []
    listed = {j["id"] for j in world.p1_key.get("/api/v1/extraction-jobs").json()["results"]}
    assert listed == ids(world, "jobs", "none", "p1")
    assert world.org_key.get(f"/api/v1/extraction-jobs/{world.jobs['p2']}").status_code == 200


def test_a_p1_key_sees_no_injection_log_of_p2(world):
    listed = world.p1_key.get("/api/v1/injections", {"user_id": "alice"}).json()["results"]
    assert {i["id"] for i in listed} == ids(world, "logs", "none", "p1")
    assert "question about p2" not in str(listed)
    listed = world.org_key.get("/api/v1/injections", {"user_id": "alice"}).json()["results"]
    assert {i["id"] for i in listed} == ids(world, "logs", "none", "p1", "p2")


def test_a_p1_key_reaches_no_session_checkpoint_or_memory_of_p2(world):
    client = world.p1_key
    for path in ("", "/checkpoints", "/checkpoints/latest", "/checkpoints/archived"):
        assert client.get(f"/api/v1/sessions/s-p2{path}").status_code == 404, path
        assert client.get(f"/api/v1/sessions/s-p1{path}").status_code == 200, path
    p2_checkpoint = Checkpoint.objects.get(session_id=world.sessions["p2"])
    assert client.get(f"/api/v1/checkpoints/{p2_checkpoint.pk}").status_code == 404
    assert client.delete("/api/v1/sessions/s-p2").status_code == 404
    listed = {s["session_id"] for s in client.get("/api/v1/sessions", {"user_id": "alice"}).json()["results"]}
    assert listed == {"s-none", "s-p1"}
    stats = client.get("/api/v1/memories/stats", {"user_id": "alice"}).json()
    assert stats["total"] == 2
    search = client.post(
        "/api/v1/tools/memory_search/invoke",
        {"user_id": "alice", "project": "p2", "arguments": {"query": "codename"}},
        format="json",
    )
    assert search.status_code == 404
    assert Session.objects.filter(pk=world.sessions["p2"]).exists()


# ---- forgetting with a restricted key (findings 2 and 4) ---------------------------------------------


def test_a_p1_key_forgets_only_what_it_reaches_and_says_what_was_left(world):
    response = world.p1_key.delete("/api/v1/users/alice")

    assert response.status_code == 200, response.content
    body = response.json()
    remaining = set(MemoryItem.objects.filter(user_id="alice").values_list("pk", flat=True))
    assert remaining == ids(world, "memories", "p2", "p1_bobs")
    assert set(Session.objects.values_list("pk", flat=True)) == ids(world, "sessions", "p2")
    assert set(Message.objects.values_list("session_id", flat=True)) == ids(world, "sessions", "p2")
    assert set(Checkpoint.objects.values_list("session_id", flat=True)) == ids(world, "sessions", "p2")
    assert set(CheckpointArchive.objects.values_list("session_id", flat=True)) == ids(world, "sessions", "p2")
    assert set(InjectionLog.objects.values_list("pk", flat=True)) == ids(world, "logs", "p2")
    assert set(ExtractionJob.objects.values_list("pk", flat=True)) == ids(world, "jobs", "p2")
    assert not UserProfile.objects.filter(user_id="alice").exists()
    assert EmbeddingConfig.objects.filter(user_id="alice").exists()  # not a key's to change
    assert body["deleted"]["MemoryItem"] == 2 and body["deleted"]["Session"] == 2
    assert body["left"]["MemoryItem"] == 2
    assert body["left"]["Session"] == 1 and body["left"]["Message"] == 1
    assert body["left"]["InjectionLog"] == 1 and body["left"]["ExtractionJob"] == 1
    assert body["left"]["EmbeddingConfig"] == 1


def test_a_read_only_key_forgets_nothing(world):
    assert world.p1_reader.delete("/api/v1/users/alice").status_code == 403
    assert MemoryItem.objects.filter(user_id="alice").count() == 4


def test_an_org_key_forgets_everything_about_the_subject(world):
    response = world.org_key.delete("/api/v1/users/alice")
    assert response.status_code == 200, response.content
    assert response.json()["left"] == {}
    assert not MemoryItem.objects.filter(user_id="alice").exists()
    assert not Session.objects.exists() and not Message.objects.exists()
    assert not InjectionLog.objects.exists() and not ExtractionJob.objects.exists()


# ---- import with a restricted key -------------------------------------------------------------------


def test_a_p1_key_imports_nothing_into_p2(world):
    data = exported(world.org_key)
    for session in data["sessions"]:
        session["session_id"] = "copy-" + session["session_id"]
    response = world.p1_key.post("/api/v1/users/carol/import", data, format="json")
    assert response.status_code == 201, response.content
    refused = {(r["id"], r["code"]) for r in response.json()["refused"] if r["kind"] == "memory"}
    assert refused == {(world.memories["p2"], "no_project")}
    assert not MemoryItem.objects.filter(user_id="carol", project=world.p2).exists()
    assert not Session.objects.filter(user_id="carol", project=world.p2).exists()
    assert not InjectionLog.objects.filter(user_id="carol", project=world.p2).exists()
    assert not ExtractionJob.objects.filter(user_id="carol", project=world.p2).exists()
    assert MemoryItem.objects.filter(user_id="carol", content="Alice drinks green tea").exists()


def test_a_p1_key_reads_no_session_memory_of_a_p2_session(world, org_a):
    def session_memory(session_id: str, content: str) -> int:
        return MemoryItemFactory(
            org=org_a, scope="session", session_id=session_id, user_id="alice", content=content, pinned=True
        ).pk

    in_p2 = session_memory("s-p2", "In this chat the budget is 40k")
    in_p1 = session_memory("s-p1", "In this chat the deadline is May")
    loose = session_memory("s-unknown", "In this chat the tone is formal")
    client = world.p1_key
    assert client.get(f"/api/v1/memories/{in_p2}").status_code == 404
    assert client.get(f"/api/v1/memories/{in_p1}").status_code == 200
    listed = {
        m["id"]
        for m in client.get("/api/v1/memories", {"user_id": "alice", "scope": "session"}).json()["results"]
    }
    assert listed == {in_p1, loose}
    for searcher, found in ((world.org_key, True), (client, False)):
        response = searcher.post(
            "/api/v1/memories/search",
            {"user_id": "alice", "query": "budget", "session_id": "s-p2"},
            format="json",
        )
        assert response.status_code == 200, response.content
        assert (in_p2 in {h["id"] for h in response.json()["results"]}) is found
    core = {m["id"] for m in context(client, "s-p2")["core"]}
    assert in_p2 not in core
    assert in_p2 not in export_ids(exported(client))["memories"]
    assert in_p2 in export_ids(exported(world.org_key))["memories"]
    assert world.org_key.get(f"/api/v1/memories/{in_p2}").status_code == 200
    body = client.delete("/api/v1/users/alice").json()
    assert MemoryItem.objects.filter(pk=in_p2).exists() and not MemoryItem.objects.filter(pk=in_p1).exists()
    assert body["left"]["MemoryItem"] == 3  # p2, bob's own note, the p2 session's memory


def test_a_p1_key_writes_no_session_memory_into_a_p2_session(world, org_a):
    def add(client, session_id):
        body = {"content": f"Noted during {session_id}", "user_id": "alice", "scope": "session"}
        return client.post("/api/v1/memories", {**body, "session_id": session_id}, format="json")

    refused = add(world.p1_key, "s-p2")
    assert refused.status_code == 403
    assert "s-p2" in refused.json()["error"]["message"]
    batch = world.p1_key.post(
        "/api/v1/memories/batch",
        {
            "infer": False,
            "memories": [
                {
                    "content": "Batch note in p2's session",
                    "user_id": "alice",
                    "scope": "session",
                    "session_id": "s-p2",
                }
            ],
        },
        format="json",
    )
    assert batch.status_code == 200
    assert not MemoryItem.objects.filter(org=org_a, scope="session", session_id="s-p2").exists()
    # Its own project's session, a session of no project and a new one are fine; the org key reaches all.
    for session_id in ("s-p1", "s-none", "s-new"):
        assert add(world.p1_key, session_id).status_code == 201, session_id
    assert add(world.org_key, "s-p2").status_code == 201
