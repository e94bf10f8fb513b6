"""Background work for sessions and checkpoints. Tasks take ids and exit quietly if the row is gone."""

import random

from celery import shared_task
from django.conf import settings

from core.llm import LLMError

from . import services

COMPRESS_ATTEMPTS = 3


@shared_task(bind=True, acks_late=True, max_retries=COMPRESS_ATTEMPTS)
def session_compress(self, session_pk: int) -> dict:
    """Fold old messages into the summary. With the model down it retries with backoff; the last
    attempt falls back to the truncating summary so the window cannot grow without bound."""
    last = self.request.retries >= COMPRESS_ATTEMPTS - 1
    try:
        return services.session_compress(session_pk=session_pk, use_llm=not last)
    except LLMError as exc:
        base = settings.EXTRACTION_RETRY_BACKOFF
        raise self.retry(exc=exc, countdown=base * 4**self.request.retries + random.uniform(0, base)) from exc


@shared_task(acks_late=True)
def sessions_expire() -> int:
    """Beat: sessions idle longer than SHORT_TERM_TTL lose their short-term memory."""
    return services.sessions_expire()


@shared_task(acks_late=True)
def checkpoints_archive() -> int:
    """Beat: old checkpoints move to the compressed archive (never a live session's latest)."""
    return services.checkpoints_archive()
