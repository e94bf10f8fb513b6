"""The audit log: who changed, exported, forgot or reconfigured what, when and from where; org owners
and admins read it; it never holds memory content; a forgotten subject's id leaves it."""

import json

import pytest
from django.urls import reverse

from audit.models import Action, AppendOnly, AuditEvent
from memory.models import MemoryItem

from .conftest import client_for, key_client
from .openai_server import OpenAIStub

URL = "/api/v1/audit-log"
IP = "203.0.113.7"
AGENT = "audit-test-agent/1.0"
MARKER = "Quetzalcoatl-marker-4417 likes cardamom buns"
SECRET = "sk-audit-test-0123456789abcdef"


def from_here(client):
    client.defaults.update(REMOTE_ADDR=IP, HTTP_USER_AGENT=AGENT)
    client.default_format = "json"
    return client


@pytest.fixture
def alice_c(alice):
    return from_here(client_for(alice))


@pytest.fixture
def key_c(org_a, alice):
    from projects.services import api_key_create

    key, secret = api_key_create(org=org_a, name="agent-a")
    return key, from_here(key_client(secret))


def events(org, action=None):
    qs = AuditEvent.objects.filter(org=org).order_by("id")
    return list(qs.filter(action=action) if action else qs)


def last(org, action) -> AuditEvent:
    found = events(org, action)
    assert found, f"no {action} event"
    return found[-1]


def every_row_as_text() -> str:
    return json.dumps(list(AuditEvent.objects.values()), default=str, ensure_ascii=False)


# ---- each action family records who, what and from where ------------------------------------------------


def test_it_records_memory_changes_by_a_key_with_its_address(key_c, org_a):
    key, client = key_c
    created = client.post("/api/v1/memories", {"content": "Prefers tea in the morning", "user_id": "u1"})
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    assert (
        client.patch(f"/api/v1/memories/{pk}", {"memory_type": "preference"}, format="json").status_code
        == 200
    )
    assert client.patch(f"/api/v1/memories/{pk}", {"pinned": True}, format="json").status_code == 200
    assert client.patch(f"/api/v1/memories/{pk}", {"status": "archived"}, format="json").status_code == 200
    assert client.post(f"/api/v1/memories/{pk}/restore", {"revision": 1}, format="json").status_code == 200
    assert client.delete(f"/api/v1/memories/{pk}").status_code == 204

    kinds = [e.action for e in events(org_a) if e.action.startswith("memory.")]
    assert kinds == [
        Action.MEMORY_CREATE,
        Action.MEMORY_UPDATE,
        Action.MEMORY_PIN,
        Action.MEMORY_ARCHIVE,
        Action.MEMORY_RESTORE,
        Action.MEMORY_DELETE,
    ]
    for event in events(org_a):
        if event.action.startswith("memory."):
            assert (event.actor_kind, event.actor_key_id, event.actor_account_id) == ("key", key.pk, None)
            assert event.actor_label == f"{key.prefix} (agent-a)"
            assert (event.ip, event.user_agent) == (IP, AGENT)
            assert (event.target_type, event.target_id, event.subject_id) == ("memory", str(pk), "u1")
    update = last(org_a, Action.MEMORY_UPDATE)
    assert update.details["fields"] == ["memory_type"]
    assert last(org_a, Action.MEMORY_PIN).details["pinned"] is True


def test_it_records_a_batch_as_one_event_with_counts(key_c, org_a):
    _, client = key_c
    batch = [{"content": f"Supplier {i} delivers on day {i}", "user_id": "u1"} for i in range(3)]
    batch.append({"content": "Supplier 0 delivers on day 0", "user_id": "u1"})  # a duplicate
    response = client.post("/api/v1/memories/batch", {"memories": batch, "infer": False}, format="json")
    assert response.status_code == 200, response.content
    assert events(org_a, Action.MEMORY_CREATE) == []
    assert last(org_a, Action.MEMORY_BATCH).details == {"created": 3, "duplicate": 1}
    assert client.delete("/api/v1/memories?user_id=u1").json() == {"deleted": 3}
    wiped = last(org_a, Action.MEMORY_DELETE_ALL)
    assert (wiped.details, wiped.subject_id, wiped.ip) == ({"deleted": 3}, "u1", IP)


