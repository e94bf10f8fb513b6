"""Management commands: create_org, create_api_key (secret on the last line), seed_demo (idempotent)."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from guardian.models import UserObjectPermission

from core.text import keyword_tokens
from memory.models import MemoryItem, MemoryRevision
from projects.models import ApiKey, Organization, OrgMembership, Project, ProjectMembership, hash_secret

from .conftest import key_client
from .factories import MemoryItemFactory, OrgFactory


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_it_creates_an_org(db):
    output = run("create_org", "acme", "--name", "Acme Inc.")
    org = Organization.objects.get(slug="acme")
    assert org.name == "Acme Inc."
    assert "acme" in output


def test_it_refuses_a_duplicate_or_invalid_org(db):
    run("create_org", "acme")
    with pytest.raises(CommandError, match="already exists"):
        run("create_org", "acme")
    with pytest.raises(CommandError, match="not a valid slug"):
        run("create_org", "no spaces")
    assert list(Organization.objects.values_list("slug", flat=True)) == ["acme"]


def test_it_prints_a_working_secret_as_the_last_line(db):
    run("create_org", "acme")
    output = run("create_api_key", "--org", "acme", "--name", "my-agent")
    secret = output.strip().splitlines()[-1]
    key = ApiKey.objects.get(name="my-agent")
    assert key.hashed_secret == hash_secret(secret) and not key.read_only
    assert secret not in key.hashed_secret
    response = key_client(secret).post("/api/v1/projects", {"name": "From the CLI"}, format="json")
    assert response.status_code == 201
    assert Project.objects.get(org=key.org, name="From the CLI")


def test_it_makes_read_only_and_project_bound_keys(db):
    run("create_org", "acme")
    org = Organization.objects.get(slug="acme")
    Project.objects.create(org=org, name="Atlas", slug="atlas")
    Project.objects.create(org=org, name="Beacon", slug="beacon")
    secret = run("create_api_key", "--org", "acme", "--name", "reader", "--read-only", "--project", "atlas")
    secret = secret.strip().splitlines()[-1]
    key = ApiKey.objects.get(name="reader")
    assert key.read_only
    assert list(key.projects.values_list("slug", flat=True)) == ["atlas"]
    client = key_client(secret)
    assert [p["slug"] for p in client.get("/api/v1/projects").json()["results"]] == ["atlas"]
    assert client.post("/api/v1/projects", {"name": "Nope"}, format="json").status_code == 403


def test_it_refuses_unknown_orgs_and_projects(db):
    with pytest.raises(CommandError, match="No organization"):
        run("create_api_key", "--org", "ghost", "--name", "x")
    run("create_org", "acme")
    with pytest.raises(CommandError, match="Unknown project"):
        run("create_api_key", "--org", "acme", "--name", "x", "--project", "nowhere")
    assert not ApiKey.objects.exists()


def _demo_state() -> dict:
    User = get_user_model()
    return {
        "orgs": list(Organization.objects.values_list("slug", flat=True)),
        "accounts": sorted(User.objects.values_list("username", flat=True)),
        "org_members": sorted(OrgMembership.objects.values_list("account__username", "role", "user_id")),
        "projects": sorted(Project.objects.values_list("slug", flat=True)),
        "project_members": sorted(
            ProjectMembership.objects.values_list("project__slug", "account__username", "role")
        ),
        "memories": sorted(MemoryItem.objects.values_list("scope", "user_id", "content")),
        "revisions": MemoryRevision.objects.count(),
        "grants": UserObjectPermission.objects.count(),
    }


def test_it_seeds_the_demo_once_however_often_it_runs(db, client):
    run("seed_demo")
    first = _demo_state()
    run("seed_demo")
    assert _demo_state() == first

    assert first["orgs"] == ["demo"]
    assert first["projects"] == ["atlas", "beacon"]
    assert {"alice", "adam", "erin", "victor", "staff"} <= set(first["accounts"])
    roles = {(p, a): r for p, a, r in first["project_members"]}
    assert roles[("atlas", "alice")] == "owner"
    assert roles[("atlas", "adam")] == "admin"
    assert roles[("atlas", "erin")] == "editor"
    assert roles[("atlas", "victor")] == "viewer"
    assert any(scope == "project" for scope, _, _ in first["memories"])
    assert any(scope == "user" and user_id == "alice" for scope, user_id, _ in first["memories"])
    # the printed logins work
    assert client.login(username="erin", password="engram-demo")
    assert client.get("/api/v1/projects").status_code == 200


def test_it_keeps_the_production_compose_file_valid():
    """docker-compose.yml cannot run here; at least its shape and the files it points at are checked."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"db", "redis", "web", "worker", "beat"} <= set(services)
    assert "pgvector" in services["db"]["image"]
    for name in ("web", "worker", "beat"):
        assert services[name]["command"], name
        assert services[name]["environment"]["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        assert services[name]["build"] == "."
    assert "celery -A config worker" in services["worker"]["command"]
    # The workers by kind consume every kind between them (config/queues.py).
    from config.queues import KINDS, parse_kinds

    kinds = [
        kind
        for service in services.values()
        if "celery -A config worker" in service.get("command", "")
        for kind in parse_kinds(service["command"].split("ENGRAM_WORKER_QUEUES=")[1].split()[0])
    ]
    assert sorted(kinds) == sorted(KINDS)
    assert "celery -A config beat" in services["beat"]["command"]
    for volume in services["nginx"]["volumes"]:
        source = volume.split(":")[0]
        if source.startswith("./"):
            assert (root / source).is_file(), source
    assert (root / "Dockerfile").read_text().startswith("FROM python:3.11")


def test_it_reports_exit_codes_and_busy_ports_like_a_shell_would():
    import socket
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import devservices
    finally:
        sys.path.pop(0)
    assert devservices._exit_code(0) == 0
    assert devservices._exit_code(5) == 5  # pytest: no tests collected stays a failure
    assert devservices._exit_code(-2) == 130  # killed by SIGINT
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert devservices._port_taken(busy.getsockname()[1])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert not devservices._port_taken(free)


def test_it_starts_the_run_commands_worker_for_every_kind_or_the_kinds_asked():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import devservices
    finally:
        sys.path.pop(0)
    env = {"REDIS_URL": "redis://127.0.0.1:6379/0"}
    assert devservices.worker_env(env, "") == env  # every kind
    assert devservices.worker_env(env, " webhooks, extraction ") == {
        **env,
        "ENGRAM_WORKER_QUEUES": "webhooks,extraction",
    }
    with pytest.raises(
        ValueError, match="the kinds are extraction, embedding, profiles, webhooks, maintenance"
    ):
        devservices.worker_env(env, "extract")
    assert "-Q" not in devservices.worker_command()


def _stored_tokens(item) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(search_tokens) FROM memory_memoryitem WHERE id = %s", [item.pk]
        )
        return set(cursor.fetchone()[0] or ())


