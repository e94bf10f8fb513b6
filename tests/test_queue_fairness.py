"""Celery at scale: queues by kind and fair extraction across orgs, with real workers on Redis.

- Every task has a kind and its queue carries this test run's prefix; a worker consumes every kind by
  default, and ENGRAM_WORKER_QUEUES starts one for some kinds only (a real `celery worker` process, asked
  through Celery's remote control which queues it consumes).
- Fairness: org A queues a backlog of turns, then org B one turn; B's turn is claimed by the next free
  worker, before A's backlog drains (positions in the claim order, not wall-clock times). With fair
  scheduling off (first in, first out) the same turn waits behind A's whole backlog: the test tells the
  two apart.
- Queues by kind: with a worker busy on a flood of extraction messages, a profile rebuild sent after the
  flood runs before the flood is through.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery.worker import state as worker_state
from django.conf import settings

from config.celery import app
from config.queues import KINDS, queue_name, task_queues
from memory.extraction import fair
from memory.extraction.services import extraction_job_create
from memory.models import ExtractionJob
from profiles.models import UserProfile
from profiles.tasks import profile_rebuild

from .factories import MemoryItemFactory
from .test_worker import real_worker, wait_for

ROOT = Path(__file__).resolve().parent.parent
BACKLOG = 30


def purge_queues() -> None:
    """Messages an earlier test left in this run's queues (for rows that are gone) would count as waiting."""
    with app.connection_for_write() as conn:
        for queue in settings.CELERY_TASK_QUEUES:
            conn.default_channel.queue_purge(queue.name)


def turn(org, user_id: str, text: str) -> ExtractionJob:
    return extraction_job_create(
        org=org, user_id=user_id, session_id=f"s-{user_id}", messages=[{"role": "human", "content": text}]
    )


def flood(org, n: int) -> list[ExtractionJob]:
    return [
        turn(org, f"a{i % 3}", f"I live in district number {i} and I have a dog called Rex{i}.")
        for i in range(n)
    ]


def cancel_and_wait_idle() -> None:
    """Before the worker stops: what is left of the backlog is cancelled and the worker's threads finish
    their task (a test worker stopping mid-task leaves the thread running into the next test)."""
    ExtractionJob.objects.filter(status="pending").update(status="failed", error="cancelled by the test")
    deadline = time.monotonic() + 60
    while worker_state.active_requests:
        assert time.monotonic() < deadline, "the worker did not finish its tasks"
        time.sleep(0.05)


def claim_order() -> list[int]:
    return list(
        ExtractionJob.objects.exclude(started_at=None)
        .order_by("started_at", "pk")
        .values_list("pk", flat=True)
    )


# ---- kinds and routes ---------------------------------------------------------------------------------------


def test_every_task_has_a_kind_and_beat_tasks_are_maintenance():
    app.loader.import_default_modules()
    ours = {name for name in app.tasks if not name.startswith("celery.")}
    routed = {task for tasks in KINDS.values() for task in tasks}
    assert ours == routed, (ours - routed, routed - ours)
    routes = settings.CELERY_TASK_ROUTES
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert routes[entry["task"]]["queue"] == queue_name(settings.ENGRAM_QUEUE_PREFIX, "maintenance")
    # What the app itself decides when a task is sent: the queue of its kind, with this run's prefix.
    for name, kind in (
        ("memory.extraction.tasks.extraction_next", "extraction"),
        ("webhooks.tasks.webhook_deliver", "webhooks"),
    ):
        assert app.amqp.router.route({}, name)["queue"].name == f"{settings.ENGRAM_QUEUE_PREFIX}.{kind}"


def test_the_queue_names_carry_the_prefix_of_the_test_database():
    prefix = settings.ENGRAM_QUEUE_PREFIX
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    assert prefix == "-".join(
        filter(None, ["engram", os.environ.get("ENGRAM_TEST_DB", "test_engram"), worker])
    )
    names = [q.name for q in settings.CELERY_TASK_QUEUES]
    assert names == [f"{prefix}.{kind}" for kind in KINDS] + [settings.CELERY_TASK_DEFAULT_QUEUE]
    # Production: engram.<kind>, and Celery's default queue, still consumed.
    assert [q.name for q in task_queues("engram", "celery")][0] == "engram.extraction"