def test_it_records_project_membership_and_key_administration(alice_c, alice, bob, org_a):
    created = alice_c.post("/api/v1/projects", {"name": "Atlas", "slug": "atlas"}, format="json")
    assert created.status_code == 201, created.content
    pid = created.json()["id"]
    assert alice_c.patch(f"/api/v1/projects/{pid}", {"description": "x"}, format="json").status_code == 200
    added = alice_c.post(
        f"/api/v1/projects/{pid}/members", {"account": bob.pk, "role": "viewer"}, format="json"
    )
    assert added.status_code == 201, added.content
    mid = added.json()["id"]
    assert (
        alice_c.patch(f"/api/v1/projects/{pid}/members/{mid}", {"role": "editor"}, format="json").status_code
        == 200
    )
    assert alice_c.delete(f"/api/v1/projects/{pid}/members/{mid}").status_code == 204
    key = alice_c.post(
        "/api/v1/api-keys", {"name": "ci", "read_only": True, "projects": [pid]}, format="json"
    )
    assert key.status_code == 201, key.content
    assert alice_c.post(f"/api/v1/api-keys/{key.json()['id']}/revoke").status_code == 200
    assert alice_c.delete(f"/api/v1/projects/{pid}").status_code == 204

    got = {e.action: e for e in events(org_a)}
    for action in (
        Action.PROJECT_CREATE,
        Action.PROJECT_UPDATE,
        Action.MEMBERSHIP_ADD,
        Action.MEMBERSHIP_CHANGE,
        Action.MEMBERSHIP_REMOVE,
        Action.KEY_CREATE,
        Action.KEY_REVOKE,
        Action.PROJECT_DELETE,
    ):
        event = got[action]
        assert (event.actor_kind, event.actor_account_id, event.actor_label) == ("account", alice.pk, "alice")
        assert (event.ip, event.user_agent) == (IP, AGENT)
    assert got[Action.PROJECT_UPDATE].details == {"fields": ["description"]}
    assert got[Action.MEMBERSHIP_CHANGE].details == {
        "account": bob.pk,
        "old_role": "viewer",
        "new_role": "editor",
    }
    assert got[Action.MEMBERSHIP_REMOVE].details == {"account": bob.pk, "role": "editor"}
    assert got[Action.KEY_CREATE].details == {"read_only": True, "projects": [pid]}
    assert got[Action.KEY_CREATE].target_id == str(key.json()["id"])
    # The project is gone; its events keep the id (target) and lose only the link.
    assert got[Action.PROJECT_DELETE].target_id == str(pid)
    assert AuditEvent.objects.filter(org=org_a, project__isnull=False).count() == 0


def test_it_records_configuration_by_field_name_never_a_secret(alice_c, org_a):
    put = alice_c.put("/api/v1/embedding-config", {"provider": "local"}, format="json")
    assert put.status_code == 200, put.content
    event = last(org_a, Action.CONFIG_EMBEDDING)
    assert event.details["level"] == "org" and "provider" in event.details["fields"]
    assert alice_c.delete("/api/v1/embedding-config").status_code == 200
    assert last(org_a, Action.CONFIG_EMBEDDING).details == {"level": "org", "removed": True}
    with OpenAIStub() as stub:
        body = {"base_url": stub.base_url, "model": "stub-chat", "api_key": SECRET}
        assert alice_c.put("/api/v1/llm-config", body, format="json").status_code == 200
    event = last(org_a, Action.CONFIG_LLM)
    assert event.details == {"fields": ["api_key", "base_url", "model"]}
    assert (event.actor_label, event.ip) == ("alice", IP)
    assert alice_c.delete("/api/v1/llm-config").status_code == 204
    assert last(org_a, Action.CONFIG_LLM).details == {"removed": True}
    assert SECRET not in every_row_as_text() and "stub-chat" not in every_row_as_text()


