"""Secrets are not kept outside memory content either (issue 13, finding 7): a memory's source_id, user and
project profiles, a session's agent_id, the query in the injection log, checkpoint keys at any depth, and
imported extraction jobs are stored redacted, whichever path writes them. Each test reads the stored rows
as a database dump would (row_to_json of the whole row), and the API response."""

import base64
import json
import logging
import zlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from checkpoints.models import Checkpoint, CheckpointArchive, Session
from checkpoints.services import compress_payload
from core.secrets import redact_json
from memory.models import ExtractionJob, InjectionLog, MemoryItem, MemoryRevision
from profiles.models import ProfileRevision, ProjectProfile, UserProfile

from .factories import MemoryItemFactory

OPENAI = "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"
AWS = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "Tr0ub4dor&3x"
CARD = "4111111111111111"  # passes Luhn
SECRETS = (OPENAI, AWS, PASSWORD, CARD)
# One value holding each kind: an OpenAI-style key, an AWS key, a stated password and a card number.
LEAKY = f"ci {OPENAI} aws {AWS} password={PASSWORD} card {CARD}"


def dump(model, **where) -> str:
    """The matching rows as the database holds them, as text (what a dump of the table would show)."""
    ids = list(model.objects.filter(**where).values_list("pk", flat=True))
    assert ids, f"no {model.__name__} row matches {where}"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT row_to_json(t)::text FROM {model._meta.db_table} t WHERE t.id = ANY(%s)",
            [ids],
        )
        return "\n".join(row[0] for row in cursor.fetchall())


def assert_no_secret(*texts) -> None:
    for text in texts:
        text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
        leaked = [secret for secret in SECRETS if secret in text]
        assert not leaked, f"leaked {leaked} in {text[:300]}"


def test_redact_json_redacts_keys_at_any_depth_and_keeps_colliding_keys_apart():
    value = {
        OPENAI: {"list": [{f"password={PASSWORD}": [AWS, {"card": CARD}]}]},
        "sk-live-ZZZZZZZZZZZZZZZZZZZZZZ": 2,
        "id": OPENAI,
    }
    redacted = redact_json(value, keep=frozenset({"id"}))
    assert redacted == {
        "[redacted]": {"list": [{"password=[redacted]": ["[redacted]", {"card": "[redacted]"}]}]},
        "[redacted] (2)": 2,
        "id": OPENAI,  # a kept key's value stays (tool call ids)
    }


# ---- memory source_id ------------------------------------------------------------------------------


def test_a_memory_source_id_is_stored_redacted_on_create(key_a, org_a):
    _, client = key_a
    response = client.post(
        "/api/v1/memories",
        {"content": "User u1 works at a bakery", "user_id": "u1", "source_id": LEAKY},
        format="json",
    )
    assert response.status_code == 201, response.content
    item_id = response.json()["id"]
    assert_no_secret(
        response.content.decode(), dump(MemoryItem, pk=item_id), dump(MemoryRevision, item_ref=item_id)
    )
    assert MemoryItem.objects.get(pk=item_id).source_id.startswith("ci [redacted] aws [redacted]")


def test_a_memory_source_id_is_stored_redacted_in_a_batch(key_a, org_a):
    _, client = key_a
    memories = [
        {"content": "User u1 works at a bakery", "user_id": "u1", "source_id": LEAKY},
        {"content": "User u1 drinks green tea", "user_id": "u1", "source_id": f"x {OPENAI}"},
    ]
    for infer in (False, True):
        MemoryItem.objects.all().delete()
        response = client.post(
            "/api/v1/memories/batch", {"memories": memories, "infer": infer}, format="json"
        )
        assert response.status_code == 200, response.content
        assert [r["status"] for r in response.json()["results"]] == ["created", "created"], response.content
        assert_no_secret(response.content.decode(), dump(MemoryItem, org=org_a))


def test_a_memory_source_id_is_stored_redacted_on_import(key_a, org_a):
    _, client = key_a
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [{"id": 1, "content": "User ext-1 works at a bakery", "source_id": LEAKY}],
    }
    response = client.post("/api/v1/users/ext-1/import", data, format="json")
    assert response.status_code == 201, response.content
    assert_no_secret(response.content.decode(), dump(MemoryItem, org=org_a, user_id="ext-1"))


