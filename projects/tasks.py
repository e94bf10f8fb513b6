"""Background work of the tenancy layer."""

from celery import shared_task

from .idempotency import idempotency_purge


@shared_task(acks_late=True)
def idempotency_keys_purge() -> int:
    """Beat: stored Idempotency-Key answers older than 24 hours are deleted (they replay nothing any more)."""
    return idempotency_purge()
