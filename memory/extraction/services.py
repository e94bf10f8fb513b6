"""The extraction queue (seed 003): create, claim, run, retry and sweep ExtractionJobs.

The state a person needs (status, attempts, error, what was added / merged / superseded / rejected
and why) lives in the job row. Failure policy of the LLM path:
- invalid JSON: one repair request, then the rule path (the job records why);
- timeout, connection error, HTTP 5xx or 429: the job goes back to pending with the error recorded
  and is retried with backoff; on its last attempt (EXTRACTION_MAX_ATTEMPTS) the rule path runs;
- other model errors (401, 404, ...): the rule path runs at once, the error is recorded.
Any other error (database, bug) also retries; after the last attempt the job is failed with its
error and can be retried by a person (POST /api/v1/extraction-jobs/{id}/retry).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from config.celery import enqueue_on_commit
from core.backoff import backoff
from core.llm import LLMError
from core.secrets import redact
from memory.drafts import lock_subjects
from memory.embeddings import provider_for
from memory.heartbeat import heartbeat, stale_q
from memory.llm import llm_for
from memory.models import ExtractionJob, JobStatus, MemoryItem, Source, Status
from memory.pause import paused
from memory.services import memory_archive
from memory.signals import extraction_finished
from projects.access import system_actor_for_job

from . import fair
from .llm import LLMInvalidOutput, extract_llm
from .reconcile import JOB_SOURCE, Target, reconcile
from .rules import USER_ROLES, Candidate, message_too_short, read_turn

log = logging.getLogger(__name__)


class RetryLater(Exception):
    """The job was released back to pending; the task should retry after `countdown` seconds."""

    def __init__(self, message: str, countdown: float):
        super().__init__(message)
        self.countdown = countdown


RETRY_CAP = 300.0  # seconds: the longest wait between two attempts of a job (plus jitter)


def _retry_after(job: ExtractionJob) -> float:
    """The wait before the job's next attempt; the attempt count is the job row's, not the broker's."""
    return backoff(job.attempts, base=settings.EXTRACTION_RETRY_BACKOFF, cap=RETRY_CAP, salt=job.pk)


def _enqueue(job_id: int) -> None:
    """After commit: a wake-up of the fair scheduler (memory/extraction/fair.py), or with EXTRACTION_FAIR off
    (and when tasks run in the caller, CELERY_TASK_ALWAYS_EAGER) a message for this job."""
    from .tasks import extraction_run

    if fair.enabled():
        fair.wake_on_commit()
    else:
        enqueue_on_commit(extraction_run, job_id)


@transaction.atomic
def extraction_job_create(
    *,
    org,
    user_id: str,
    messages: list[dict],
    project=None,
    session_id: str = "",
    agent_id: str = "",
    created_by_key=None,
    enqueue: bool = True,
) -> ExtractionJob:
    """Queue one conversation turn for extraction; the task starts after the transaction commits
    (enqueue=False: the caller runs it, extraction_run_now)."""
    job = ExtractionJob.objects.create(
        org=org,
        user_id=user_id,
        project=project,
        session_id=session_id,
        agent_id=redact(agent_id or "")[:255],
        messages=[
            {
                "role": m["role"],
                "content": redact(m["content"]),
                "message_id": m.get("message_id") or "",
                **({"context": True} if m.get("context") else {}),
            }
            for m in messages
        ],
        created_by_key=created_by_key,
    )
    if enqueue:
        _enqueue(job.pk)
    return job


def _claim(job_id: int) -> ExtractionJob | None:
    """pending → processing with a conditional UPDATE: exactly one worker wins."""
    now = timezone.now()
    claimed = ExtractionJob.objects.filter(pk=job_id, status=JobStatus.PENDING).update(
        status=JobStatus.PROCESSING, attempts=F("attempts") + 1, started_at=now, heartbeat_at=now
    )
    if not claimed:
        return None
    return ExtractionJob.objects.select_related("org", "project").get(pk=job_id)


def _release(job: ExtractionJob, error: str) -> None:
    ExtractionJob.objects.filter(pk=job.pk, status=JobStatus.PROCESSING).update(
        status=JobStatus.PENDING, error=error[:2000]
    )


def _skipped(messages: list[dict]) -> list[dict]:
    return [
        {
            "message_id": m.get("message_id") or "",
            "reason": "user message under the minimum length (MEMORY_MIN_LENGTH, weighted)",
        }
        for m in messages
        if m.get("role") in USER_ROLES and not m.get("context") and message_too_short(m.get("content") or "")
    ]


