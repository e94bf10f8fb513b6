import logging
import os

from celery import Celery
from celery.signals import celeryd_after_setup, task_postrun, task_prerun, worker_init
from django.db import transaction

from config import queues
from core import rls

log = logging.getLogger(__name__)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("engram")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Task modules below the app level.
app.autodiscover_tasks(["memory.extraction"])


@worker_init.connect
def one_math_thread_per_worker(**kwargs):
    """The local embedding model's OpenMP threads busy-wait: worker processes sharing cores slowed each
    other 5-10x (bench/extraction.py). One thread per process; scale with processes (one per core).
    Set before the model loads (lazily, on the first embedding); an explicit OMP_NUM_THREADS wins."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")


_task_scopes: dict = {}


@task_prerun.connect
def all_orgs_for_tasks(task_id=None, **kwargs):
    """Tasks take ids and act as the system of the row's org, sweeps across orgs: row-level security
    (core.rls) lets them see every org; the access module still scopes what they do."""
    _task_scopes.setdefault(task_id, []).append(rls.enter(rls.ALL_ORGS))


@task_postrun.connect
def end_task_scope(task_id=None, **kwargs):
    tokens = _task_scopes.get(task_id) or [None]
    token = tokens.pop()
    if not tokens:
        _task_scopes.pop(task_id, None)
    if token is not None:
        rls.leave(token)


def send_quietly(task, *args) -> bool:
    """Send `task` with `args` now; False (logged, never raised) when the broker cannot be reached.

    Publishing gives up after about a second instead of holding the caller; the periodic sweeps send the
    work again."""
    try:
        task.apply_async(
            args=args, retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.3}
        )
    except Exception as exc:  # noqa: BLE001 - kombu and redis raise several kinds; none may fail the write
        log.warning(
            "could not enqueue %s (%s); a periodic sweep will send it again", task.name, type(exc).__name__
        )
        return False
    return True


def enqueue_on_commit(task, *args) -> None:
    """Send `task` with `args` once the current transaction commits.

    A broker that is down is logged, never raised: what the request stored stays stored and the request
    still answers, and the periodic sweeps (extraction jobs, memories without an embedding) send the work
    again."""
    transaction.on_commit(lambda: send_quietly(task, *args))


@celeryd_after_setup.connect
def consume_some_kinds(sender=None, instance=None, **kwargs):
    """ENGRAM_WORKER_QUEUES=extraction,embedding: this worker consumes those kinds' queues only (a dedicated
    worker); unset, it consumes every kind (config/queues.py). Celery's own -Q names queues instead."""
    from django.conf import settings

    if settings.ENGRAM_WORKER_QUEUES:
        kinds = settings.ENGRAM_WORKER_QUEUES
        names = [queues.queue_name(settings.ENGRAM_QUEUE_PREFIX, kind) for kind in kinds]
        if "maintenance" in kinds:  # it also drains Celery's default queue (what an older release left there)
            names.append(settings.CELERY_TASK_DEFAULT_QUEUE)
        instance.app.amqp.queues.select(names)
