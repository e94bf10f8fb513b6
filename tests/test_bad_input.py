"""Bad input gets a 4xx JSON error with a message, never a 500, and writes nothing."""

import json

import pytest
from django.apps import apps
from django.db import models
from django.test import override_settings

from projects.models import ApiKey, Organization, Project, ProjectMembership

from .test_isolation import ROUTES


def tenant_counts() -> dict:
    """Row counts of every tenant table (and the orgs): the 'nothing written' check."""
    counts = {"projects.Organization": Organization.objects.count()}
    for model in apps.get_models():
        field = next((f for f in model._meta.concrete_fields if f.name == "org"), None)
        if field is not None and isinstance(field, models.ForeignKey | models.OneToOneField):
            counts[model._meta.label] = model.objects.count()
    return counts


def assert_error(response, status, code=None):
    assert response.status_code == status, (response.status_code, response.content[:300])
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["message"], body
    if code:
        assert body["error"]["code"] == code, body
    return body["error"]


def raw(client, method, url, data: bytes | str, content_type="application/json"):
    return getattr(client, method)(url, data=data, content_type=content_type)


@pytest.fixture
def member(project, bob):
    return ProjectMembership.objects.get(project=project, account=bob)


# ---- unknown fields and wrong types on the foundation's endpoints -----------------------------------

CASES = [
    # (name, method, url template, body, field named in the error)
    ("project unknown field", "post", "/api/v1/projects", {"name": "Zed", "colour": "red"}, "colour"),
    ("project read-only field", "post", "/api/v1/projects", {"name": "Zed", "id": 5}, "id"),
    ("project name object", "post", "/api/v1/projects", {"name": {"a": 1}}, "name"),
    ("project name list", "post", "/api/v1/projects", {"name": ["Zed"]}, "name"),
    ("project name missing", "post", "/api/v1/projects", {"description": "no name"}, "name"),
    ("project name blank", "post", "/api/v1/projects", {"name": ""}, "name"),
    ("project name too long", "post", "/api/v1/projects", {"name": "x" * 201}, "name"),
    ("project bad slug", "post", "/api/v1/projects", {"name": "Zed", "slug": "no spaces!"}, "slug"),
    ("project duplicate slug", "post", "/api/v1/projects", {"name": "Atlas again", "slug": "atlas"}, "slug"),
    ("project patch unknown", "patch", "/api/v1/projects/{project}", {"owner": "me"}, "owner"),
    ("project patch type", "patch", "/api/v1/projects/{project}", {"description": ["x"]}, "description"),
    (
        "member unknown field",
        "post",
        "/api/v1/projects/{project}/members",
        {"username": "bob", "role": "viewer", "x": 1},
        "x",
    ),
    (
        "member bad role",
        "post",
        "/api/v1/projects/{project}/members",
        {"username": "carol", "role": "god"},
        "role",
    ),
    (
        "member role type",
        "post",
        "/api/v1/projects/{project}/members",
        {"username": "carol", "role": 3},
        "role",
    ),
    (
        "member account type",
        "post",
        "/api/v1/projects/{project}/members",
        {"account": "abc", "role": "viewer"},
        "account",
    ),
    ("member nobody", "post", "/api/v1/projects/{project}/members", {"role": "viewer"}, "account"),
    (
        "member not in org",
        "post",
        "/api/v1/projects/{project}/members",
        {"username": "charlie", "role": "viewer"},
        "account",
    ),
    (
        "member already",
        "post",
        "/api/v1/projects/{project}/members",
        {"username": "bob", "role": "editor"},
        "account",
    ),
    (
        "member patch bad role",
        "patch",
        "/api/v1/projects/{project}/members/{member}",
        {"role": "boss"},
        "role",
    ),
    (
        "member patch unknown",
        "patch",
        "/api/v1/projects/{project}/members/{member}",
        {"role": "editor", "since": 1},
        "since",
    ),
    ("key no name", "post", "/api/v1/api-keys", {}, "name"),
    ("key unknown field", "post", "/api/v1/api-keys", {"name": "k", "scopes": ["all"]}, "scopes"),
    ("key read_only type", "post", "/api/v1/api-keys", {"name": "k", "read_only": "maybe"}, "read_only"),
    ("key projects type", "post", "/api/v1/api-keys", {"name": "k", "projects": "atlas"}, "projects"),
    ("key projects items", "post", "/api/v1/api-keys", {"name": "k", "projects": ["atlas"]}, "projects"),
    ("key unknown project", "post", "/api/v1/api-keys", {"name": "k", "projects": [987654321]}, "project"),
    ("key name too long", "post", "/api/v1/api-keys", {"name": "k" * 101}, "name"),
]


