"""Org API keys: shown once and stored hashed, revocable, read-only or read-write, optionally project-bound."""

import hashlib
import logging

import pytest
from django.db import connection
from rest_framework.test import APIClient

from memory.drafts import MemoryDraft
from memory.models import MemoryItem
from memory.services import memory_create
from projects.access import actor_for_account
from projects.models import ApiKey, Project
from projects.services import api_key_create, project_create

from .conftest import client_for, key_client


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] and body["error"]["message"], body
    return body["error"]


@pytest.fixture
def created(alice_client, org_a):
    """A key made through the API by alice (org owner): (response body, secret)."""
    response = alice_client.post("/api/v1/api-keys", {"name": "support-bot"}, format="json")
    assert response.status_code == 201, response.content
    return response.json(), response.json()["secret"]


def test_it_shows_the_secret_once_and_stores_only_its_hash(created, alice_client, org_a):
    body, secret = created
    key = ApiKey.objects.get(pk=body["id"])
    assert key.org == org_a and key.name == "support-bot" and not key.read_only
    assert key.hashed_secret == hashlib.sha256(secret.encode()).hexdigest()
    assert secret.startswith(key.prefix + ".")
    # the secret is in no column of any row of the key table
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM projects_apikey t WHERE strpos(t::text, %s) > 0", [secret])
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT count(*) FROM projects_apikey t WHERE strpos(t::text, %s) > 0", [secret[-20:]])
        assert cursor.fetchone()[0] == 0
    # and never shown again
    assert "secret" not in alice_client.get(f"/api/v1/api-keys/{key.pk}").json()
    listing = alice_client.get("/api/v1/api-keys").json()["results"]
    assert [k["prefix"] for k in listing] == [key.prefix]
    assert secret not in str(listing)


def test_it_authenticates_with_the_secret_and_records_last_use(created, org_a):
    body, secret = created
    assert ApiKey.objects.get(pk=body["id"]).last_used_at is None
    response = key_client(secret).get("/api/v1/projects")
    assert response.status_code == 200
    assert ApiKey.objects.get(pk=body["id"]).last_used_at is not None


def test_it_refuses_a_revoked_key_with_401(created, alice_client):
    body, secret = created
    client = key_client(secret)
    assert client.get("/api/v1/projects").status_code == 200
    revoke = alice_client.post(f"/api/v1/api-keys/{body['id']}/revoke")
    assert revoke.status_code == 200
    assert revoke.json()["revoked_at"]
    assert ApiKey.objects.get(pk=body["id"]).revoked_at is not None
    response = client.get("/api/v1/projects")
    assert response.status_code == 401
    assert error_of(response) == {"code": "not_authenticated", "message": "This API key has been revoked."}
    write = client.post("/api/v1/projects", {"name": "After revoke"}, format="json")
    assert write.status_code == 401
    assert not Project.objects.filter(name="After revoke").exists()


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer    ",
        "Bearer two parts",
        "Bearer eng_00000000.not-a-real-secret",
        "Bearer " + "x" * 5000,
        "Token abc",
        "Basic YWxpY2U6cHc=",
        "bearer",
    ],
)
def test_it_answers_401_with_a_json_error_for_bad_authorization_headers(header, org_a):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    before = Project.objects.count()
    response = client.post("/api/v1/projects", {"name": "Sneaky"}, format="json")
    assert response.status_code == 401, (header, response.content)
    assert error_of(response)["code"] == "not_authenticated"
    assert response.headers.get("WWW-Authenticate") == "Bearer"
    assert Project.objects.count() == before


def test_it_answers_401_without_credentials(org_a):
    client = APIClient()
    response = client.get("/api/v1/memories")
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"


