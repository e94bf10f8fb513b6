"""Heartbeats of running jobs (extraction, re-embed).

While a worker works on a job, a thread beside it stamps the row's `heartbeat_at` every
JOB_HEARTBEAT_SECONDS, whatever the work is doing (waiting on a model, say). The sweeps return a job
whose heartbeat is older than JOB_HEARTBEAT_STALE to the queue: its worker died (killed, out of memory,
the machine went away), so the job is back within a few minutes instead of waiting for the old
600-second claim timeout. Rows claimed before heartbeats existed fall back to that timeout."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from core import rls

from .models import JobStatus

log = logging.getLogger(__name__)


@contextmanager
def heartbeat(model, pk: int, *, every: float | None = None):
    """Stamp `model` row `pk`'s heartbeat_at every `every` seconds while the block runs (and it is processing)."""
    every = settings.JOB_HEARTBEAT_SECONDS if every is None else every
    stop = threading.Event()
    scope = rls.current()  # a new thread starts with no row-level security scope: it beats in the job's

    def beat() -> None:
        try:
            with rls.scoped(scope):
                _beat_until(stop)
        finally:
            connection.close()  # this thread's own connection

    def _beat_until(stop: threading.Event) -> None:
        while not stop.wait(every):
            try:
                model.objects.filter(pk=pk, status=JobStatus.PROCESSING).update(heartbeat_at=timezone.now())
            except Exception:  # noqa: BLE001 - a database blip: the next beat tries again
                log.warning("heartbeat of %s %s failed", model.__name__, pk, exc_info=True)

    thread = threading.Thread(target=beat, name=f"heartbeat-{model.__name__}-{pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def stale_q(now, *, claimed_field: str) -> Q:
    """Processing rows whose worker stopped beating (or, claimed before heartbeats, whose claim is old)."""
    return Q(status=JobStatus.PROCESSING) & (
        Q(heartbeat_at__lt=now - timedelta(seconds=settings.JOB_HEARTBEAT_STALE))
        | Q(
            heartbeat_at__isnull=True,
            **{f"{claimed_field}__lt": now - timedelta(seconds=settings.EXTRACTION_STALE_AFTER)},
        )
    )
