"""Idempotent writes: the first answer to a write sent with an Idempotency-Key, kept for 24 hours.

A key belongs to its org and to who sent it (one API key, or one signed-in account): another org, or
another key of the same org, never sees its answer. The API side (claiming a key before the write,
storing or releasing it after) is projects.api.idempotency; this module holds the rows.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.utils import timezone

from .access import Actor
from .models import IdempotencyKey

log = logging.getLogger(__name__)

TTL = timedelta(hours=24)
# A claim whose request never finished (its process died) is taken over after this long; no API
# request runs that long (the server's timeouts end it first).
ABANDONED_AFTER = timedelta(minutes=10)


class KeyReused(Exception):
    """The key was used for a different request (another method, path or body)."""


class KeyInFlight(Exception):
    """The first request with this key has not answered yet."""


def principal_of(actor: Actor) -> str:
    if actor.api_key is not None:
        return f"key:{actor.api_key.pk}"
    return f"account:{getattr(actor.account, 'pk', '?')}"


def idempotency_claim(*, actor: Actor, key: str, fingerprint: str) -> tuple[IdempotencyKey, bool]:
    """(row, fresh): fresh means the caller runs the write and then calls idempotency_store or
    idempotency_release; otherwise the row holds the answer to replay. Raises KeyReused or KeyInFlight.

    The claim commits at once (its own transaction when the caller has none), so a second request
    with the same key sees it while the first is still running."""
    now = timezone.now()
    with transaction.atomic():
        row, created = IdempotencyKey.objects.select_for_update().get_or_create(
            org=actor.org,
            principal=principal_of(actor),
            key=key,
            defaults={"fingerprint": fingerprint, "created_at": now},
        )
        if created:
            return row, True
        expired = row.created_at <= now - TTL
        abandoned = row.status_code is None and row.created_at <= now - ABANDONED_AFTER
        if expired or abandoned:
            row.fingerprint, row.status_code, row.body, row.headers, row.subjects = (
                fingerprint,
                None,
                "",
                {},
                [],
            )
            row.created_at = now
            row.save()
            return row, True
        if row.status_code is None:  # first: if the first request fails, its key is free again
            raise KeyInFlight
        if row.fingerprint != fingerprint:
            raise KeyReused
        return row, False


def idempotency_store(
    *, row: IdempotencyKey, status_code: int, body: str, headers: dict, subjects: list[str]
) -> None:
    """Keep the answer of a claimed key (a 2xx) for replay."""
    row.status_code, row.body, row.headers = status_code, body, headers
    row.subjects = sorted(set(subjects))
    row.save(update_fields=["status_code", "body", "headers", "subjects"])


def idempotency_release(*, row: IdempotencyKey) -> None:
    """Drop a claim whose request failed: a retry with the same key runs again."""
    try:
        with transaction.atomic():
            IdempotencyKey.objects.filter(pk=row.pk, status_code__isnull=True).delete()
    except DatabaseError:  # the request's own transaction is broken; the claim is taken over later
        log.warning(
            "could not release idempotency key %s; it is taken over after %s", row.pk, ABANDONED_AFTER
        )


def idempotency_forget_subject(*, org, user_id: str) -> int:
    """Remove the stored answers that name the subject (workspace.subjects forget)."""
    return IdempotencyKey.objects.filter(org=org, subjects__contains=[user_id]).delete()[0]


def idempotency_purge() -> int:
    """Delete the keys older than TTL (they replay nothing any more), every org's."""
    return IdempotencyKey.objects.filter(created_at__lte=timezone.now() - TTL).delete()[0]
