"""Celery interface of the extraction queue: tasks take ids; the work is in services."""

from celery import shared_task

from .services import RetryLater, extraction_job_run, extraction_job_run_next, extraction_jobs_sweep


@shared_task(bind=True, acks_late=True, max_retries=None)
def extraction_run(self, job_id: int) -> str:
    """Run one job; transient failures were recorded on the row and retry after a backoff with jitter."""
    try:
        return extraction_job_run(job_id=job_id)
    except RetryLater as exc:
        # The attempts limit lives in the job row (EXTRACTION_MAX_ATTEMPTS), not in the broker.
        raise self.retry(countdown=exc.countdown, exc=exc) from exc


@shared_task(acks_late=True)
def extraction_next() -> str:
    """A wake-up: run the fairest pending turn of any org (memory/extraction/fair.py)."""
    return extraction_job_run_next()


@shared_task(acks_late=True)
def extraction_sweep() -> dict:
    """Beat: return stale claims to pending and enqueue jobs nobody is working on."""
    return extraction_jobs_sweep()