def test_it_records_profile_edits_and_session_deletion_without_their_text(key_c, alice_c, org_a, project):
    key, client = key_c
    edit = client.patch("/api/v1/profiles/users/u1", {"profession": MARKER}, format="json")
    assert edit.status_code == 200, edit.content
    event = last(org_a, Action.PROFILE_UPDATE)
    assert (event.target_type, event.subject_id, event.actor_key_id) == ("user_profile", "u1", key.pk)
    assert event.details == {"fields": ["edited_fields", "profession"]}
    team = alice_c.patch(f"/api/v1/projects/{project.pk}/profile", {"tech_stack": [MARKER]}, format="json")
    assert team.status_code == 200, team.content
    assert last(org_a, Action.PROFILE_UPDATE).project_id == project.pk
    said = {"user_id": "u1", "extract": False, "messages": [{"role": "human", "content": MARKER}]}
    assert client.post("/api/v1/sessions/s-9/messages", said, format="json").status_code == 201
    assert client.delete("/api/v1/sessions/s-9").status_code == 204
    gone = last(org_a, Action.SESSION_DELETE)
    assert (gone.target_type, gone.subject_id, gone.ip) == ("session", "u1", IP) and gone.target_id.isdigit()
    assert "marker-4417" not in every_row_as_text()


def test_it_refuses_to_store_text_in_details(alice_actor):
    from audit.services import record

    with pytest.raises(ValueError, match="details"):
        record(alice_actor, Action.MEMORY_UPDATE, details={"content": "x" * 100})
    with pytest.raises(ValueError):
        record(alice_actor, "memory.rewrite")  # not an action


# ---- never any content -----------------------------------------------------------------------------------


def test_no_event_holds_memory_content_or_messages(key_c, alice_c, org_a, project):
    _, client = key_c
    one = client.post(
        "/api/v1/memories",
        {"content": MARKER, "user_id": "u1", "tags": ["cardamom"], "metadata": {"note": MARKER[:20]}},
        format="json",
    )
    assert one.status_code == 201, one.content
    pk = one.json()["id"]
    client.patch(f"/api/v1/memories/{pk}", {"content": MARKER + " on Sundays"}, format="json")
    project_item = alice_c.post(
        "/api/v1/memories",
        {"content": MARKER + " (team)", "scope": "project", "project": "atlas"},
        format="json",
    )
    assert project_item.status_code == 201, project_item.content
    client.post(
        "/api/v1/memories/batch",
        {"memories": [{"content": MARKER + " in batch", "user_id": "u1"}]},
        format="json",
    )
    exported = client.get("/api/v1/users/u1/export")
    assert exported.status_code == 200 and MARKER in exported.content.decode()
    assert client.post("/api/v1/users/u2/import", exported.json(), format="json").status_code == 201
    assert client.delete("/api/v1/users/u2").status_code == 200

    actions = {e.action for e in events(org_a)}
    assert {Action.MEMORY_CREATE, Action.MEMORY_UPDATE, Action.MEMORY_BATCH, Action.SUBJECT_EXPORT} <= actions
    assert {Action.SUBJECT_IMPORT, Action.SUBJECT_FORGET} <= actions
    text = every_row_as_text()
    for needle in ("Quetzalcoatl", "marker-4417", "cardamom"):
        assert needle not in text, f"{needle!r} leaked into the audit log"
    assert last(org_a, Action.SUBJECT_EXPORT).details["memories"] >= 1
    imported = last(org_a, Action.SUBJECT_IMPORT)
    assert imported.details["taken"]["memories"] >= 1
    # The import is one event: no per-memory events for the imported memories.
    assert not AuditEvent.objects.filter(action=Action.MEMORY_CREATE, subject_id="u2").exists()