def test_it_lets_a_read_only_key_read_but_not_write(org_a, alice, project):
    alice_actor = actor_for_account(alice, org_a)
    item = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(
            content="Atlas targets PostgreSQL 16.", scope="project", project=project, user_id="alice"
        ),
    ).item
    _, secret = api_key_create(org=org_a, name="reader", read_only=True)
    client = key_client(secret)
    assert client.get("/api/v1/projects").status_code == 200
    assert client.get(f"/api/v1/memories/{item.pk}").status_code == 200
    projects, memories = Project.objects.count(), MemoryItem.objects.count()
    writes = [
        client.post("/api/v1/projects", {"name": "Nope"}, format="json"),
        client.patch(f"/api/v1/projects/{project.pk}", {"name": "Renamed"}, format="json"),
        client.delete(f"/api/v1/projects/{project.pk}"),
        client.post(
            "/api/v1/memories",
            {"content": "A read-only key tries to write.", "user_id": "alice"},
            format="json",
        ),
        client.patch(f"/api/v1/memories/{item.pk}", {"content": "Overwritten by a reader."}, format="json"),
        client.delete(f"/api/v1/memories/{item.pk}"),
    ]
    for response in writes:
        assert response.status_code == 403, (response.request["PATH_INFO"], response.content)
        assert error_of(response)["code"] == "permission_denied"
    assert (Project.objects.count(), MemoryItem.objects.count()) == (projects, memories)
    project.refresh_from_db()
    assert project.name == "Atlas"
    assert MemoryItem.objects.get(pk=item.pk).content == "Atlas targets PostgreSQL 16."


def test_it_limits_a_project_restricted_key_to_its_projects(org_a, alice, project):
    alice_actor = actor_for_account(alice, org_a)
    other = project_create(actor=alice_actor, name="Borealis", slug="borealis")
    inside = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Atlas ships on Fridays.", scope="project", project=project),
    ).item
    outside = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(
            content="Borealis is a secret skunkworks.", scope="project", project=other, visibility="public"
        ),
    ).item
    response = client_for(alice).post(
        "/api/v1/api-keys", {"name": "atlas-bot", "projects": [project.pk]}, format="json"
    )
    assert response.status_code == 201
    assert ApiKey.objects.get(pk=response.json()["id"]).projects.get() == project
    client = key_client(response.json()["secret"])

    assert [p["slug"] for p in client.get("/api/v1/projects").json()["results"]] == ["atlas"]
    assert client.get(f"/api/v1/projects/{other.pk}").status_code == 404
    assert client.get(f"/api/v1/projects/{other.pk}/members").status_code == 404
    ids = {m["id"] for m in client.get("/api/v1/memories", {"page_size": 500}).json()["results"]}
    assert inside.pk in ids and outside.pk not in ids
    assert client.get(f"/api/v1/memories/{outside.pk}").status_code == 404
    create = client.post(
        "/api/v1/memories",
        {"content": "Written into the wrong project.", "scope": "project", "project": other.pk},
        format="json",
    )
    assert create.status_code == 404
    assert not MemoryItem.objects.filter(project=other, content__startswith="Written").exists()
    # nor may it make projects outside its restriction
    assert client.post("/api/v1/projects", {"name": "Escape"}, format="json").status_code == 403
    assert not Project.objects.filter(name="Escape").exists()
    # inside its project it writes like an admin
    ok = client.post(
        "/api/v1/memories",
        {"content": "Atlas release moved to Monday.", "scope": "project", "project": project.pk},
        format="json",
    )
    assert ok.status_code == 201
    assert MemoryItem.objects.get(pk=ok.json()["id"]).created_by_key_id == response.json()["id"]


def test_it_lets_only_org_admin_accounts_manage_keys(org_a, bob, key_a, created):
    body, _ = created
    for client in (client_for(bob), key_a[1]):
        assert client.get("/api/v1/api-keys").status_code == 403
        assert client.get(f"/api/v1/api-keys/{body['id']}").status_code == 403
        assert client.post(f"/api/v1/api-keys/{body['id']}/revoke").status_code == 403
        response = client.post("/api/v1/api-keys", {"name": "self-made"}, format="json")
        assert response.status_code == 403
        assert error_of(response)["code"] == "permission_denied"
    assert not ApiKey.objects.filter(name="self-made").exists()
    assert ApiKey.objects.get(pk=body["id"]).revoked_at is None


