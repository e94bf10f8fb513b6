"""A small deployment for live tests: real gunicorn web processes and real Celery workers, each its own
operating-system process, against this test run's database and Redis.

Every process runs the test settings (config.settings.test) with DATABASE_URL naming the database
pytest-django created (test_engram, test_engram_gw0 under xdist), as the application's role, so
row-level security applies as in the suite; the workers take this run's own queue (the settings name it
after the test database and the xdist worker). Data a test wants the processes to see must be committed:
use transactional_db. Ports are free ones, so parallel runs do not collide.

    web = WebProcess("a", env).start()          # gunicorn: one gthread worker, 4 threads
    worker = WorkerProcess("w1", env).start()   # celery worker, threads pool
    web.url, web.kill(), worker.log_text()
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
START_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_env(**extra: str) -> dict:
    """The environment of a process of this test run: its database, its Redis, the test settings."""
    env = dict(os.environ)
    url = urlsplit(env["DATABASE_URL"])
    env["DATABASE_URL"] = urlunsplit(url._replace(path="/" + connection.settings_dict["NAME"]))
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class Process:
    """One child in its own process group (SIGTERM/SIGKILL reach all of it), its output in a log file."""

    name: str

    def __init__(self, name: str, env: dict, log_dir: Path):
        self.name, self.env = name, env
        self.log_path = log_dir / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        raise NotImplementedError

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{self.log_text()[-3000:]}")
            if self.ready():
                return self
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready after {START_TIMEOUT}s:\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL, no goodbye: what the process held in memory is gone."""
        self._signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        stop_all([self])

    def _signal(self, sig) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass


class WebProcess(Process):
    """gunicorn serving config.wsgi as `./engram run` does (gthread), one worker process."""

    def __init__(self, name: str, env: dict, log_dir: Path, threads: int = 4):
        super().__init__(name, env, log_dir)
        self.port = free_port()
        self.threads = threads
        self.url = f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            PY,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--worker-class",
            "gthread",
            "--workers",
            "1",
            "--threads",
            str(self.threads),
            "--timeout",
            "120",
            "--graceful-timeout",
            "5",
        ]

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.url}/api/v1/projects", timeout=2).status_code == 401
        except requests.RequestException:
            return False


class WorkerProcess(Process):
    """A Celery worker (threads pool) on the queues the test settings name; no beat."""

    def command(self) -> list[str]:
        return [
            PY,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=threads",
            "--concurrency=2",
            "--prefetch-multiplier=1",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
            "-n",
            f"{self.name}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{os.getpid()}@%h",
        ]

    def ready(self) -> bool:
        return " ready." in self.log_text()

    def succeeded(self, task: str) -> int:
        """How many `task` runs this worker logged as succeeded."""
        return sum(
            1 for line in self.log_text().splitlines() if f"Task {task}[" in line and "succeeded" in line
        )


def start_all(processes: list[Process]) -> list[Process]:
    """Start them together (they load Django in parallel), then wait until each answers."""
    for p in processes:
        p.start()
    try:
        for p in processes:
            p.wait_ready()
    except BaseException:
        stop_all(processes)
        raise
    return processes


def stop_all(processes: list[Process], timeout: float = 20.0) -> None:
    """SIGTERM to all of them at once (each shuts down gracefully), SIGKILL to what is left after timeout."""
    running = [p for p in processes if p.proc is not None and p.proc.poll() is None]
    for p in running:
        p._signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for p in running:
        try:
            p.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()


class RoundRobin:
    """A loopback HTTP front (what nginx is in front of gunicorn replicas) that sends each request to the
    next backend in turn, so one client's consecutive requests land on different processes."""

    HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "te", "upgrade"}

    def __init__(self, backends: list[str]):
        import itertools
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.backends = backends
        self.served = {url: 0 for url in backends}
        turn, lock = itertools.cycle(backends), threading.Lock()
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self):
                with lock:
                    backend = next(turn)
                    front.served[backend] += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in front.HOP_BY_HOP}
                answer = requests.request(
                    self.command,
                    backend + self.path,
                    headers=headers,
                    data=body,
                    allow_redirects=False,
                    timeout=60,
                )
                self.send_response(answer.status_code)
                for k, v in answer.headers.items():
                    if k.lower() not in front.HOP_BY_HOP and k.lower() != "content-encoding":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _forward

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> RoundRobin:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