# ---- forgetting a subject ----------------------------------------------------------------------------------


def test_forget_keeps_the_events_without_the_subjects_id(key_c, alice_c, org_a):
    key, client = key_c
    made = client.post("/api/v1/memories", {"content": "Works nights at the bakery", "user_id": "erin-7781"})
    other = client.post("/api/v1/memories", {"content": "Likes quiet offices", "user_id": "frank-5512"})
    assert made.status_code == other.status_code == 201
    client.get("/api/v1/users/erin-7781/export")
    before = AuditEvent.objects.filter(org=org_a, subject_id="erin-7781").count()
    assert before == 2

    response = alice_c.delete("/api/v1/users/erin-7781")
    assert response.status_code == 200, response.content
    assert not MemoryItem.objects.filter(user_id="erin-7781").exists()

    assert "erin-7781" not in every_row_as_text()
    forget = last(org_a, Action.SUBJECT_FORGET)
    assert (forget.actor_label, forget.ip, forget.subject_id) == ("alice", IP, "")
    assert sum(forget.details["deleted"].values()) >= 1
    assert AuditEvent.objects.filter(org=org_a, subject_hash=forget.subject_hash).count() == before + 1
    # Another subject's events keep their id.
    assert AuditEvent.objects.filter(org=org_a, subject_id="frank-5512").count() == 1
    # An admin given the id again finds what happened, though the log no longer names it.
    body = alice_c.get(URL, {"subject": "erin-7781"}).json()
    assert [e["action"] for e in body["results"]] == ["subject.forget", "subject.export", "memory.create"]
    assert {e["subject"] for e in body["results"]} == {""}


# ---- who may read it --------------------------------------------------------------------------------------


def test_only_org_owners_and_admins_read_the_log(alice_c, bob_client, key_a, charlie_client, org_a, project):
    body = alice_c.get(URL).json()
    actions = [e["action"] for e in body["results"]]
    assert actions[:2] == ["membership.add", "project.create"] and "key.create" in actions
    assert body["results"][0]["actor"]["label"] == "alice"
    assert bob_client.get(URL).status_code == 403  # a member (viewer in the project)
    assert key_a[1].get(URL).status_code == 403  # an API key
    assert charlie_client.get(URL).json()["results"] == []  # another org's owner sees only theirs
    assert client_for_anonymous().get(URL).status_code == 401


def client_for_anonymous():
    from rest_framework.test import APIClient

    return APIClient()


def test_an_editor_gets_403_and_an_org_admin_reads(org_a, project, alice_actor):
    from projects.services import org_membership_set, project_member_add

    from .factories import AccountFactory

    dave, erin = AccountFactory(username="dave"), AccountFactory(username="erin")
    org_membership_set(org=org_a, account=dave, role="member")
    org_membership_set(org=org_a, account=erin, role="admin")
    project_member_add(actor=alice_actor, project=project, account=dave, role="editor")
    assert client_for(dave).get(URL).status_code == 403
    assert client_for(erin).get(URL).status_code == 200


def test_it_filters_by_action_actor_project_and_time(alice_c, key_c, org_a, project):
    key, client = key_c
    client.post("/api/v1/memories", {"content": "Team uses Postgres", "scope": "project", "project": "atlas"})
    by_action = alice_c.get(URL, {"action": "project.create"}).json()["results"]
    assert [e["target_id"] for e in by_action] == [str(project.pk)]
    by_key = alice_c.get(URL, {"actor": key.prefix}).json()["results"]
    assert [e["action"] for e in by_key] == ["memory.create"] and by_key[0]["project"] == project.pk
    assert len(alice_c.get(URL, {"project": "atlas"}).json()["results"]) == 3
    assert len(alice_c.get(URL, {"project": str(project.pk)}).json()["results"]) == 3
    assert alice_c.get(URL, {"since": "2999-01-01"}).json()["results"] == []
    assert alice_c.get(URL, {"until": "2000-01-01T00:00:00Z"}).json()["results"] == []
    bad = alice_c.get(URL, {"since": "yesterday"})
    assert bad.status_code == 400 and "since" in bad.content.decode()
    assert alice_c.get(URL, {"action": "memory.eat"}).status_code == 400
    assert alice_c.get(URL, {"actor": "a\x00b"}).status_code == 400
    assert alice_c.get(URL, {"project": "9" * 40}).json()["results"] == []