def _candidates(job: ExtractionJob, *, last: bool = False) -> tuple[list, list[str], str, str]:
    """(candidates, taken back, method, note) — the LLM path when configured, else or on its failure the rule path,
    which also tells what the turn took back of what an earlier job wrote (rules.read_turn).

    last: no later attempt will come (a job run in the request), so a transient failure uses the rules."""
    client = llm_for(job.org)
    if client is None:
        return *read_turn(job.messages), "rules", ""
    try:
        return extract_llm(client, job.messages), [], "llm", ""
    except LLMInvalidOutput as exc:
        return *read_turn(job.messages), "rules", f"{exc}; used the rule path"
    except LLMError as exc:
        if exc.transient and not last and job.attempts < settings.EXTRACTION_MAX_ATTEMPTS:
            message = f"attempt {job.attempts}: {exc}; will retry"
            _release(job, message)
            raise RetryLater(message, _retry_after(job)) from exc
        return (
            *read_turn(job.messages),
            "rules",
            f"attempt {job.attempts}: the chat model failed ({exc}); used the rule path",
        )


def extraction_job_run(*, job_id: int) -> str:
    """Claim and process one job; returns its status ("skipped" when another worker has it or it is done)."""
    job = _claim(job_id)
    if job is None:
        _wake_next()  # a message for a job already taken or gone still passes the turn on
        return "skipped"
    status = _process(job)
    _wake_next()
    return status


def _process(job: ExtractionJob) -> str:
    """Run a claimed job under its heartbeat and announce its end; RetryLater passes through."""
    with heartbeat(ExtractionJob, job.pk):
        status = _run(job)
    # The job's row says it is done: a receiver's error is logged (send_robust), never the task's.
    extraction_finished.send_robust(sender=ExtractionJob, job=job, status=status)
    return status


def _wake_next() -> None:
    """After a job: wake the next worker while fresh jobs wait (bounded; see memory/extraction/fair.py).

    Job messages (retries, the sweep's) count as waiting; a worker that ran one keeps the fresh jobs going."""
    if fair.enabled() and fair.fresh_jobs().exists():
        fair.wake()


def extraction_job_run_next() -> str:
    """A wake-up of the fair scheduler: claim and process the fairest fresh job, then wake the next worker
    while fresh jobs remain. "idle" when there was none; a job that must retry gets a message of its own,
    after its backoff."""
    job = fair.claim_next()
    if job is None:
        return "idle"
    try:
        status = _process(job)
    except RetryLater as exc:
        from .tasks import extraction_run

        status = "retry"
        try:
            extraction_run.apply_async(args=[job.pk], countdown=exc.countdown)
        except Exception as send_error:  # noqa: BLE001 - the sweep sends released jobs again
            log.warning("could not schedule the retry of job %s: %s", job.pk, type(send_error).__name__)
    _wake_next()
    return status


def extraction_run_now(
    *,
    org,
    user_id: str,
    messages: list[dict],
    project=None,
    session_id: str = "",
    agent_id: str = "",
    created_by_key=None,
    draft_fields: dict | None = None,
) -> ExtractionJob:
    """Extract from one turn in the caller's request (the Mem0 add with infer): the same job row, rules,
    gate and reconciliation as the queue, run once, as its last attempt (no retry: a transient model
    failure uses the rule path). The job comes back done, with its result, or failed, with its error.
    draft_fields: more fields of every memory it writes (metadata, occurred_at, expires_at)."""
    job = extraction_job_create(
        org=org,
        user_id=user_id,
        messages=messages,
        project=project,
        session_id=session_id,
        agent_id=agent_id,
        created_by_key=created_by_key,
        enqueue=False,
    )
    claimed = _claim(job.pk)  # the sweep must not hand it to a worker meanwhile
    status = _run(claimed, last=True, draft_fields=draft_fields)
    extraction_finished.send_robust(sender=ExtractionJob, job=claimed, status=status)
    claimed.refresh_from_db()
    return claimed


def _target(job: ExtractionJob, draft_fields: dict | None = None) -> Target:
    return Target(
        org=job.org,
        user_id=job.user_id,
        project=job.project,
        session_id=job.session_id,
        agent_id=job.agent_id,
        job_id=job.pk,
        actor=system_actor_for_job(job),
        draft_fields=draft_fields or {},
    )


class DeferredError(Exception):
    """The deferred candidate does not exist (404), was already accepted (409) or was taken back later in the
    conversation (409, `withdrawn`)."""

    def __init__(self, status: int, message: str, *, withdrawn: bool = False):
        super().__init__(message)
        self.status = status
        self.withdrawn = withdrawn


