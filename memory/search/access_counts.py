"""Access counts: how often each memory was recalled, written in batches off the request thread."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter

import redis
from django.conf import settings
from django.db import connection

from core import rls, shared

log = logging.getLogger(__name__)

# The Redis hash of recalls not yet written: memory id -> count (core.shared.key names it per database).
PENDING = "access-counts"


class AccessRecorder:
    """Counts recalls in the shared Redis (core.shared) and writes them in one UPDATE per batch, off the
    request thread.

    A search adds its hits' counts to one Redis hash (one MULTI round trip) before it answers, so a web
    process killed afterwards loses none of them: whichever process flushes next writes them. A daemon
    thread (started lazily per process, so it survives forking servers) flushes SEARCH_ACCESS_FLUSH_SECONDS
    after a recall: it takes the whole hash (HGETALL and DEL in one transaction) and writes it; beat's
    access_counts_flush does the same every minute. What can be lost is bounded: a process killed between
    taking a batch and its UPDATE's commit (milliseconds) loses that batch, the recalls since the previous
    flush; a failed UPDATE puts its batch back. While Redis cannot be reached the counts wait in the
    process's memory instead, and a process killed then loses its last interval's. With
    SEARCH_ACCESS_FLUSH_SECONDS = 0 the update runs at once in the caller's thread (tests). They are
    statistics, not data.
    """

    _SQL = (
        'UPDATE "memory_memoryitem" m SET access_count = m.access_count + v.n, last_accessed_at = now() '
        "FROM unnest(%s::bigint[], %s::int[]) AS v(id, n) WHERE m.id = v.id"
    )

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: Counter = Counter()  # only while Redis is unreachable
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, ids: list[int]) -> None:
        if settings.SEARCH_ACCESS_FLUSH_SECONDS <= 0:
            self._write(Counter(ids))
            return
        counts = Counter(ids)
        if not self._to_redis(counts):
            with self._lock:
                self._pending.update(counts)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="engram-access", daemon=True)
                self._thread.start()
        self._wake.set()

    def _to_redis(self, counts: Counter) -> bool:
        try:
            pipe = shared.redis_client().pipeline(transaction=True)  # all of them or none
            for memory_id, n in counts.items():
                pipe.hincrby(shared.key(PENDING), str(memory_id), n)
            pipe.execute()
        except redis.RedisError as exc:
            log.warning("access counts kept in this process, Redis unreachable: %s", exc)
            return False
        return True

    def _take_from_redis(self) -> Counter:
        try:
            pipe = shared.redis_client().pipeline(transaction=True)
            pipe.hgetall(shared.key(PENDING))
            pipe.delete(shared.key(PENDING))
            taken, _deleted = pipe.execute()
        except redis.RedisError as exc:
            log.warning("access counts not taken from Redis: %s", exc)
            return Counter()
        return Counter({int(k): int(v) for k, v in taken.items()})

    def flush(self) -> int:
        """Write every pending count (this process's and, through Redis, every other's); the ids written."""
        with self._lock:
            batch, self._pending = self._pending, Counter()
        batch.update(self._take_from_redis())
        try:
            self._write(batch)
        except Exception:
            if not self._to_redis(batch):  # put back what could not be written
                with self._lock:
                    self._pending.update(batch)
            raise
        return len(batch)

    def _write(self, batch: Counter) -> None:
        if not batch:
            return
        ids = sorted(batch)  # a fixed order keeps two flushing processes from deadlocking
        with connection.cursor() as cursor:
            cursor.execute(self._SQL, [ids, [batch[i] for i in ids]])

    def _run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(settings.SEARCH_ACCESS_FLUSH_SECONDS)
            self._wake.clear()
            try:
                with rls.all_orgs():  # this thread is no request's: the ids came from searches that saw them
                    self.flush()
            except Exception:  # noqa: BLE001 — statistics must never take the process down
                log.exception("flushing access counts failed")
            finally:
                connection.close()


access_recorder = AccessRecorder()
