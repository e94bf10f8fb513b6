"""Access counts: how often each memory was recalled, written in batches off the request thread."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter

from django.conf import settings
from django.db import connection

from core import rls

log = logging.getLogger(__name__)


class AccessRecorder:
    """Counts recalls in memory and writes them in one UPDATE per batch, off the request thread.

    A daemon thread (started lazily per process, so it survives forking servers) flushes every
    SEARCH_ACCESS_FLUSH_SECONDS; with 0 the update runs at once in the caller's thread (tests).
    Counts not yet flushed are lost if the process dies; they are statistics, not data.
    """

    _SQL = (
        'UPDATE "memory_memoryitem" m SET access_count = m.access_count + v.n, last_accessed_at = now() '
        "FROM unnest(%s::bigint[], %s::int[]) AS v(id, n) WHERE m.id = v.id"
    )

    def __init__(self):
        self._lock = threading.Lock()
        self._pending: Counter = Counter()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, ids: list[int]) -> None:
        if settings.SEARCH_ACCESS_FLUSH_SECONDS <= 0:
            self._write(Counter(ids))
            return
        with self._lock:
            self._pending.update(ids)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="engram-access", daemon=True)
                self._thread.start()
        self._wake.set()

    def flush(self) -> int:
        with self._lock:
            batch, self._pending = self._pending, Counter()
        self._write(batch)
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
