"""`./engram run` for real: gunicorn on loopback with DEBUG off, a killed worker started again, a second
signal during the shutdown ignored, and no child left behind when the run command itself is killed.

Each test starts scripts/devservices.py run against its own database and Redis database, so nothing of
the suite's data is touched."""

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil
import psycopg
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
try:
    import devservices
finally:
    sys.path.pop(0)
DATABASE = "engram_run_command_test"


@pytest.fixture(scope="module")
def run_env(tmp_path_factory):
    owner = os.environ.get("DATABASE_OWNER_URL") or os.environ["DATABASE_URL"]
    with psycopg.connect(owner, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
            conn.execute(f"CREATE DATABASE {DATABASE}")
    parts = urlsplit(os.environ["DATABASE_URL"])
    redis = urlsplit(os.environ["REDIS_URL"])
    env = {
        **os.environ,
        # The application's role, and the owner for migrate (as the run command sets them up itself).
        "DATABASE_URL": urlunsplit(parts._replace(path=f"/{DATABASE}")),
        "DATABASE_OWNER_URL": urlunsplit(urlsplit(owner)._replace(path=f"/{DATABASE}")),
        "REDIS_URL": urlunsplit(
            redis._replace(query="db=7") if redis.scheme == "unix" else redis._replace(path="/7", query="")
        ),
        "ENGRAM_DATA_DIR": str(tmp_path_factory.mktemp("run-data")),
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
    }
    env.pop("CELERY_BROKER_URL", None)
    env.pop("ENGRAM_DEBUG", None)
    return env


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def _get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


class Run:
    def __init__(self, env: dict, log: Path):
        self.port = devservices._free_port()
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "scripts/devservices.py", "run", "--port", str(self.port), "--no-seed"]
            + ["--workers", "1", "--threads", "2"],
            cwd=ROOT,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _wait(lambda: "Engram is up" in self.output() or self.proc.poll() is not None, 180, "the server")
        assert self.proc.poll() is None, self.output()[-3000:]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def children(self, word: str) -> list[psutil.Process]:
        found = []
        for child in psutil.Process(self.proc.pid).children(recursive=True):
            try:
                if word in " ".join(child.cmdline()):
                    found.append(child)
            except psutil.NoSuchProcess:
                pass
        return found

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def _mcp_tools(run: Run, env: dict) -> set[str]:
    """The MCP tools, listed by the official SDK's client through the web server's /api/v1/mcp (forwarded
    to the MCP process the run command started) with a key made in the run's database."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    slug = f"run-mcp-{os.getpid()}-{time.monotonic_ns()}"
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "create_org", slug], cwd=ROOT, env=env, check=True, capture_output=True)
    made = subprocess.run(
        [*manage, "create_api_key", "--org", slug, "--name", "mcp"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    secret = made.stdout.decode().strip().splitlines()[-1]

    async def listing():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60)
        async with Client(
            streamable_http_client(run.url("/api/v1/mcp"), http_client=http), mode="legacy"
        ) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:  # a browser test may leave a loop in this thread
        return pool.submit(asyncio.run, listing()).result()


def _all_gone(processes: list[psutil.Process]) -> bool:
    return not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in processes)


def test_it_serves_with_gunicorn_on_loopback_restarts_a_dead_worker_and_stops_once(run_env, tmp_path):
    run = Run(run_env, tmp_path / "run.log")
    try:
        status, headers, body = _get(run.url("/login/"))
        assert status == 200 and headers.get("Server", "").startswith("gunicorn"), (status, headers)
        status, _, body = _get(run.url("/no-such-page/"))
        assert status == 404 and "URLconf" not in body  # DEBUG is off: no URL list for strangers
        assert _get(run.url("/static/css/engram.css"))[0] == 200  # WhiteNoise
        assert _mcp_tools(run, run_env) >= {"add_memory", "search_memories", "get_context"}
        master = run.children("gunicorn")[0]
        listening = {c.laddr.ip for c in master.net_connections(kind="tcp") if c.status == "LISTEN"}
        assert listening == {"127.0.0.1"}, listening

        worker = next(p for p in run.children("celery") if p.parent().pid == run.proc.pid)
        worker.kill()
        replacement = _wait(
            lambda: [
                p for p in run.children("celery") if p.parent().pid == run.proc.pid and p.pid != worker.pid
            ],
            60,
            "the worker to be started again",
        )
        # The supervisor prints its line just after the new process exists: wait for both, not one then the other.
        _wait(lambda: "started again" in run.output(), 30, "the supervisor to say the worker started again")
        assert replacement
        assert _get(run.url("/login/"))[0] == 200  # the site stayed up meanwhile

        everything = run.descendants()
        run.proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        run.proc.send_signal(signal.SIGTERM)  # as a supervisor sends after SIGINT: must not cut cleanup short
        run.proc.send_signal(signal.SIGHUP)
        assert run.proc.wait(timeout=90) == 0, run.output()[-3000:]
        assert "Stopped web and worker" in run.output()
        _wait(lambda: _all_gone(everything), 30, "every child to exit")
    finally:
        run.kill()


def test_it_takes_its_children_along_when_it_is_killed(run_env, tmp_path):
    run = Run(run_env, tmp_path / "run.log")
    try:
        children = [p for p in run.descendants() if p.parent().pid == run.proc.pid]
        commands = [" ".join(p.cmdline()) for p in children]
        assert any("gunicorn" in c for c in commands) and any("celery" in c for c in commands), commands
        run.proc.send_signal(signal.SIGKILL)  # no cleanup code runs: the kernel must tell the children
        run.proc.wait()
        _wait(lambda: _all_gone(children), 60, "the web server and the worker to exit")
    finally:
        for child in psutil.Process().children(recursive=True):
            if "devservices" in " ".join(child.cmdline()) or "gunicorn" in " ".join(child.cmdline()):
                child.kill()


def test_it_stops_the_embedded_databases_it_started_when_it_is_killed(run_env, tmp_path):
    env = {
        k: v
        for k, v in run_env.items()
        if k not in ("DATABASE_URL", "DATABASE_OWNER_URL", "REDIS_URL", "CELERY_BROKER_URL")
    }
    env["ENGRAM_DATA_DIR"] = str(tmp_path / "data")
    run = Run(env, tmp_path / "run.log")
    try:
        data = str(tmp_path / "data")
        servers = [
            p
            for p in psutil.process_iter(["cmdline"])
            if data in " ".join(p.info["cmdline"] or [])
            and "devservices" not in " ".join(p.info["cmdline"] or [])
        ]
        redis = [
            p for p in psutil.process_iter(["cmdline"]) if "redis-server" in " ".join(p.info["cmdline"] or [])
        ]
        port = run.output().split("Redis (embedded) at 127.0.0.1:")[1].split()[0]
        servers += [p for p in redis if port in " ".join(p.info["cmdline"])]
        assert any("postgres" in " ".join(p.info["cmdline"]) for p in servers), servers
        assert any("redis-server" in " ".join(p.info["cmdline"]) for p in servers), servers
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait()
        _wait(lambda: _all_gone(servers), 90, "the embedded PostgreSQL and Redis to stop")
    finally:
        run.kill()
        for server in locals().get("servers", []):  # after a failure: leave no server behind
            if server.is_running():
                server.kill()
