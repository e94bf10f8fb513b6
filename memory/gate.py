"""The memory gate (seed 000): confidence, sensitive content, length, rate limit.

Duplicates are decided by the services (they need the database and the embedding).
Every rejection carries a code and a message; the content itself is never logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings

from core.secrets import sensitive_reason


@dataclass
class GateRejection(Exception):
    code: str  # sensitive_content | too_short | too_long | low_confidence | rate_limited
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# ---- the checks -------------------------------------------------------------------------------------


def check_length(content: str) -> None:
    n = len(content.strip())
    if n < settings.MEMORY_MIN_LENGTH:
        raise GateRejection("too_short", f"A memory needs at least {settings.MEMORY_MIN_LENGTH} characters.")
    if n > settings.MEMORY_MAX_LENGTH:
        raise GateRejection(
            "too_long", f"A memory may have at most {settings.MEMORY_MAX_LENGTH} characters (got {n})."
        )


def check_confidence(confidence: float) -> None:
    if confidence < settings.MEMORY_MIN_CONFIDENCE:
        raise GateRejection(
            "low_confidence",
            f"Confidence {confidence:.2f} is below the minimum {settings.MEMORY_MIN_CONFIDENCE:.2f}.",
        )


def check_sensitive(content: str) -> None:
    reason = sensitive_reason(content)
    if reason:
        raise GateRejection("sensitive_content", f"Refused: the text {reason}; secrets are never stored.")


RATE_LIMIT_MESSAGE = "This session already gave its automatic extractions for the last 24 hours."


def check_rate_limit(org, session_id: str, *, batch: dict[str, int] | None = None) -> int:
    """Seed 000's rate limit for automatic extraction: at most MEMORY_MAX_EXTRACTIONS per session per 24 h.

    Counts the items with source=auto created in the session in the last 24 hours and returns that
    count; raises GateRejection("rate_limited") when the limit is reached. No session, no limit.
    batch: a batch's running count per session: the stored items are counted once, then every item the
    batch lets through adds one (they are not stored yet when the next one is checked).
    """
    if not session_id:
        return 0
    if batch is not None and session_id in batch:
        used = batch[session_id]
    else:
        used = _auto_created_today(org, session_id)
    if used >= settings.MEMORY_MAX_EXTRACTIONS:
        raise GateRejection(
            "rate_limited",
            f"{RATE_LIMIT_MESSAGE} (limit {settings.MEMORY_MAX_EXTRACTIONS}, set by MEMORY_MAX_EXTRACTIONS)",
        )
    if batch is not None:
        batch[session_id] = used + 1
    return used


def _auto_created_today(org, session_id: str) -> int:
    from django.utils import timezone

    from memory.models import MemoryItem, Source

    since = timezone.now() - timedelta(hours=24)
    return MemoryItem.objects.filter(
        org=org, session_id=session_id, source=Source.AUTO, created_at__gte=since
    ).count()


def check(content: str, confidence: float = 1.0) -> None:
    """Seed 000's order: confidence, sensitive content, length. Raises GateRejection."""
    check_confidence(confidence)
    check_sensitive(content)
    check_length(content)