def test_memory_retokenize_rewrites_tokens_an_older_tokeniser_stored(db):
    org = OrgFactory(slug="acme")
    other = OrgFactory(slug="other")
    russian = MemoryItemFactory(org=org, content="Пользователь любит кофе")
    accented = MemoryItemFactory(org=org, content="Le café est fermé")
    current = MemoryItemFactory(org=org, content="Alice prefers short answers")
    elsewhere = MemoryItemFactory(org=other, content="Пользователь любит чай")
    # What the older tokeniser left: nothing for Cyrillic, fragments for accented Latin.
    MemoryItem.objects.filter(pk__in=[russian.pk, elsewhere.pk]).update(search_tokens=None)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_memoryitem SET search_tokens = array_to_tsvector(ARRAY['caf', 'ferm']) WHERE id = %s",
            [accented.pk],
        )
    before = _stored_tokens(current)

    output = run("memory_retokenize", "--org", "acme", "--dry-run")
    assert "done: 2 of 3 memories would change" in output
    assert _stored_tokens(russian) == set()

    output = run("memory_retokenize", "--org", "acme", "--chunk", "2")
    assert "done: 2 of 3 memories changed" in output
    assert _stored_tokens(russian) == set(keyword_tokens(russian.content)) >= {"кофе"}
    assert _stored_tokens(accented) == set(keyword_tokens(accented.content)) >= {"café"}
    assert _stored_tokens(current) == before
    assert _stored_tokens(elsewhere) == set()  # another org: not asked for

    assert "done: 0 of 3 memories changed" in run("memory_retokenize", "--org", "acme")
    with pytest.raises(CommandError, match="No organization"):
        run("memory_retokenize", "--org", "nope")