@transaction.atomic
def extraction_job_accept_deferred(*, job: ExtractionJob, index: int, actor) -> tuple[ExtractionJob, dict]:
    """Write a candidate the job held back (the session's cap, or code "unsure": not worded as a statement), as the
    user had asked for it (the cap does not count it).

    It goes through the same gate and reconciliation as any candidate (a correction still supersedes);
    the job's entry records what became of it ({"kind", "id", "by"}). Returns the job and that outcome.
    """
    job = (
        ExtractionJob.objects.select_for_update(of=("self",)).select_related("org", "project").get(pk=job.pk)
    )
    deferred = (job.result or {}).get("deferred") or []
    if not 0 <= index < len(deferred):
        raise DeferredError(404, "No such deferred candidate.")
    entry = deferred[index]
    if entry.get("accepted"):
        raise DeferredError(409, "This candidate was already accepted.")
    if entry.get("withdrawn"):
        raise DeferredError(409, "This candidate was taken back later in the conversation.", withdrawn=True)
    candidate = Candidate(
        content=entry["content"],
        memory_type=entry.get("memory_type") or "fact",
        confidence=float(entry.get("confidence") or 0.9),
        scope=entry.get("scope") or "user",
        correction=bool(entry.get("correction")),
        source_message_id=entry.get("source_message_id") or "",
        rule=entry.get("rule") or "",
        explicit=True,
    )
    target = _target(job)
    lock_subjects(job.org_id, target.subjects())
    outcome = reconcile(
        target=target, candidate=candidate, client=None, provider=provider_for(job.org, job.user_id)
    )
    if outcome.kind == "deferred":  # cannot happen (explicit is not capped); kept honest anyway
        raise DeferredError(409, "The session's limit still applies.")
    accepted = {"kind": outcome.kind, "id": outcome.entry.get("id"), "by": actor.label}
    if outcome.kind == "rejected":
        accepted["reason"] = outcome.entry.get("reason", "")
    entry["accepted"] = accepted
    result = dict(job.result)
    result["deferred"] = deferred
    if outcome.kind != "rejected":
        result.setdefault(outcome.kind, []).append({**outcome.entry, "memory_type": candidate.memory_type})
    ExtractionJob.objects.filter(pk=job.pk).update(result=result)
    job.result = result
    return job, accepted


def deferred_open(entry: dict) -> bool:
    """A deferred candidate a person may still accept: neither accepted nor taken back later (_withdraw)."""
    return not entry.get("accepted") and not entry.get("withdrawn")


# How many of the conversation's latest jobs a take-back looks through for deferred candidates.
WITHDRAW_JOBS = 20


def _withdraw(target: Target, texts: list[str]) -> list[dict]:
    """Archive what an earlier turn of this conversation wrote and a later message took back or corrected
    (rules.taken_back): only active memories of the subject written by extraction in this session with that
    very text. Each keeps a revision and can be restored; the job lists them under "withdrawn"."""
    if not texts or not target.session_id:
        return []
    items = MemoryItem.objects.filter(
        org=target.org,
        user_id=target.user_id,
        session_id=target.session_id,
        status=Status.ACTIVE,
        source=Source.AUTO,
        source_id__startswith=JOB_SOURCE,
        content__in=texts,
    ).order_by("id")
    out = []
    reason = f"taken back or corrected later in the conversation (extraction job #{target.job_id})"
    for item in items:
        memory_archive(actor=target.actor, item=item, reason=reason)
        out.append({"id": item.pk, "content": item.content, "reason": reason})
    # what an earlier job of the conversation deferred (the session's cap) and nobody accepted is no longer offered
    earlier_jobs = (
        ExtractionJob.objects.select_for_update(of=("self",))
        .filter(org=target.org, user_id=target.user_id, session_id=target.session_id, status=JobStatus.DONE)
        .exclude(pk=target.job_id)
        .order_by("-id")[:WITHDRAW_JOBS]
    )
    for earlier in earlier_jobs:
        deferred = (earlier.result or {}).get("deferred") or []
        marked = [e for e in deferred if e.get("content") in texts and deferred_open(e)]
        for entry in marked:
            entry["withdrawn"] = {"job": target.job_id}
            out.append({"content": entry["content"], "reason": reason, "deferred_by_job": earlier.pk})
        if marked:
            ExtractionJob.objects.filter(pk=earlier.pk).update(
                result={**earlier.result, "deferred": deferred}
            )
    return out


