"""Integration with a real Celery worker on Redis: post a conversation, the job finishes, the memories
are there; a correction supersedes the old memory and the history shows both.

The worker runs in this process (threads pool) and consumes this test run's own queues (every kind's queue
name carries a prefix per test database, settings.ENGRAM_QUEUE_PREFIX), so parallel runs do not take each
other's tasks.
"""

import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from django.utils import timezone

from checkpoints.models import Message, Session
from config.celery import app
from config.queues import queue_name
from memory.extraction.services import extraction_jobs_sweep
from memory.models import ExtractionJob, MemoryItem


@pytest.fixture
def worker(transactional_db):
    with real_worker(concurrency=2) as w:
        yield w


@contextmanager
def real_worker(*, concurrency: int = 2, kinds=None):
    """A Celery worker in this process consuming this run's queues: every kind's, or only `kinds`'."""
    app.conf.task_default_queue = settings.CELERY_TASK_DEFAULT_QUEUE
    app.conf.task_queues = settings.CELERY_TASK_QUEUES
    app.conf.task_routes = settings.CELERY_TASK_ROUTES
    app.loader.import_default_modules()
    if kinds is None:
        names = [q.name for q in settings.CELERY_TASK_QUEUES]
    else:
        names = [queue_name(settings.ENGRAM_QUEUE_PREFIX, kind) for kind in kinds]
    with start_worker(
        app,
        pool="threads",
        concurrency=concurrency,
        perform_ping_check=False,
        shutdown_timeout=30,
        loglevel="WARNING",
        queues=names,
    ) as w:
        yield w


def wait_for(job_id: int, timeout: float = 90.0) -> ExtractionJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ExtractionJob.objects.get(pk=job_id)
        if job.status in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} still {ExtractionJob.objects.get(pk=job_id).status} after {timeout}s")


def test_it_extracts_in_the_worker_and_supersedes_on_correction(worker, key_a, org_a):
    _, client = key_a
    first = client.post(
        "/api/v1/sessions/w-1/messages",
        {
            "user_id": "u1",
            "messages": [
                {"role": "human", "content": "请记住，我住在北京的朝阳区", "message_id": "m1"},
                {"role": "ai", "content": "好的，我记住了。", "message_id": "m2"},
                {"role": "human", "content": "I prefer answers in bullet points.", "message_id": "m3"},
            ],
        },
        format="json",
    )
    assert first.status_code == 201, first.content
    job = wait_for(first.json()["extraction_job"]["id"])
    assert (job.status, job.method, job.attempts) == ("done", "rules", 1), job.error
    active = dict(MemoryItem.objects.filter(org=org_a, user_id="u1").values_list("content", "status"))
    assert active == {
        "用户住在北京的朝阳区": "active",
        "The user prefers answers in bullet points": "active",
    }
    old = MemoryItem.objects.get(org=org_a, content__startswith="用户住在北京")

    correction = client.post(
        "/api/v1/sessions/w-2/messages",
        {"user_id": "u1", "messages": [{"role": "human", "content": "不对，我现在住在上海的浦东新区"}]},
        format="json",
    )
    job = wait_for(correction.json()["extraction_job"]["id"])
    assert job.status == "done", job.error
    [superseded] = job.result["superseded"]
    old.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == superseded["id"]

    history = client.get(f"/api/v1/memories/{old.pk}/history")
    assert history.status_code == 200, history.content
    rows = history.json()["results"]
    assert [r["action"] for r in rows] == ["add", "supersede"]
    assert rows[1]["before"]["content"] == "用户住在北京的朝阳区"
    assert rows[1]["after"]["status"] == "superseded"
    # Undo from the history through the API: the old memory is active again.
    restored = client.post(f"/api/v1/memories/{old.pk}/restore", {"revision": 1}, format="json")
    assert restored.status_code == 200, restored.content
    assert restored.json()["status"] == "active"
    new = client.get(f"/api/v1/memories/{superseded['id']}").json()
    assert new["content"] == "用户现在住在上海的浦东新区" and new["status"] == "active"


def test_it_returns_a_dead_workers_job_to_the_queue(worker, org_a):
    # A worker claimed this job and died: it sits in processing with an old claim.
    job = ExtractionJob.objects.create(
        org=org_a,
        user_id="u1",
        session_id="s",
        messages=[{"role": "human", "content": "Remember that I'm allergic to shellfish.", "message_id": ""}],
        status="processing",
        attempts=1,
        started_at=timezone.now() - timedelta(hours=1),
    )
    assert extraction_jobs_sweep() == {"returned": 1, "enqueued": 1, "woken": 0}
    job = wait_for(job.pk)
    assert (job.status, job.attempts) == ("done", 2)
    assert MemoryItem.objects.get(org=org_a).content == "The user is allergic to shellfish"


def test_it_compresses_a_long_session_in_the_worker(worker, key_a, org_a):
    _, client = key_a
    messages = [{"role": "human" if i % 2 == 0 else "ai", "content": f"turn {i:02d}"} for i in range(31)]
    response = client.post(
        "/api/v1/sessions/long/messages",
        {"user_id": "u1", "messages": messages, "extract": False},
        format="json",
    )
    assert response.status_code == 201
    deadline = time.monotonic() + 60
    while Message.objects.filter(session__session_id="long").count() > 20 and time.monotonic() < deadline:
        time.sleep(0.2)
    session = Session.objects.get(org=org_a, session_id="long")
    assert Message.objects.filter(session=session).count() == 20
    assert session.summarized_count == 11 and "turn 00" in session.summary and "turn 10" in session.summary


def test_it_schedules_only_registered_tasks():
    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {
        "memory.extraction.tasks.extraction_sweep",
        "memory.tasks.memory_embed_sweep",
        "checkpoints.tasks.sessions_expire",
        "checkpoints.tasks.checkpoints_archive",
    } <= scheduled
    assert scheduled <= set(app.tasks), scheduled - set(app.tasks)
