"""One shape across the API's answers: the project is `project` (its id) everywhere, every timestamp is RFC
3339 in UTC ending in Z, `source` defaults to agent for an API key and user for a person, and every
invalid-choice error lists the valid values (in English and in Chinese)."""

import re

import pytest

from memory.models import MemoryItem, MemoryRevision

pytestmark = pytest.mark.django_db

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def walk(value, path=""):
    """(path, key, value) of every entry of a JSON body, however deep."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield path, key, inner
            yield from walk(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from walk(inner, f"{path}[{i}]")


def timestamps(body) -> list[tuple[str, str]]:
    return [(f"{p}.{k}", v) for p, k, v in walk(body) if isinstance(v, str) and TIMESTAMP.match(v)]


def keys(body) -> set[str]:
    return {k for _, k, _ in walk(body)}


@pytest.fixture
def world(alice_client, org_a, project):
    """A user memory and a project memory of alice's, a session with a message, a checkpoint, a revision."""
    mine = alice_client.post(
        "/api/v1/memories",
        {"content": "Alice reviews pull requests before lunch", "occurred_at": "2026-03-01T09:30:00+08:00"},
        format="json",
    )
    shared = alice_client.post(
        "/api/v1/memories",
        {"content": "Atlas deploys every Thursday afternoon", "scope": "project", "project": "atlas"},
        format="json",
    )
    assert mine.status_code == shared.status_code == 201, (mine.content, shared.content)
    alice_client.patch(
        f"/api/v1/memories/{mine.json()['id']}",
        {"content": "Alice reviews pull requests after lunch"},
        format="json",
    )
    appended = alice_client.post(
        "/api/v1/sessions/s-1/messages",
        {"project": "atlas", "messages": [{"role": "human", "content": "Deploy Atlas on Thursday"}]},
        format="json",
    )
    assert appended.status_code == 201, appended.content
    saved = alice_client.put("/api/v1/sessions/s-1/checkpoints", {"agent_state": {"step": 1}}, format="json")
    assert saved.status_code == 201, saved.content
    return {"mine": mine.json()["id"], "shared": shared.json()["id"], "project": project}


def main_answers(client, world) -> dict:
    mine, shared = world["mine"], world["shared"]
    search = {"user_id": "alice", "query": "Atlas deploys Thursday", "project": "atlas", "mode": "keyword"}
    context = {**search, "session_id": "s-1"}
    context.pop("mode")
    answers = {
        "memory": client.get(f"/api/v1/memories/{shared}"),
        "memories": client.get("/api/v1/memories"),
        "history": client.get(f"/api/v1/memories/{mine}/history"),
        "search": client.post("/api/v1/memories/search", search, format="json"),
        "context": client.post("/api/v1/context", context, format="json"),
        "session": client.get("/api/v1/sessions/s-1"),
        "sessions": client.get("/api/v1/sessions"),
        "checkpoint": client.get("/api/v1/sessions/s-1/checkpoints/latest"),
        "jobs": client.get("/api/v1/extraction-jobs"),
        "injections": client.get("/api/v1/injections?user_id=alice"),
        "export": client.get("/api/v1/users/alice/export"),
        "audit": client.get("/api/v1/audit-log"),
        "tool": client.post(
            "/api/v1/tools/memory_search/invoke",
            {"arguments": {"query": "Atlas deploys"}, "project": "atlas"},
            format="json",
        ),
    }
    for name, response in answers.items():
        assert response.status_code == 200, (name, response.content)
    return {name: response.json() for name, response in answers.items()}


def test_every_timestamp_is_utc_with_a_z(alice_client, world):
    bodies = main_answers(alice_client, world)
    seen = {name: timestamps(body) for name, body in bodies.items()}

    for name in (
        "memory",
        "memories",
        "history",
        "search",
        "context",
        "session",
        "checkpoint",
        "jobs",
        "export",
    ):
        assert seen[name], f"{name}: no timestamp found to check"
    wrong = [
        (name, where, value)
        for name, found in seen.items()
        for where, value in found
        if not value.endswith("Z")
    ]
    assert wrong == []
    # 09:30 in +08:00 is 01:30 UTC, wherever it is shown.
    assert bodies["memory"]["created_at"].endswith("Z")
    assert bodies["export"]["exported_at"].endswith("Z")
    occurred = [v for w, v in seen["export"] if w.endswith(".occurred_at")]
    assert "2026-03-01T01:30:00Z" in occurred


def test_older_snapshots_with_an_offset_are_shown_with_a_z(alice_client, world):
    revision = MemoryRevision.objects.filter(item_ref=world["mine"]).order_by("number").first()
    revision.after = {**revision.after, "occurred_at": "2026-03-01T01:30:00+00:00", "project_id": None}
    revision.save()

    history = alice_client.get(f"/api/v1/memories/{world['mine']}/history").json()["results"]

    assert history[0]["after"]["occurred_at"] == "2026-03-01T01:30:00Z"
    assert "project" in history[0]["after"] and "project_id" not in history[0]["after"]
    assert "superseded_by" in history[0]["after"]