@pytest.mark.parametrize("name,method,url,body,field", CASES, ids=[c[0] for c in CASES])
def test_it_rejects_bad_fields_with_400_and_writes_nothing(
    name, method, url, body, field, alice_client, project, member, charlie
):
    url = url.format(project=project.pk, member=member.pk)
    before = tenant_counts()
    snapshot = (project.name, project.slug, project.description, member.role)
    response = getattr(alice_client, method)(url, body, format="json")
    error = assert_error(response, 400)
    assert field in error["message"] or field in json.dumps(error.get("details", {})), error
    assert tenant_counts() == before
    project.refresh_from_db()
    member.refresh_from_db()
    assert (project.name, project.slug, project.description, member.role) == snapshot


# ---- malformed bodies ----------------------------------------------------------------------------------

MALFORMED = [
    ("truncated", b'{"name": "Zed"'),
    ("trailing comma", b'{"name": "Zed",}'),
    ("single quotes", b"{'name': 'Zed'}"),
    ("not utf-8", b'{"name": "\xff\xfe"}'),
    ("NaN", b'{"name": "Zed", "description": NaN}'),
    ("deeply nested", b"[" * 100_000 + b"]" * 100_000),
    ("empty", b""),
    ("a list", b'[{"name": "Zed"}]'),
    ("a string", b'"Zed"'),
    ("null", b"null"),
]


@pytest.mark.parametrize("name,data", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_it_rejects_malformed_json_with_400_and_a_message(name, data, alice_client, org_a):
    before = tenant_counts()
    response = raw(alice_client, "post", "/api/v1/projects", data)
    error = assert_error(response, 400)
    if name in ("truncated", "trailing comma", "single quotes", "not utf-8", "NaN", "deeply nested"):
        assert error["code"] == "malformed"
        assert "JSON" in error["message"] or "utf-8" in error["message"].lower()
    assert tenant_counts() == before


def test_it_rejects_a_body_that_is_not_json(alice_client, org_a):
    before = tenant_counts()
    response = raw(alice_client, "post", "/api/v1/projects", "name=Zed", "application/x-www-form-urlencoded")
    assert_error(response, 415, "unsupported_media_type")
    response = raw(alice_client, "post", "/api/v1/projects", "name: Zed", "text/plain")
    assert_error(response, 415)
    assert tenant_counts() == before


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4096)
def test_it_rejects_a_body_over_the_limit_with_413(alice_client, project):
    before = tenant_counts()
    body = json.dumps({"name": "Big", "description": "x" * 5000})
    response = raw(alice_client, "post", "/api/v1/projects", body)
    error = assert_error(response, 413, "too_large")
    assert "4096" in error["message"]
    assert tenant_counts() == before
    # just under the limit is fine
    ok = raw(
        alice_client, "post", "/api/v1/projects", json.dumps({"name": "Small", "description": "x" * 3000})
    )
    assert ok.status_code == 201
    assert Project.objects.filter(name="Small").exists()


def test_it_rejects_a_body_over_the_default_limit(alice_client, org_a, settings):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    before = tenant_counts()
    body = b'{"name": "Huge", "description": "' + b"x" * (limit + 10) + b'"}'
    response = raw(alice_client, "post", "/api/v1/projects", body)
    assert_error(response, 413, "too_large")
    assert tenant_counts() == before
    assert not Project.objects.filter(name="Huge").exists()


# ---- ids and query strings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/projects/abc",
        "/api/v1/projects/99999999999999999999999",
        "/api/v1/projects/-1",
        "/api/v1/api-keys/1e3",
        "/api/v1/projects/9223372036854775807/members",
        "/api/v1/no-such-endpoint",
    ],
)
def test_it_answers_404_json_for_ids_that_cannot_exist(url, alice_client, project):
    assert_error(alice_client.get(url), 404, "not_found")


def test_it_answers_a_bad_cursor_with_a_json_error(alice_client, project):
    response = alice_client.get("/api/v1/projects", {"cursor": "not-a-cursor"})
    assert 400 <= response.status_code < 500
    assert response.json()["error"]["message"]


