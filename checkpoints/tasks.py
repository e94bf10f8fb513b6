"""Background work for sessions and checkpoints. Tasks take ids and exit quietly if the row is gone."""

from celery import shared_task
from django.conf import settings

from core.llm import LLMError

from . import services

COMPRESS_ATTEMPTS = 3


# With the model down Celery retries, waiting up to base·2^retries seconds (full jitter), at most 5 minutes.
# A base of 0 would turn Celery's backoff off (and its 3-minute default delay on): 1 second is the least.
@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(LLMError,),
    retry_backoff=max(1.0, settings.EXTRACTION_RETRY_BACKOFF),
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=COMPRESS_ATTEMPTS,
)
def session_compress(self, session_pk: int) -> dict:
    """Fold old messages into the summary. With the model down it is retried with backoff; the last
    attempt falls back to the truncating summary so the window cannot grow without bound."""
    last = self.request.retries >= COMPRESS_ATTEMPTS - 1
    return services.session_compress(session_pk=session_pk, use_llm=not last)


@shared_task(acks_late=True)
def sessions_expire() -> int:
    """Beat: sessions idle longer than SHORT_TERM_TTL lose their short-term memory."""
    return services.sessions_expire()


@shared_task(acks_late=True)
def checkpoints_archive() -> int:
    """Beat: old checkpoints move to the compressed archive (never a live session's latest)."""
    return services.checkpoints_archive()
