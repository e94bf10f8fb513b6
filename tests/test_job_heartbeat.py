"""A dead worker's job is back within minutes: running jobs carry a heartbeat the worker refreshes, and
the sweeps re-queue a processing job whose heartbeat stopped (issue 13, finding 10).

The sweep tests need no worker; the last test runs a real one (tests/test_worker.py's fixture) on a job
that waits on a slow chat model, and watches the row's heartbeat move."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.extraction.services import extraction_jobs_sweep
from memory.extraction.tasks import extraction_run
from memory.models import ExtractionJob, LLMConfig, MemoryItem, ReembedJob
from memory.tasks import reembed_sweep

from .openai_server import Delay, OpenAIStub
from .test_worker import wait_for, worker  # noqa: F401 - the real-worker fixture

MESSAGES = [{"role": "human", "content": "Remember that I'm allergic to shellfish.", "message_id": ""}]


def processing_job(org, *, started: timedelta, heartbeat: timedelta | None) -> ExtractionJob:
    now = timezone.now()
    return ExtractionJob.objects.create(
        org=org,
        user_id="u1",
        session_id="s",
        messages=MESSAGES,
        status="processing",
        attempts=1,
        started_at=now - started,
        heartbeat_at=None if heartbeat is None else now - heartbeat,
    )


def test_it_requeues_a_job_whose_heartbeat_stopped_minutes_ago(worker, org_a):  # noqa: F811
    # Claimed three minutes ago; the worker's last beat was 150 s ago: it died.
    job = processing_job(org_a, started=timedelta(minutes=3), heartbeat=timedelta(seconds=150))
    assert extraction_jobs_sweep() == {"returned": 1, "enqueued": 1, "woken": 0}
    job = wait_for(job.pk)
    assert (job.status, job.attempts) == ("done", 2), job.error
    assert MemoryItem.objects.get(org=org_a).content == "The user is allergic to shellfish"


@pytest.mark.django_db
def test_it_leaves_a_long_job_with_a_fresh_heartbeat_alone(org_a):
    job = processing_job(org_a, started=timedelta(hours=1), heartbeat=timedelta(seconds=10))
    assert extraction_jobs_sweep() == {"returned": 0, "enqueued": 0, "woken": 0}
    job.refresh_from_db()
    assert job.status == "processing" and job.error == ""


@pytest.mark.django_db
def test_it_requeues_a_stale_reembed_job_and_not_a_beating_one(org_a):
    now = timezone.now()
    dead = ReembedJob.objects.create(
        org=org_a, model="m", status="processing", heartbeat_at=now - timedelta(minutes=3)
    )
    alive = ReembedJob.objects.create(org=org_a, model="m", status="processing", heartbeat_at=now)
    assert reembed_sweep.apply().get() == {"returned": 1}
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.status, alive.status) == ("pending", "processing")


def test_the_worker_beats_while_it_works(worker, org_a, settings):  # noqa: F811
    settings.JOB_HEARTBEAT_SECONDS = 0.3
    with OpenAIStub() as stub:
        LLMConfig.objects.create(org=org_a, base_url=stub.base_url, model="stub-chat")
        stub.chat_replies.append(Delay(4))  # the model takes 4 s: the job is processing meanwhile
        job = ExtractionJob.objects.create(org=org_a, user_id="u1", session_id="s", messages=MESSAGES)
        extraction_run.delay(job.pk)
        beats = set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            row = ExtractionJob.objects.get(pk=job.pk)
            if row.status != "pending" and row.status != "processing":
                break
            if row.status == "processing":
                beats.add(row.heartbeat_at)
            time.sleep(0.1)
        job = wait_for(job.pk)
    assert job.status == "done", job.error
    assert len(beats) >= 4, beats  # the claim's stamp and at least three beats during the 4 s wait
    assert max(beats) - job.started_at >= timedelta(seconds=2)