def test_the_project_is_project_holding_its_id_everywhere(alice_client, world):
    bodies = main_answers(alice_client, world)
    pk = world["project"].pk

    offenders = {name for name, body in bodies.items() if {"project_id", "project_slug"} & keys(body)}
    assert offenders <= {"export"}, offenders  # the export adds project_slug, to match projects on import
    assert "project_id" not in keys(bodies["export"])
    assert bodies["memory"]["project"] == pk
    shared = [r for r in bodies["search"]["results"] if r["id"] == world["shared"]]
    assert shared and shared[0]["project"] == pk
    in_context = [
        r for r in bodies["context"]["core"] + bodies["context"]["relevant"] if r["id"] == world["shared"]
    ]
    assert in_context and in_context[0]["project"] == pk
    assert bodies["session"]["project"] == pk
    assert {s["project"] for s in bodies["sessions"]["results"]} == {pk}
    assert {j["project"] for j in bodies["jobs"]["results"]} == {pk}
    assert pk in {i["project"] for i in bodies["injections"]["results"]}
    exported = {m["id"]: m for m in bodies["export"]["memories"]}
    assert exported[world["shared"]]["project"] == pk
    assert bodies["export"]["sessions"][0]["project"] == pk
    assert "project" in bodies["history"]["results"][0]["after"]


def test_an_import_takes_the_old_project_id_name_too(alice_client, org_a, project):
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [
            {
                "id": 1,
                "content": "Atlas builds run on the big runner",
                "scope": "project",
                "project_id": project.pk,
            },
            {
                "id": 2,
                "content": "Atlas releases are tagged on main",
                "scope": "project",
                "project": project.pk,
            },
        ],
    }
    response = alice_client.post("/api/v1/users/alice/import", data, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["taken"] == {"memories": 2}
    assert set(
        MemoryItem.objects.filter(org=org_a, scope="project").values_list("project_id", flat=True)
    ) == {project.pk}


def test_source_defaults_to_agent_for_a_key_and_user_for_a_person(key_a, alice_client, org_a):
    _, key = key_a
    by_key = key.post(
        "/api/v1/memories", {"content": "The user likes short answers", "user_id": "u1"}, format="json"
    )
    by_person = alice_client.post("/api/v1/memories", {"content": "Alice likes long walks"}, format="json")
    told = key.post(
        "/api/v1/memories",
        {"content": "The user was imported from a CRM", "user_id": "u1", "source": "import"},
        format="json",
    )
    batch = key.post(
        "/api/v1/memories/batch",
        {"memories": [{"content": "The user drinks oat milk lattes", "user_id": "u2"}], "infer": False},
        format="json",
    )

    assert (by_key.json()["source"], by_person.json()["source"], told.json()["source"]) == (
        "agent",
        "user",
        "import",
    )
    assert MemoryItem.objects.get(pk=batch.json()["results"][0]["id"]).source == "agent"


def test_a_markdown_edit_with_a_key_is_an_agent_write(key_a, org_a):
    _, key = key_a
    doc = key.get("/api/v1/memories/markdown?user_id=u5").json()
    document = doc["document"].rstrip("\n") + "\n\n## Facts\n\n- The user rides a red bicycle\n"
    response = key.put(
        "/api/v1/memories/markdown?user_id=u5",
        {"document": document, "base_version": doc["version"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert MemoryItem.objects.get(org=org_a, user_id="u5").source == "agent"


INVALID = [
    (
        "post",
        "/api/v1/memories",
        {"content": "A fine memory text", "memory_type": "bogus"},
        ["fact", "preference"],
    ),
    ("post", "/api/v1/memories", {"content": "A fine memory text", "source": "bogus"}, ["agent", "import"]),
    (
        "post",
        "/api/v1/memories/search",
        {"user_id": "alice", "query": "x", "scopes": ["bogus"]},
        ["user", "project"],
    ),
    (
        "post",
        "/api/v1/memories/search",
        {"user_id": "alice", "query": "x", "mode": "bogus"},
        ["hybrid", "keyword"],
    ),
    ("get", "/api/v1/memories?scope=bogus", None, ["user", "session"]),
    ("get", "/api/v1/memories?memory_type=fact,bogus", None, ["fact", "preference"]),
    ("get", "/api/v1/extraction-jobs?status=bogus", None, ["pending", "done"]),
    ("get", "/api/v1/sessions?status=bogus", None, ["active", "expired"]),
    ("get", "/api/v1/audit-log?action=bogus", None, ["memory.create"]),
    ("get", "/api/v1/embedding-config?level=bogus", None, ["org", "user"]),
    (
        "post",
        "/api/v1/sessions/s-9/messages",
        {"messages": [{"role": "bogus", "content": "hi"}]},
        ["human", "ai", "system", "tool"],
    ),
]


@pytest.mark.parametrize("method, url, body, valid", INVALID, ids=[f"{m} {u}" for m, u, _, _ in INVALID])
def test_an_invalid_choice_lists_the_valid_values(alice_client, method, url, body, valid):
    response = getattr(alice_client, method)(url, body, format="json") if body else alice_client.get(url)

    assert response.status_code == 400, response.content
    message = response.json()["error"]["message"]
    assert '"bogus" is not a valid choice. Valid values: ' in message
    for value in valid:
        assert value in message


def test_the_invalid_choice_message_is_translated(alice_client):
    response = alice_client.post(
        "/api/v1/memories",
        {"content": "A fine memory text", "memory_type": "bogus"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "“bogus”不是有效的选项。可选值：" in message and "preference" in message