# ---- profiles --------------------------------------------------------------------------------------


def test_every_user_profile_field_is_stored_redacted(alice_client, org_a, alice):
    body = {
        "username": f"alice {OPENAI}",
        "background": LEAKY,
        "profession": f"ops, password={PASSWORD}",
        "language_preference": "sk-abcdefgh-ijklmnop",  # a key shaped like a language tag
        "characteristics": [LEAKY, "curious"],
        "content": f"always use {AWS} and card {CARD}",
        "expertise_areas": [f"aws {AWS}"],
        "programming_languages": ["python", f"password: {PASSWORD}"],
        "frequently_used_tools": [OPENAI],
    }
    response = alice_client.patch("/api/v1/profiles/users/alice", body, format="json")
    assert response.status_code == 200, response.content
    assert_no_secret(
        response.content.decode(),
        dump(UserProfile, org=org_a, user_id="alice"),
        dump(ProfileRevision, org=org_a, user_id="alice"),
    )
    profile = UserProfile.objects.get(org=org_a, user_id="alice")
    assert "curious" in profile.characteristics and profile.programming_languages[0] == "python"


def test_every_project_profile_field_is_stored_redacted(alice_client, org_a, project):
    body = {
        "project_goal": LEAKY,
        "tech_stack": ["django", f"key {OPENAI}"],
        "constraints": [f"deploy with {AWS}"],
        "key_decisions": [{"decision": f"use password={PASSWORD}", "reason": f"card {CARD}"}],
        "team_conventions": [LEAKY],
        "current_phase": f"beta {OPENAI}",
    }
    response = alice_client.patch(f"/api/v1/projects/{project.pk}/profile", body, format="json")
    assert response.status_code == 200, response.content
    assert_no_secret(
        response.content.decode(),
        dump(ProjectProfile, project=project),
        dump(ProfileRevision, org=org_a, project=project),
    )
    assert ProjectProfile.objects.get(project=project).tech_stack[0] == "django"


def test_a_profile_redacted_beyond_its_column_is_cut_to_fit(alice_client, org_a, alice):
    """ "pwd=abcd" becomes longer ("pwd=[redacted]"): the stored value still fits the column, no 500."""
    username = "x" * 190 + " pwd=abcd"
    response = alice_client.patch("/api/v1/profiles/users/alice", {"username": username}, format="json")
    assert response.status_code == 200, response.content
    stored = UserProfile.objects.get(org=org_a, user_id="alice").username
    assert "abcd" not in stored and len(stored) == 200


# ---- sessions, checkpoints, injection log -----------------------------------------------------------