def test_it_takes_x_forwarded_for_only_when_told(alice_c, org_a, settings):
    alice_c.post("/api/v1/projects", {"name": "One"}, format="json", HTTP_X_FORWARDED_FOR="198.51.100.9")
    assert last(org_a, Action.PROJECT_CREATE).ip == IP
    settings.ENGRAM_TRUSTED_PROXIES = 1  # one proxy in front, which appends the client's address
    alice_c.post(
        "/api/v1/projects", {"name": "Two"}, format="json", HTTP_X_FORWARDED_FOR="10.1.1.1, 198.51.100.9"
    )
    assert last(org_a, Action.PROJECT_CREATE).ip == "198.51.100.9"
    alice_c.post("/api/v1/projects", {"name": "Three"}, format="json", HTTP_X_FORWARDED_FOR="not an address")
    assert last(org_a, Action.PROJECT_CREATE).ip is None


def test_the_schema_documents_the_endpoint(alice_client):
    schema = alice_client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/audit-log"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"action", "actor", "project", "since", "until", "cursor"} <= names


# ---- append-only -----------------------------------------------------------------------------------------


def test_events_cannot_be_changed_or_deleted(alice_actor, org_a, project):
    event = last(org_a, Action.PROJECT_CREATE)
    with pytest.raises(AppendOnly):
        AuditEvent.objects.filter(pk=event.pk).update(action=Action.KEY_CREATE)
    with pytest.raises(AppendOnly):
        AuditEvent.objects.filter(pk=event.pk).delete()
    event.details = {"edited": True}
    with pytest.raises(AppendOnly):
        event.save()
    with pytest.raises(AppendOnly):
        event.delete()
    assert AuditEvent.objects.get(pk=event.pk).details == {}


def test_staff_read_events_in_the_admin_but_cannot_change_them(org_a, project):
    from .factories import AccountFactory

    staff = AccountFactory(username="root", is_staff=True, is_superuser=True)
    client = client_for(staff)
    client.force_login(staff)
    event = last(org_a, Action.PROJECT_CREATE)
    assert client.get(reverse("admin:audit_auditevent_changelist")).status_code == 200
    page = client.get(reverse("admin:audit_auditevent_change", args=[event.pk]))
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert (
        client.post(reverse("admin:audit_auditevent_delete", args=[event.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert AuditEvent.objects.filter(pk=event.pk).exists()


# ---- the page ----------------------------------------------------------------------------------------------


def test_the_page_lists_the_orgs_events_for_admins_only(client, alice, bob, charlie, org_a, project):
    client.force_login(alice)
    page = client.get("/audit/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('data-testid="audit-event"') == 2 and "Project created" in html
    assert 'href="/audit/"' in html  # linked from the navigation
    filtered = client.get("/audit/", {"action": "membership.add"}).content.decode()
    assert filtered.count('data-testid="audit-event"') == 1
    bad = client.get("/audit/", {"since": "nonsense"})
    assert bad.status_code == 200 and "since" in bad.content.decode()
    client.force_login(bob)
    assert client.get("/audit/").status_code == 403
    assert 'href="/audit/"' not in client.get("/projects/").content.decode()
    client.force_login(charlie)
    assert 'data-testid="audit-event"' not in client.get("/audit/").content.decode()


def test_the_page_speaks_chinese(client, alice, org_a, project):
    client.force_login(alice)
    html = client.get("/audit/", HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "审计日志" in html and "项目已创建" in html