def test_it_answers_404_for_an_org_header_the_account_is_not_in(alice_client, org_b, project):
    response = alice_client.get("/api/v1/projects", HTTP_X_ENGRAM_ORG="org-b")
    assert_error(response, 404)


def test_it_rejects_a_bad_role_through_the_service_too(alice_actor, project, bob):
    from django.core.exceptions import ValidationError

    from projects.services import project_member_change_role

    membership = ProjectMembership.objects.get(project=project, account=bob)
    with pytest.raises(ValidationError):
        project_member_change_role(actor=alice_actor, membership=membership, role="superuser")
    membership.refresh_from_db()
    assert membership.role == "viewer"


# ---- every write route of the API: hostile bodies never give a 500 and never write ----------------------

BODY_ROUTES = [
    r
    for r in ROUTES
    if set(r.methods) & {"post", "put", "patch"}
    and all(kind == "str" for _, kind in r.kwargs)
    # MCP is answered by its own process, which reads committed rows: tests/test_mcp.py sends it these
    and r.template != "api/v1/mcp"
]
HOSTILE = [
    ("malformed", b'{"content": '),
    ("a list", b"[1, 2, 3]"),
    (
        "wrong types",
        json.dumps({"content": {"x": 1}, "name": [1], "user_id": 5, "query": {"a": None}}).encode(),
    ),
    ("deeply nested", b'{"a": ' * 50_000 + b"1" + b"}" * 50_000),
]


@pytest.mark.parametrize("route", BODY_ROUTES, ids=[r.template.removeprefix("api/v1/") for r in BODY_ROUTES])
def test_it_never_fails_with_500_on_hostile_bodies(route, alice_client, project, key_a):
    values = {
        name: {"user_id": "alice", "session_id": "sess-bad", "agent_id": "agent-bad"}.get(name, "x")
        for name, _ in route.kwargs
    }
    url = route.url(values)
    for who, client in (("account", alice_client), ("key", key_a[1])):
        for method in [m for m in route.methods if m in ("post", "put", "patch")]:
            for name, data in HOSTILE:
                before = tenant_counts()
                response = raw(client, method, url, data)
                where = f"{who} {method.upper()} {url} with {name}"
                body = response.json()
                if isinstance(body, dict) and body.get("jsonrpc") == "2.0":
                    # JSON-RPC (MCP) reports errors in-band, with HTTP 200 or 4xx: it must still be an error
                    assert response.status_code < 500, (where, response.status_code, response.content[:300])
                    assert body["error"]["message"] and isinstance(body["error"]["code"], int), where
                    assert "result" not in body, where
                else:
                    assert 400 <= response.status_code < 500, (
                        where,
                        response.status_code,
                        response.content[:300],
                    )
                    assert body["error"]["message"], where
                assert tenant_counts() == before, where


def test_it_keeps_keys_unwritten_on_bad_input(alice_client, org_a):
    before = ApiKey.objects.count()
    for body in ({"name": ""}, {"name": "   "}, {"name": None}, {"name": "ok", "read_only": None}):
        response = alice_client.post("/api/v1/api-keys", body, format="json")
        assert_error(response, 400)
    assert ApiKey.objects.count() == before


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1024)
def test_it_stops_reading_a_streamed_body_at_the_limit():
    """Under a real server DRF hands the socket to the parser: it reads at most limit + 1 bytes."""
    import io

    from projects.api.errors import ApiError
    from projects.api.parsers import JSONParser

    stream = io.BytesIO(b'{"a": "' + b"x" * 10_000 + b'"}')
    with pytest.raises(ApiError) as caught:
        JSONParser().parse(stream, "application/json", {})
    assert caught.value.status_code == 413
    assert stream.tell() == 1025
    assert JSONParser().parse(io.BytesIO(b'{"a": 1}'), "application/json", {}) == {"a": 1}


def test_it_refuses_renaming_a_project_onto_another_slug(alice_client, alice_actor, project):
    from projects.services import project_create

    other = project_create(actor=alice_actor, name="Borealis", slug="borealis")
    response = alice_client.patch(f"/api/v1/projects/{other.pk}", {"slug": "atlas"}, format="json")
    assert "slug" in assert_error(response, 400)["message"]
    other.refresh_from_db()
    assert other.slug == "borealis"
    renamed = alice_client.patch(f"/api/v1/projects/{other.pk}", {"slug": "boreal"}, format="json")
    assert renamed.status_code == 200
    other.refresh_from_db()
    assert other.slug == "boreal"