def test_a_session_agent_id_is_stored_redacted(key_a, org_a):
    _, client = key_a
    response = client.post(
        "/api/v1/sessions/s-agent/messages",
        {
            "user_id": "u1",
            "agent_id": LEAKY,
            "messages": [{"role": "human", "content": "I like green tea a lot"}],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert_no_secret(
        response.content.decode(),
        dump(Session, org=org_a, session_id="s-agent"),
        dump(ExtractionJob, org=org_a, session_id="s-agent"),
    )
    saved = client.put(
        "/api/v1/sessions/s-run/checkpoints", {"user_id": "u1", "agent_id": f"bot {OPENAI}"}, format="json"
    )
    assert saved.status_code == 201, saved.content
    assert_no_secret(saved.content.decode(), dump(Session, org=org_a, session_id="s-run"))
    assert Session.objects.get(org=org_a, session_id="s-run").agent_id == "bot [redacted]"


def test_checkpoint_keys_are_redacted_at_any_depth(key_a, org_a):
    _, client = key_a
    response = client.put(
        "/api/v1/sessions/run-keys/checkpoints",
        {
            "user_id": "u1",
            "agent_state": {OPENAI: {"nested": [{f"password={PASSWORD}": [{AWS: CARD}]}]}, "plan": "ok"},
            "tool_states": {"vault": {AWS: True}},
            "metadata": {CARD: [[{OPENAI: 1}]]},
            "pending_tool_calls": [{"id": "call_1", "function": {"arguments": {OPENAI: "x"}}}],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    checkpoint_id = response.json()["id"]
    assert_no_secret(response.content.decode(), dump(Checkpoint, pk=checkpoint_id))
    stored = Checkpoint.objects.get(pk=checkpoint_id)
    assert stored.agent_state["plan"] == "ok" and stored.pending_tool_calls[0]["id"] == "call_1"
    assert stored.agent_state["[redacted]"]["nested"][0] == {
        "password=[redacted]": [{"[redacted]": "[redacted]"}]
    }


def test_the_context_query_is_logged_redacted(key_a, org_a):
    _, client = key_a
    response = client.post("/api/v1/context", {"user_id": "u1", "query": LEAKY}, format="json")
    assert response.status_code == 200, response.content
    assert_no_secret(dump(InjectionLog, org=org_a, kind="context"))
    assert InjectionLog.objects.get(org=org_a).query.startswith("ci [redacted]")


def test_the_tool_search_query_is_logged_redacted(key_a, org_a):
    _, client = key_a
    invoked = client.post(
        "/api/v1/tools/memory_search/invoke", {"arguments": {"query": LEAKY}, "user_id": "u1"}, format="json"
    )
    assert invoked.status_code == 200, invoked.content
    assert InjectionLog.objects.filter(org=org_a, kind="tool").count() == 1  # over MCP: tests/test_mcp.py
    assert_no_secret(dump(InjectionLog, org=org_a, kind="tool"))


# ---- a subject import ------------------------------------------------------------------------------


def test_an_import_stores_jobs_logs_sessions_and_profiles_redacted(key_a, org_a):
    _, client = key_a
    archived = {"agent_state": {OPENAI: {"deep": [{AWS: 1}]}}, "pending_tool_calls": []}
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "profile": {"username": f"ext {OPENAI}", "characteristics": [LEAKY]},
        "profile_revisions": [{"actor": "x", "changes": {"username": [f"old {OPENAI}", LEAKY]}}],
        "sessions": [
            {
                "id": 1,
                "session_id": "imported-run",
                "agent_id": LEAKY,
                "checkpoints": [{"id": 10, "agent_state": {OPENAI: {"list": [{f"password={PASSWORD}": 1}]}}}],
                "archived_checkpoints": [
                    {
                        "original_id": 9,
                        "payload": base64.b64encode(zlib.compress(json.dumps(archived).encode())).decode(),
                    }
                ],
            }
        ],
        "injection_logs": [{"kind": "context", "query": LEAKY}],
        "extraction_jobs": [
            {
                "status": "done",
                "agent_id": f"bot {AWS}",
                "messages": [{"role": "human", "content": LEAKY, "message_id": "m1"}],
                "result": {"rejected": [{"content": LEAKY, OPENAI: [CARD]}]},
            },
            {"status": "failed", "messages": [], "error": f"attempt 3: boom {LEAKY}"},
        ],
    }
    response = client.post("/api/v1/users/ext-2/import", data, format="json")
    assert response.status_code == 201, response.content
    session = Session.objects.get(org=org_a, session_id="imported-run")
    archive = CheckpointArchive.objects.get(session=session)
    assert ExtractionJob.objects.filter(org=org_a, user_id="ext-2").count() == 2
    assert_no_secret(
        response.content.decode(),
        dump(ExtractionJob, org=org_a, user_id="ext-2"),
        dump(InjectionLog, org=org_a, user_id="ext-2"),
        dump(Session, pk=session.pk),
        dump(Checkpoint, session=session),
        zlib.decompress(bytes(archive.payload)).decode(),
        dump(UserProfile, org=org_a, user_id="ext-2"),
        dump(ProfileRevision, org=org_a, user_id="ext-2"),
    )
    job = ExtractionJob.objects.get(org=org_a, user_id="ext-2", status="done")
    assert job.messages[0]["message_id"] == "m1" and "[redacted]" in job.messages[0]["content"]


# ---- logs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("debug", [False, True])
def test_no_log_record_holds_a_secret_of_a_write(key_a, org_a, caplog, settings, debug):
    """Every logger at DEBUG, with settings.DEBUG off and on (then each SQL statement and its parameters are
    logged): writes carrying secrets in every field leave none in any log record."""
    settings.DEBUG = debug
    caplog.set_level(logging.DEBUG)
    for name in list(logging.root.manager.loggerDict):  # Django's own loggers are set to INFO
        caplog.set_level(logging.DEBUG, logger=name)
    _, client = key_a
    responses = [
        client.post(
            "/api/v1/memories",
            {"content": "User u1 works at a bakery", "user_id": "u1", "source_id": LEAKY},
            format="json",
        ),
        client.post(
            "/api/v1/sessions/s-log/messages",
            {"user_id": "u1", "agent_id": LEAKY, "messages": [{"role": "human", "content": LEAKY}]},
            format="json",
        ),
        client.put(
            "/api/v1/sessions/s-log/checkpoints",
            {"user_id": "u1", "agent_state": {OPENAI: {f"password={PASSWORD}": [AWS, CARD]}}},
            format="json",
        ),
        client.patch("/api/v1/profiles/users/u1", {"background": LEAKY}, format="json"),
        client.post("/api/v1/context", {"user_id": "u1", "query": LEAKY}, format="json"),
    ]
    assert [r.status_code for r in responses] == [201, 201, 201, 200, 200], [r.content for r in responses]
    if debug:
        inserts = [r for r in caplog.records if "INSERT INTO" in r.getMessage()]
        assert len(inserts) >= 5, "the SQL of the writes was not logged: the test would prove nothing"
    for record in caplog.records:
        assert_no_secret(record.getMessage(), str(record.args))


def test_redact_stored_cleans_rows_written_before_redaction(org_a, org_b):
    """Rows as an older version stored them (written straight, past the write path's redaction)."""
    short = f"ci {OPENAI}"  # fits the 255-character columns
    item = MemoryItemFactory(org=org_a, content="Alice likes tea", source_id=short)
    session = Session.objects.create(org=org_a, session_id="old", user_id="alice", agent_id=short)
    log = InjectionLog.objects.create(org=org_a, user_id="alice", kind="context", query=LEAKY)
    profile = UserProfile.objects.create(org=org_a, user_id="alice", background=LEAKY)
    state = {LEAKY: {"note": LEAKY}}
    checkpoint = Checkpoint.objects.create(org=org_a, session=session, user_id="alice", agent_state=state)
    archive = CheckpointArchive.objects.create(
        org=org_a,
        session=session,
        user_id="alice",
        original_id=1,
        payload=compress_payload({"agent_state": state, "messages": [{"role": "user", "content": LEAKY}]}),
        created_at=session.created_at,
    )
    job = ExtractionJob.objects.create(
        org=org_a, user_id="alice", messages=[{"role": "user", "content": LEAKY}], error=LEAKY
    )
    other = InjectionLog.objects.create(org=org_b, user_id="carol", kind="context", query=LEAKY)

    def run(*args):
        out = StringIO()
        call_command("redact_stored", *args, stdout=out)
        return out.getvalue()

    assert "done: 7 rows would change" in run("--org", org_a.slug, "--dry-run")
    assert OPENAI in dump(InjectionLog, pk=log.pk)
    output = run("--org", org_a.slug, "--chunk", "1")
    assert "done: 7 rows changed" in output
    for model, row in (
        (MemoryItem, item),
        (Session, session),
        (InjectionLog, log),
        (UserProfile, profile),
        (Checkpoint, checkpoint),
        (ExtractionJob, job),
    ):
        assert_no_secret(dump(model, pk=row.pk))
    archive.refresh_from_db()
    assert_no_secret(zlib.decompress(bytes(archive.payload)).decode())
    assert OPENAI in dump(InjectionLog, pk=other.pk)  # another org: not asked for
    assert "done: 0 rows changed" in run("--org", org_a.slug)