def _worker_queues(extra_env: dict) -> list[str]:
    """Start a real `celery worker` process and ask it (remote control) which queues it consumes."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", **extra_env}
    name = f"kinds-{os.getpid()}-{time.monotonic_ns()}@localhost"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-n",
            name,
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 180  # a loaded machine starts Django and Celery slowly
        while time.monotonic() < deadline:
            answer = app.control.inspect([name], timeout=1.0).active_queues()
            if answer and name in answer:
                return sorted(q["name"] for q in answer[name])
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        raise AssertionError("the worker did not answer")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_worker_consumes_every_kind_unless_told_some():
    prefix = settings.ENGRAM_QUEUE_PREFIX
    assert _worker_queues({}) == sorted([f"{prefix}.{kind}" for kind in KINDS] + [prefix])
    assert _worker_queues({"ENGRAM_WORKER_QUEUES": "webhooks, profiles"}) == [
        f"{prefix}.profiles",
        f"{prefix}.webhooks",
    ]
    # The worker of the maintenance kind also drains Celery's default queue (what an older release left).
    assert _worker_queues({"ENGRAM_WORKER_QUEUES": "maintenance"}) == sorted(
        [f"{prefix}.maintenance", prefix]
    )


def test_an_unknown_kind_stops_the_worker_with_the_list_of_kinds():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "ENGRAM_WORKER_QUEUES": "extract"}
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "ENGRAM_WORKER_QUEUES: unknown queue kind 'extract'" in done.stderr
    assert "extraction, embedding, profiles, webhooks, maintenance" in done.stderr


# ---- fair extraction ----------------------------------------------------------------------------------------


@pytest.fixture
def clean_queues(transactional_db):
    purge_queues()
    yield
    purge_queues()


def test_another_orgs_turn_is_claimed_before_a_backlog_drains(clean_queues, org_a, org_b, settings):
    settings.EXTRACTION_FAIR = True
    with real_worker(concurrency=1):
        backlog = flood(org_a, BACKLOG)
        # However long A's backlog, only a bounded number of wake-ups wait in Redis.
        assert (fair.waiting_wakeups() or 0) <= settings.EXTRACTION_WAKEUPS
        b = turn(org_b, "bea", "I work as a nurse in Leeds.")
        b = wait_for(b.pk)
        assert b.status == "done", b.error
        order = claim_order()
        before_b = ExtractionJob.objects.filter(org=org_a, started_at__lt=b.created_at).count()
        # The one worker finished the A job it held (or had just claimed) when B arrived, then took B.
        assert order.index(b.pk) <= before_b + 1, (order.index(b.pk), before_b)
        assert ExtractionJob.objects.filter(org=org_a, status="pending").count() >= BACKLOG // 2
        # A's backlog then drains, oldest first within the org.
        last = wait_for(backlog[-1].pk, timeout=180)
        assert last.status == "done", last.error
        a_order = [pk for pk in claim_order() if pk != b.pk]
        assert a_order == sorted(a_order)
        cancel_and_wait_idle()
    assert not fair.fresh_jobs().exists()


def test_first_in_first_out_keeps_the_turn_behind_the_backlog(clean_queues, org_a, org_b, settings):
    # The baseline the fair scheduler replaces (EXTRACTION_FAIR off): one message per job, in order.
    settings.EXTRACTION_FAIR = False
    with real_worker(concurrency=1):
        backlog = flood(org_a, BACKLOG)
        b = turn(org_b, "bea", "I work as a nurse in Leeds.")
        b = wait_for(b.pk, timeout=180)
        assert b.status == "done", b.error
        assert claim_order()[-1] == b.pk
        assert all(ExtractionJob.objects.get(pk=job.pk).status == "done" for job in backlog)
        cancel_and_wait_idle()


def test_two_workers_share_a_backlog_and_still_serve_the_other_org_next(clean_queues, org_a, org_b, settings):
    settings.EXTRACTION_FAIR = True
    with real_worker(concurrency=2):
        flood(org_a, BACKLOG)
        b = turn(org_b, "bea", "I work as a nurse in Leeds.")
        b = wait_for(b.pk)
        order = claim_order()
        before_b = ExtractionJob.objects.filter(org=org_a, started_at__lt=b.created_at).count()
        assert order.index(b.pk) <= before_b + 2, (order.index(b.pk), before_b)
        # Two workers never took the same job: each was attempted once.
        assert set(ExtractionJob.objects.exclude(started_at=None).values_list("attempts", flat=True)) == {1}
        cancel_and_wait_idle()


def test_the_sweep_wakes_workers_for_fresh_jobs_whose_wake_ups_were_lost(clean_queues, org_a, settings):
    settings.EXTRACTION_FAIR = True
    # Jobs created while the broker was away: rows with no message. A minute later the sweep wakes workers.
    job = ExtractionJob.objects.create(
        org=org_a,
        user_id="u1",
        session_id="s",
        messages=[{"role": "human", "content": "I am allergic to nuts."}],
    )
    ExtractionJob.objects.filter(pk=job.pk).update(
        created_at=job.created_at.replace(year=job.created_at.year - 1)
    )
    from memory.extraction.services import extraction_jobs_sweep

    assert extraction_jobs_sweep() == {"returned": 0, "enqueued": 0, "woken": 1}
    with real_worker(concurrency=1):
        assert wait_for(job.pk).status == "done"
        cancel_and_wait_idle()


# ---- queues by kind -----------------------------------------------------------------------------------------


def test_a_flood_of_extraction_does_not_hold_up_a_profile_rebuild(clean_queues, org_a, settings):
    # One message per job (the first-in-first-out mode) makes the extraction queue as long as the flood.
    settings.EXTRACTION_FAIR = False
    MemoryItemFactory(
        org=org_a, user_id="pat", content="Prefers plain text answers", memory_type="preference"
    )
    with real_worker(concurrency=1):
        backlog = flood(org_a, BACKLOG)
        profile_rebuild.apply_async(kwargs={"org_id": org_a.pk, "user_id": "pat"})
        deadline = time.monotonic() + 90
        while not UserProfile.objects.filter(org=org_a, user_id="pat").exists():
            assert time.monotonic() < deadline, "the profile was not rebuilt"
            time.sleep(0.05)
        pending = ExtractionJob.objects.filter(pk__in=[j.pk for j in backlog], status="pending").count()
        assert pending >= BACKLOG // 2, pending
        cancel_and_wait_idle()
