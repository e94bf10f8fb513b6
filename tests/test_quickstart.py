"""The README's quickstart, run as written against the live test server: the key command on the demo data,
each curl command, the Python block and the MCP client configuration. Only the base URL and the key are
substituted, through the environment variables the README itself uses (ENGRAM_URL, ENGRAM_API_KEY)."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from django.core.management import call_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memory.models import MemoryItem
from projects.models import ApiKey

from .test_mcp import mcp_upstream, run_async  # noqa: F401  (the MCP process, in a thread)

ROOT = Path(__file__).resolve().parents[1]


def quickstart() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("\n## Quickstart")
    return readme[start : readme.index("\n## ", start + 1)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", quickstart(), re.S)


def shell_commands(block: str) -> list[str]:
    """The block's commands, a backslash-continued line joined to the next."""
    return [c.strip() for c in block.replace("\\\n", " ").splitlines() if c.strip() and not c.startswith("#")]


@pytest.fixture
def demo_key(transactional_db):
    """The README's key command, run as `manage.py` would run it, on the demo data."""
    call_command("seed_demo", stdout=io.StringIO())
    [key_block] = [b for b in blocks("bash") if "create_api_key" in b]
    assert "export ENGRAM_URL=http://127.0.0.1:8000" in key_block
    command = re.search(r"manage\.py (create_api_key[^|)]*)", key_block).group(1)
    out = io.StringIO()
    call_command(*shlex.split(command), stdout=out)
    secret = out.getvalue().strip().splitlines()[-1]  # the README takes the last line (tail -n 1)
    key = ApiKey.objects.get(name="my-agent")
    assert key.org.slug == "demo" and secret.startswith(key.prefix)
    return secret


@pytest.fixture
def env(live_server, demo_key):
    return {**os.environ, "ENGRAM_URL": live_server.url, "ENGRAM_API_KEY": demo_key}


def test_the_readme_states_the_demo_org_and_no_other():
    readme = (ROOT / "README.md").read_text()
    assert "the demo organization is **`demo`**" in quickstart()
    assert "acme" not in readme.lower()
    # The Mem0 line names the host change tests/test_mem0_client.py makes with the real client.
    assert 'MemoryClient(api_key=os.environ["ENGRAM_API_KEY"], host=os.environ["ENGRAM_URL"])' in quickstart()


def test_the_curl_commands_add_search_and_build_context(env):
    [curl_block] = [b for b in blocks("bash") if "curl" in b]
    add, search, context = shell_commands(curl_block)
    answers = []
    for command in (add, search, context):
        run = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        answers.append(json.loads(run.stdout))
    added, found, ctx = answers
    assert "error" not in added, added
    memory = MemoryItem.objects.get(pk=added["id"])
    assert (memory.org.slug, memory.user_id, memory.content) == (
        "demo",
        "sam",
        "Sam prefers answers in bullet points",
    )
    assert [r["id"] for r in found["results"]] == [added["id"]]
    assert "Sam prefers answers in bullet points" in ctx["prompt"]


def test_the_python_block_runs(env):
    [python_block] = blocks("python")
    # On a fresh clone requirements.lock installs the client; here the checkout's copy is on the path.
    run_env = {**env, "PYTHONPATH": str(ROOT / "clients" / "python")}
    run = subprocess.run(
        [sys.executable, "-c", python_block], env=run_env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    first, *rest = run.stdout.splitlines()
    assert first.endswith("Sam is vegetarian") and float(first.split()[0]) > 0
    assert "Sam is vegetarian" in "\n".join(rest)  # the context's prompt
    assert (
        MemoryItem.objects.filter(org__slug="demo", user_id="sam", content="Sam is vegetarian").count() == 1
    )


@pytest.mark.usefixtures("mcp_upstream")
def test_the_mcp_configuration_reaches_the_memory_tools(env, live_server):
    """The configuration, as an MCP client reads it, with the official SDK's client (it probes
    server/discover and speaks 2026-07-28)."""
    [config_block] = blocks("json")
    server = json.loads(config_block)["mcpServers"]["engram"]
    url = server["url"].replace("http://127.0.0.1:8000", live_server.url)
    headers = {k: v.replace("<ENGRAM_API_KEY>", env["ENGRAM_API_KEY"]) for k, v in server["headers"].items()}

    async def session():
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            added = await client.call_tool("add_memory", {"text": "Sam collects vinyl records"})
            found = await client.call_tool("search_memories", {"query": "what does Sam collect?"})
            return tools, added, found

    tools, added, found = run_async(session())
    assert {"add_memory", "search_memories", "get_context", "memory_add", "memory_search"} <= tools
    assert added.is_error is False, added.content
    assert MemoryItem.objects.filter(
        org__slug="demo", user_id="sam", content="Sam collects vinyl records"
    ).exists()
    assert "Sam collects vinyl records" in found.content[0].text