def test_it_hides_and_protects_keys_from_other_orgs(created, charlie_client, key_b):
    body, secret = created
    assert charlie_client.get(f"/api/v1/api-keys/{body['id']}").status_code == 404
    assert charlie_client.post(f"/api/v1/api-keys/{body['id']}/revoke").status_code == 404
    assert key_b[1].get(f"/api/v1/api-keys/{body['id']}").status_code == 404
    assert ApiKey.objects.get(pk=body["id"]).revoked_at is None
    assert body["prefix"] not in str(charlie_client.get("/api/v1/api-keys").json())
    assert key_client(secret).get("/api/v1/projects").status_code == 200


def test_it_refuses_projects_of_another_org_when_creating_a_key(alice_client, charlie, org_b, org_a):
    bravo = project_create(actor=actor_for_account(charlie, org_b), name="Bravo", slug="bravo")
    before = ApiKey.objects.count()
    response = alice_client.post("/api/v1/api-keys", {"name": "cross", "projects": [bravo.pk]}, format="json")
    assert response.status_code == 400
    assert "project" in error_of(response)["message"].lower()
    assert ApiKey.objects.count() == before


def test_it_never_logs_a_secret(alice_client, caplog):
    with caplog.at_level(logging.DEBUG):
        response = alice_client.post("/api/v1/api-keys", {"name": "quiet"}, format="json")
        secret = response.json()["secret"]
        key_client(secret).get("/api/v1/projects")
        key_client(secret + "x").get("/api/v1/projects")
    assert secret not in caplog.text


def test_a_project_made_with_a_key_is_owned_by_whoever_made_the_key(org_a, alice, bob):
    from projects.models import ProjectMembership, ProjectRole

    made_by_alice, secret = api_key_create(org=org_a, name="alice-bot", created_by=alice)
    response = key_client(secret).post("/api/v1/projects", {"name": "Bot project"}, format="json")
    assert response.status_code == 201, response.content
    project = Project.objects.get(pk=response.json()["id"])
    assert list(ProjectMembership.objects.filter(project=project).values_list("account", "role")) == [
        (alice.pk, ProjectRole.OWNER)
    ]
    assert alice.has_perm("projects.manage_members", project)

    # A key nobody made (create_api_key) leaves the project to the org's owners and admins.
    _, orphan = api_key_create(org=org_a, name="cli-bot")
    response = key_client(orphan).post("/api/v1/projects", {"name": "CLI project"}, format="json")
    assert not ProjectMembership.objects.filter(project_id=response.json()["id"]).exists()


def test_a_key_whose_every_project_was_deleted_reaches_nothing(org_a, alice, project):
    """Deleting the projects a key is restricted to must not lift its restriction: it is revoked."""
    alice_actor = actor_for_account(alice, org_a)
    other = project_create(actor=alice_actor, name="Borealis", slug="borealis")
    elsewhere = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Borealis is a secret skunkworks.", scope="project", project=other),
    ).item
    both, both_secret = api_key_create(org=org_a, name="two-projects", projects=[project, other])
    only, only_secret = api_key_create(org=org_a, name="atlas-only", projects=[project])
    client_for(alice).delete(f"/api/v1/projects/{project.pk}")

    assert key_client(only_secret).get(f"/api/v1/memories/{elsewhere.pk}").status_code == 401
    assert key_client(only_secret).get("/api/v1/projects").status_code == 401
    assert ApiKey.objects.get(pk=only.pk).revoked_at is not None
    # A key that still has a project keeps it, and only it.
    assert [p["slug"] for p in key_client(both_secret).get("/api/v1/projects").json()["results"]] == [
        "borealis"
    ]
    assert ApiKey.objects.get(pk=both.pk).revoked_at is None
