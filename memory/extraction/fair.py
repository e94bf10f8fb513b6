"""Fair extraction scheduling: one org's flood of turns does not hold up another org's next turn.

The job rows are the queue; a Celery message on the extraction queue is only a wake-up ("run the next
turn"), not a particular job. A worker woken up claims, in one short transaction:

1. among the orgs with a fresh pending job (never attempted), the one with the fewest jobs processing now,
   then the one served longest ago (the time of its last claim, kept in Redis), then the lowest id;
2. that org's oldest fresh pending job, `SELECT ... FOR UPDATE SKIP LOCKED`: two workers never take the
   same row, and a worker that finds the row taken tries the next org.

So an org with 100,000 pending turns and an org with one are served in turn: the second org's turn is
claimed by the next worker that becomes free, seconds later, wherever it was queued.

Wake-ups are bounded: a new job sends one only while fewer than EXTRACTION_WAKEUPS wait in the queue, and
a worker that ran a job sends the next one while fresh jobs remain. A flood of 100,000 turns therefore
holds at most EXTRACTION_WAKEUPS messages in Redis, not 100,000. Retries of a job (after a model timeout,
a person's retry, a dead worker's job) are messages for that job as before; the periodic sweep tops the
wake-ups up when fresh jobs have waited a minute (a lost message, a broker that was down).

A claim costs one probe of the (org, status, created_at) index per org (which orgs have fresh jobs), a
count of the processing rows and one Redis read: it does not grow with the backlog (bench/queues.py: the
same waits with 2,000 and with 100,000 pending turns).

EXTRACTION_FAIR = False sends one message per job (first in, first out), the behaviour before; the
benchmark (bench/queues.py) measures both.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef
from django.utils import timezone

from config import queues
from config.celery import app, send_quietly
from core import shared
from memory.models import ExtractionJob, JobStatus
from projects.models import Organization

log = logging.getLogger(__name__)

SERVED_TTL = 24 * 3600


def enabled() -> bool:
    """Fair scheduling is on (EXTRACTION_FAIR), and tasks go through the broker (not run in the caller)."""
    return settings.EXTRACTION_FAIR and not settings.CELERY_TASK_ALWAYS_EAGER


def _served_key(org_id: int) -> str:
    return shared.key(f"extraction-served:{org_id}")  # named after the database, like all shared state


def fresh_jobs():
    """Pending jobs never attempted: the ones the fair claim hands out (retries wait for their backoff)."""
    return ExtractionJob.objects.filter(status=JobStatus.PENDING, attempts=0)


def org_order() -> list[int]:
    """The orgs with a fresh pending job, the one to serve first first."""
    waiting = list(
        Organization.objects.filter(Exists(fresh_jobs().filter(org=OuterRef("pk")))).values_list(
            "pk", flat=True
        )
    )
    if not waiting:
        return []
    running = dict(
        ExtractionJob.objects.filter(status=JobStatus.PROCESSING, org_id__in=waiting)
        .values("org_id")
        .annotate(n=Count("pk"))
        .values_list("org_id", "n")
    )
    try:
        served = cache.get_many([_served_key(org_id) for org_id in waiting])
    except Exception:  # noqa: BLE001 - without Redis the order falls back to the running counts
        served = {}
    return sorted(
        waiting, key=lambda org_id: (running.get(org_id, 0), served.get(_served_key(org_id), 0.0), org_id)
    )


def claim_next() -> ExtractionJob | None:
    """pending → processing for the fairest fresh job; None when there is none (or others took them all)."""
    for org_id in org_order():
        now = timezone.now()
        with transaction.atomic():
            job_id = (
                fresh_jobs()
                .filter(org_id=org_id)
                .select_for_update(skip_locked=True)
                .order_by("created_at", "pk")
                .values_list("pk", flat=True)
                .first()
            )
            if job_id is None:
                continue
            ExtractionJob.objects.filter(pk=job_id).update(
                status=JobStatus.PROCESSING, attempts=F("attempts") + 1, started_at=now, heartbeat_at=now
            )
        try:
            cache.set(_served_key(org_id), time.time(), timeout=SERVED_TTL)
        except Exception:  # noqa: BLE001 - the order degrades, the claim stands
            log.warning("could not record when org %s was served", org_id)
        return ExtractionJob.objects.select_related("org", "project").get(pk=job_id)
    return None


def extraction_queue() -> str:
    return queues.queue_name(settings.ENGRAM_QUEUE_PREFIX, "extraction")


def waiting_wakeups() -> int | None:
    """Messages waiting in the extraction queue (wake-ups and job retries); None if the broker did not say."""
    try:
        with app.pool.acquire(block=True, timeout=2) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0.2, interval_step=0.2, timeout=1)
            return conn.default_channel.queue_declare(extraction_queue()).message_count
    except Exception:  # noqa: BLE001 - kombu and redis raise several kinds
        return None


def wake(*, most: int = 1) -> int:
    """Send up to `most` wake-ups, keeping at most EXTRACTION_WAKEUPS waiting; returns how many were sent."""
    from .tasks import extraction_next

    waiting = waiting_wakeups()
    room = settings.EXTRACTION_WAKEUPS - (waiting or 0)
    sent = 0
    for _ in range(min(most, room)):
        if not send_quietly(extraction_next):
            break
        sent += 1
    return sent


def wake_on_commit() -> None:
    """After the transaction that queued a job commits: one more wake-up unless enough are waiting."""
    transaction.on_commit(wake)