def _run(job: ExtractionJob, *, last: bool = False, draft_fields: dict | None = None) -> str:
    level = paused(job.org, job.user_id, job.session_id)
    if level:  # memory paused since the turn was queued: nothing is extracted, the job says why
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=JobStatus.DONE,
            result={
                "paused": level,
                "added": [],
                "merged": [],
                "superseded": [],
                "rejected": [],
                "deferred": [],
                "skipped": [],
            },
            error="",
            finished_at=timezone.now(),
        )
        return JobStatus.DONE
    last = last or job.attempts >= settings.EXTRACTION_MAX_ATTEMPTS
    try:
        candidates, taken, method, note = _candidates(job, last=last)
        client = llm_for(job.org) if method == "llm" else None
        provider = provider_for(job.org, job.user_id)
        target = _target(job, draft_fields)
        result: dict = {
            "added": [],
            "merged": [],
            "superseded": [],
            "rejected": [],
            "deferred": [],
            "skipped": _skipped(job.messages),
        }
        with transaction.atomic():
            # Every subject locked at once (in one order): candidates of two jobs cannot deadlock.
            lock_subjects(job.org_id, target.subjects())
            for candidate in candidates:
                outcome = reconcile(target=target, candidate=candidate, client=client, provider=provider)
                result[outcome.kind].append(
                    {
                        **outcome.entry,
                        "memory_type": candidate.memory_type,
                        "confidence": candidate.confidence,
                    }
                )
            if method == "rules":
                result["withdrawn"] = _withdraw(target, taken)
            result["candidates"] = len(candidates)
            ExtractionJob.objects.filter(pk=job.pk).update(
                status=JobStatus.DONE, method=method, result=result, error=note, finished_at=timezone.now()
            )
        return JobStatus.DONE
    except RetryLater:
        raise
    except Exception as exc:
        log.exception("extraction job %s failed on attempt %s", job.pk, job.attempts)
        message = f"attempt {job.attempts}: {type(exc).__name__}: {str(exc)[:500]}"
        if not last:
            _release(job, message + "; will retry")
            raise RetryLater(message, _retry_after(job)) from exc
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=JobStatus.FAILED, error=message, finished_at=timezone.now()
        )
        return JobStatus.FAILED


@transaction.atomic
def extraction_job_retry(*, job: ExtractionJob) -> tuple[ExtractionJob, bool]:
    """A failed job goes back to pending with fresh attempts (its last error stays visible until it runs)."""
    updated = ExtractionJob.objects.filter(pk=job.pk, status=JobStatus.FAILED).update(
        status=JobStatus.PENDING, attempts=0, finished_at=None
    )
    if updated:
        _enqueue(job.pk)
    job.refresh_from_db()
    return job, bool(updated)


def extraction_jobs_sweep() -> dict:
    """Stale claims (worker died) go back to pending; pending jobs nobody is working on are enqueued again."""
    now = timezone.now()
    # Processing, but its worker stopped beating: back to pending, and enqueued at once below.
    dead = stale_q(now, claimed_field="started_at")
    stale = list(ExtractionJob.objects.filter(dead).values_list("pk", flat=True)[:1000])
    returned = ExtractionJob.objects.filter(dead, pk__in=stale).update(
        status=JobStatus.PENDING, error="returned to pending by the sweep (the worker stopped)"
    )
    # Never claimed and older than a minute (the enqueue was lost), or claimed long ago and released.
    never_claimed = Q(attempts=0, created_at__lt=now - timedelta(seconds=60))
    released = Q(attempts__gt=0, started_at__lt=now - timedelta(seconds=settings.EXTRACTION_STALE_AFTER))
    fair_mode = fair.enabled()
    lost = ExtractionJob.objects.filter(status=JobStatus.PENDING).filter(
        Q(pk__in=stale) | released | (Q() if fair_mode else never_claimed)
    )
    ids = list(lost.values_list("pk", flat=True)[:1000])
    from .tasks import extraction_run

    for job_id in ids:
        extraction_run.delay(job_id)
    if not fair_mode:
        return {"returned": returned, "enqueued": len(ids)}
    # Fresh jobs are the fair scheduler's: a minute-old one means wake-ups were lost; top them up.
    woken = 0
    if fair.fresh_jobs().filter(never_claimed).exists():
        woken = fair.wake(most=fair.fresh_jobs()[: settings.EXTRACTION_WAKEUPS].count())
    return {"returned": returned, "enqueued": len(ids), "woken": woken}
