"""Every operation of the OpenAPI schema the live server serves is reachable from the Python client: a table
maps each (method, path) to a client call, the table must name exactly the schema's operations, and each
call is made against the server and must send that method to that path. Also: the client is a package pip
can build and install, and it imports nothing of the server."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from engram_client import APIError, Engram

from projects.services import api_key_create

from .factories import OrgFactory

CLIENT_DIR = Path(__file__).resolve().parents[1] / "clients" / "python"
METHODS = ("get", "post", "put", "patch", "delete")
ID = 999_999  # no such row: the call reaches the route and answers 404, changing nothing

# (METHOD, path in the schema) -> the client call that sends it.
OPERATIONS = {
    ("GET", "/api/v1/agents/{agent_id}/memories"): lambda c: list(c.agents.list("bot", user_id="nobody")),
    ("POST", "/api/v1/agents/{agent_id}/memories"): lambda c: c.agents.add("bot", "", user_id="nobody"),
    ("DELETE", "/api/v1/agents/{agent_id}/memories"): lambda c: c.agents.delete_all("bot", user_id="nobody"),
    ("PATCH", "/api/v1/agents/{agent_id}/memories/{id}"): lambda c: c.agents.update("bot", ID, pinned=True),
    ("DELETE", "/api/v1/agents/{agent_id}/memories/{id}"): lambda c: c.agents.delete("bot", ID),
    ("GET", "/api/v1/agents/{agent_id}/memories/stats"): lambda c: c.agents.stats("bot"),
    ("GET", "/api/v1/api-keys"): lambda c: list(c.api_keys.list()),
    ("POST", "/api/v1/api-keys"): lambda c: c.api_keys.create("", read_only=True),
    ("GET", "/api/v1/api-keys/{id}"): lambda c: c.api_keys.get(ID),
    ("POST", "/api/v1/api-keys/{id}/revoke"): lambda c: c.api_keys.revoke(ID),
    ("GET", "/api/v1/audit-log"): lambda c: list(c.audit.list()),
    ("GET", "/api/v1/webhooks"): lambda c: list(c.webhooks.list()),
    ("POST", "/api/v1/webhooks"): lambda c: c.webhooks.create("http://127.0.0.1:9/hook"),
    ("GET", "/api/v1/webhooks/{id}"): lambda c: c.webhooks.get(ID),
    ("PATCH", "/api/v1/webhooks/{id}"): lambda c: c.webhooks.update(ID, description="x"),
    ("DELETE", "/api/v1/webhooks/{id}"): lambda c: c.webhooks.delete(ID),
    ("POST", "/api/v1/webhooks/{id}/rotate-secret"): lambda c: c.webhooks.rotate_secret(ID),
    ("POST", "/api/v1/webhooks/{id}/test"): lambda c: c.webhooks.test(ID),
    ("GET", "/api/v1/webhooks/{webhook_pk}/deliveries"): lambda c: list(c.webhooks.deliveries(ID)),
    ("GET", "/api/v1/webhooks/{webhook_pk}/deliveries/{id}"): lambda c: c.webhooks.delivery(ID, ID),
    ("POST", "/api/v1/webhooks/{webhook_pk}/deliveries/{id}/retry"): lambda c: c.webhooks.retry(ID, ID),
    ("GET", "/api/v1/checkpoints/{id}"): lambda c: c.checkpoints.get(ID),
    ("POST", "/api/v1/checkpoints/{id}/approve"): lambda c: c.checkpoints.approve(ID),
    ("POST", "/api/v1/checkpoints/{id}/reject"): lambda c: c.checkpoints.reject(ID),
    ("POST", "/api/v1/checkpoints/{id}/restore"): lambda c: c.checkpoints.restore(ID),
    ("POST", "/api/v1/context"): lambda c: c.context.get(user_id="nobody", query="tea"),
    ("GET", "/api/v1/embedding-config"): lambda c: c.embedding_config.get(),
    ("PUT", "/api/v1/embedding-config"): lambda c: c.embedding_config.set(provider="nope"),
    ("DELETE", "/api/v1/embedding-config"): lambda c: c.embedding_config.delete(level="user"),
    ("GET", "/api/v1/extraction-jobs"): lambda c: list(c.jobs.list()),
    ("GET", "/api/v1/extraction-jobs/{id}"): lambda c: c.jobs.get(ID),
    ("POST", "/api/v1/extraction-jobs/{id}/retry"): lambda c: c.jobs.retry(ID),
    ("GET", "/api/v1/injections"): lambda c: list(c.injections.list(user_id="nobody")),
    ("GET", "/api/v1/llm-config"): lambda c: c.llm_config.get(),
    ("PUT", "/api/v1/llm-config"): lambda c: c.llm_config.set(model=""),
    ("DELETE", "/api/v1/llm-config"): lambda c: c.llm_config.delete(),
    ("PUT", "/api/v1/store/items"): lambda c: c.store.put(["ns"], "k", {"v": 1}),
    ("GET", "/api/v1/store/items"): lambda c: c.store.get(["ns"], "k"),
    ("DELETE", "/api/v1/store/items"): lambda c: c.store.delete(["ns"], "k"),
    ("POST", "/api/v1/store/items/search"): lambda c: c.store.search(["ns"], query="tea"),
    ("POST", "/api/v1/store/namespaces"): lambda c: c.store.namespaces(),
    ("GET", "/api/v1/memories"): lambda c: list(c.memories.list(user_id="nobody")),
    ("POST", "/api/v1/memories"): lambda c: c.memories.add("", user_id="nobody"),
    ("DELETE", "/api/v1/memories"): lambda c: c.memories.delete_all(user_id="nobody"),
    ("GET", "/api/v1/memories/{id}"): lambda c: c.memories.get(ID),
    ("PATCH", "/api/v1/memories/{id}"): lambda c: c.memories.update(ID, pinned=True),
    ("DELETE", "/api/v1/memories/{id}"): lambda c: c.memories.delete(ID),
    ("GET", "/api/v1/memories/{id}/history"): lambda c: c.memories.history(ID),
    ("GET", "/api/v1/memories/{id}/injections"): lambda c: list(c.memories.injections(ID)),
    ("POST", "/api/v1/memories/{id}/restore"): lambda c: c.memories.restore(ID, 1),
    ("POST", "/api/v1/memories/{id}/split"): lambda c: c.memories.split(ID, 1),
    ("GET", "/api/v1/memories/{id}/feedback"): lambda c: list(c.memories.feedback_list(ID)),
    ("POST", "/api/v1/memories/{id}/feedback"): lambda c: c.memories.feedback(ID, "useful", user_id="nobody"),
    ("POST", "/api/v1/memories/batch"): lambda c: c.memories.batch([{"content": ""}], infer=False),
    ("GET", "/api/v1/memories/markdown"): lambda c: c.markdown.get(user_id="nobody"),
    ("PUT", "/api/v1/memories/markdown"): lambda c: c.markdown.put("", base_version="x", user_id="nobody"),
    ("POST", "/api/v1/memories/search"): lambda c: c.memories.search("tea", user_id="nobody"),
    ("GET", "/api/v1/memories/stats"): lambda c: c.memories.stats(user_id="nobody"),
    ("GET", "/api/v1/profiles/users/{user_id}"): lambda c: c.profiles.get_user("nobody"),
    ("PATCH", "/api/v1/profiles/users/{user_id}"): lambda c: c.profiles.update_user("nobody", x=1),
    ("GET", "/api/v1/projects"): lambda c: list(c.projects.list()),
    ("POST", "/api/v1/projects"): lambda c: c.projects.create(""),
    ("GET", "/api/v1/projects/{id}"): lambda c: c.projects.get(ID),
    ("PUT", "/api/v1/projects/{id}"): lambda c: c.projects.replace(ID, name="x"),
    ("PATCH", "/api/v1/projects/{id}"): lambda c: c.projects.update(ID, name="x"),
    ("DELETE", "/api/v1/projects/{id}"): lambda c: c.projects.delete(ID),
    ("GET", "/api/v1/projects/{id}/profile"): lambda c: c.profiles.get_project(ID),
    ("PATCH", "/api/v1/projects/{id}/profile"): lambda c: c.profiles.update_project(ID, phase="x"),
    ("GET", "/api/v1/projects/{project_pk}/members"): lambda c: list(c.projects.members.list(ID)),
    ("POST", "/api/v1/projects/{project_pk}/members"): lambda c: c.projects.members.add(ID, role="viewer"),
    ("PATCH", "/api/v1/projects/{project_pk}/members/{id}"): lambda c: c.projects.members.update(
        ID, ID, role="viewer"
    ),
    ("DELETE", "/api/v1/projects/{project_pk}/members/{id}"): lambda c: c.projects.members.remove(ID, ID),
    ("GET", "/api/v1/reembed-jobs"): lambda c: list(c.reembed_jobs.list()),
    ("GET", "/api/v1/reembed-jobs/{id}"): lambda c: c.reembed_jobs.get(ID),
    ("GET", "/api/v1/sessions"): lambda c: list(c.sessions.list(user_id="nobody")),
    ("GET", "/api/v1/sessions/{session_id}"): lambda c: c.sessions.get("no-such-session"),
    ("DELETE", "/api/v1/sessions/{session_id}"): lambda c: c.sessions.delete("no-such-session"),
    ("GET", "/api/v1/sessions/{session_id}/checkpoints"): lambda c: list(
        c.checkpoints.list("no-such-session")
    ),
    ("PUT", "/api/v1/sessions/{session_id}/checkpoints"): lambda c: c.checkpoints.save("s", parent=0),
    ("GET", "/api/v1/sessions/{session_id}/checkpoints/archived"): lambda c: list(
        c.checkpoints.archived("no-such-session")
    ),
    ("GET", "/api/v1/sessions/{session_id}/checkpoints/latest"): lambda c: c.checkpoints.latest(
        "no-such-session"
    ),
    ("POST", "/api/v1/sessions/{session_id}/messages"): lambda c: c.sessions.append(
        "s", [], user_id="nobody"
    ),
    ("GET", "/api/v1/tools"): lambda c: c.tools.list(),
    ("POST", "/api/v1/tools/{name}/invoke"): lambda c: c.tools.invoke("memory_search", {}, user_id="nobody"),
    ("DELETE", "/api/v1/users/{user_id}"): lambda c: c.users.forget("nobody"),
    ("GET", "/api/v1/users/{user_id}/export"): lambda c: c.users.export("nobody"),
    ("POST", "/api/v1/users/{user_id}/import"): lambda c: c.users.import_("nobody", {}),
    ("GET", "/api/v1/users/{user_id}/memory-pause"): lambda c: c.users.pause_state("nobody"),
    ("PUT", "/api/v1/users/{user_id}/memory-pause"): lambda c: c.users.pause("nobody", session_id="s"),
    ("DELETE", "/api/v1/users/{user_id}/memory-pause"): lambda c: c.users.resume("nobody", session_id="s"),
}


def template_of(path: str, templates: list[str]) -> str | None:
    """The schema path a request path matches; literal segments win over parameters (memories/stats
    before memories/{id})."""
    matches = []
    for template in templates:
        pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path):
            matches.append((template.count("{"), template))
    return min(matches)[1] if matches else None


def test_every_schema_operation_is_reachable_from_the_client(live_server, transactional_db):
    schema = httpx.get(f"{live_server.url}/api/schema/?format=json", timeout=30).json()
    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in METHODS
    }
    missing = sorted(operations - OPERATIONS.keys())
    assert not missing, (
        "operations the client does not reach (add a method and a row in OPERATIONS): "
        + ", ".join(f"{m} {p}" for m, p in missing)
    )
    stale = sorted(OPERATIONS.keys() - operations)
    assert not stale, "rows for operations the schema no longer has: " + ", ".join(
        f"{m} {p}" for m, p in stale
    )

    org = OrgFactory(slug="coverage", name="Coverage")
    secret = api_key_create(org=org, name="coverage")[1]
    templates = sorted({path for _, path in operations})
    sent: list[tuple[str, str]] = []
    wrong = []
    with Engram(live_server.url, secret, max_retries=0) as client:
        client._http.event_hooks["request"].append(lambda r: sent.append((r.method, r.url.path)))
        for (method, path), call in sorted(OPERATIONS.items()):
            sent.clear()
            try:
                call(client)
            except APIError as exc:
                assert exc.status is not None and exc.status < 500, (method, path, str(exc))
            reached = {(m, template_of(p, templates)) for m, p in sent}
            if reached != {(method, path)}:
                wrong.append(f"{method} {path}: the client sent {sorted(sent)}")
    assert not wrong, "client calls that do not send their operation:\n" + "\n".join(wrong)


def test_the_client_is_a_package_pip_builds_and_installs(tmp_path):
    """pip builds a wheel of clients/python and installs it; the installed copy imports, typed."""
    source = tmp_path / "src"  # setuptools builds in the source tree: a copy keeps the repository clean
    shutil.copytree(CLIENT_DIR, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    [wheel] = (tmp_path / "dist").glob("engram_client-*.whl")
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    assert (target / "engram_client" / "py.typed").exists()
    requires = (next(target.glob("engram_client-*.dist-info")) / "METADATA").read_text()
    assert "Requires-Dist: httpx" in requires and "Requires-Dist: pydantic" in requires
    probe = (
        "import engram_client, sys; print(engram_client.__file__); print(sorted(engram_client.__all__)[:3])"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(str(target / "engram_client"))


@pytest.mark.parametrize("module", sorted(p.name for p in (CLIENT_DIR / "engram_client").glob("*.py")))
def test_the_client_imports_only_httpx_pydantic_and_the_standard_library(module):
    """And the optional extras: engram_client.langgraph (LangGraph's BaseStore) needs `langgraph`."""
    extras = {"langgraph.py": {"langgraph"}}.get(module, set())
    tree = ast.parse((CLIENT_DIR / "engram_client" / module).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    foreign = {name for name in imported if name not in sys.stdlib_module_names} - {
        "httpx",
        "pydantic",
        *extras,
    }
    assert not foreign, f"engram_client/{module} imports {sorted(foreign)}"
