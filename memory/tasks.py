"""Background work for memories. Tasks take ids and exit quietly if the row is gone."""

import logging
from datetime import timedelta

from celery import shared_task
from django.db.models import F, Q
from django.utils import timezone

from .embeddings import EmbeddingError, provider_for
from .heartbeat import heartbeat, stale_q
from .models import EmbeddingConfig, JobStatus, MemoryItem, ReembedJob

log = logging.getLogger(__name__)

REEMBED_BATCH = 128


# While the provider is down: Celery retries up to 8 times, waiting up to 5·2^retries seconds (full
# jitter), at most 10 minutes; after that the sweep below picks the item up again.
EMBED_RETRY = {
    "autoretry_for": (EmbeddingError,),
    "retry_backoff": 5,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 8,
}


@shared_task(acks_late=True, **EMBED_RETRY)
def memory_embed(item_id: int) -> None:
    """Embed an item whose embedding failed earlier; retried with backoff and jitter while the provider is down."""
    item = MemoryItem.objects.filter(pk=item_id).select_related("org").first()
    if item is None:
        return
    provider = provider_for(item.org, item.user_id)
    if item.embedding is not None and item.embedding_model == provider.model_name:
        return
    vector = provider.embed_passages([item.content])[0]
    # Only if the text is still the one we embedded (an edit in between re-embeds by itself).
    MemoryItem.objects.filter(pk=item_id, content_hash=item.content_hash).update(
        embedding=vector, embedding_model=provider.model_name
    )


@shared_task(acks_late=True, **EMBED_RETRY)
def memory_embed_many(item_ids: list[int]) -> None:
    """The batch write's retry: embed every still-unembedded item of the list, one provider call per subject.

    A retry gets the whole list again; what was embedded meanwhile is skipped."""
    items = list(
        MemoryItem.objects.filter(pk__in=item_ids, embedding=None).select_related("org").order_by("pk")
    )
    by_subject: dict[tuple, list[MemoryItem]] = {}
    for item in items:
        by_subject.setdefault((item.org_id, item.user_id), []).append(item)
    error: EmbeddingError | None = None
    for rows in by_subject.values():
        provider = provider_for(rows[0].org, rows[0].user_id)
        try:
            vectors = provider.embed_passages([row.content for row in rows])
        except EmbeddingError as exc:
            log.warning("retry of %d embeddings failed: %s", len(rows), exc)
            error = exc
            continue
        for row, vector in zip(rows, vectors, strict=True):
            MemoryItem.objects.filter(pk=row.pk, content_hash=row.content_hash).update(
                embedding=vector, embedding_model=provider.model_name
            )
    if error is not None:
        raise error  # the other subjects' vectors are stored; Celery retries the rest


EMBED_SWEEP_AFTER = timedelta(minutes=10)


@shared_task
def memory_embed_sweep() -> dict:
    """Memories still without a vector ten minutes after their last write (the enqueue was lost while the
    broker was down, or a retry chain gave up): send them again, a bounded number per run."""
    cutoff = timezone.now() - EMBED_SWEEP_AFTER
    ids = list(
        MemoryItem.objects.filter(embedding=None, updated_at__lt=cutoff)
        .order_by("pk")
        .values_list("pk", flat=True)[:2000]
    )
    for start in range(0, len(ids), REEMBED_BATCH):
        memory_embed_many.delay(ids[start : start + REEMBED_BATCH])
    return {"enqueued": len(ids)}


def reembed_queryset(job: ReembedJob):
    """The org's items whose resolved model is the job's model but whose vector is of another model (or none).

    Users with their own embedding setting use it; everyone else uses the org's setting (or the default).
    """
    configs = {c.user_id: c for c in EmbeddingConfig.objects.filter(org=job.org)}
    overriding = [uid for uid in configs if uid]
    mine = [uid for uid in overriding if provider_for(job.org, uid).model_name == job.model]
    qs = MemoryItem.objects.filter(org=job.org).exclude(embedding_model=job.model, embedding__isnull=False)
    org_model = provider_for(job.org, "").model_name
    if org_model == job.model:
        return qs.exclude(user_id__in=[uid for uid in overriding if uid not in mine])
    return qs.filter(user_id__in=mine)


@shared_task(bind=True, acks_late=True, max_retries=3)
def reembed_run(self, job_id: int) -> None:
    """Re-embed an org's memories after a model change, in batches, recording done/total/errors on the job."""
    # Pending, or processing by a worker that stopped beating (a redelivered task): one worker wins.
    now = timezone.now()
    claimed = (
        ReembedJob.objects.filter(pk=job_id)
        .filter(Q(status=JobStatus.PENDING) | stale_q(now, claimed_field="created_at"))
        .update(status=JobStatus.PROCESSING, heartbeat_at=now)
    )
    job = ReembedJob.objects.filter(pk=job_id).select_related("org").first()
    if job is None or not claimed:
        return
    with heartbeat(ReembedJob, job.pk):
        _reembed(job)


def _reembed(job: ReembedJob) -> None:
    qs = reembed_queryset(job)
    if not job.total:
        job.total = qs.count()
        job.save(update_fields=["total"])
    last_pk = 0
    while True:
        batch = list(
            qs.filter(pk__gt=last_pk)
            .order_by("pk")
            .only("pk", "content", "user_id", "content_hash")[:REEMBED_BATCH]
        )
        if not batch:
            break
        last_pk = batch[-1].pk
        by_user: dict[str, list[MemoryItem]] = {}
        for row in batch:
            by_user.setdefault(row.user_id, []).append(row)
        for user_id, rows in by_user.items():
            provider = provider_for(job.org, user_id)
            if provider.model_name != job.model:  # the setting changed again; a newer job handles it
                continue
            try:
                vectors = provider.embed_passages([row.content for row in rows])
            except EmbeddingError as exc:
                ReembedJob.objects.filter(pk=job.pk).update(
                    errors=F("errors") + len(rows), error=str(exc)[:500]
                )
                continue
            for row, vector in zip(rows, vectors, strict=True):
                MemoryItem.objects.filter(pk=row.pk, content_hash=row.content_hash).update(
                    embedding=vector, embedding_model=provider.model_name
                )
            ReembedJob.objects.filter(pk=job.pk).update(done=F("done") + len(rows))
    job.refresh_from_db()
    job.status = JobStatus.DONE if job.errors == 0 else JobStatus.FAILED
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at"])


@shared_task
def reembed_sweep() -> dict:
    """Beat: re-embed jobs whose worker stopped beating go back to pending and are sent again."""
    dead = stale_q(timezone.now(), claimed_field="created_at")
    ids = list(ReembedJob.objects.filter(dead).values_list("pk", flat=True)[:100])
    returned = ReembedJob.objects.filter(dead, pk__in=ids).update(status=JobStatus.PENDING)
    for job_id in ids:
        reembed_run.delay(job_id)
    return {"returned": returned}


@shared_task(acks_late=True)
def store_items_purge() -> int:
    """Beat: store items whose TTL ran out are deleted (reads never return them already)."""
    from .store import store_purge_expired

    return store_purge_expired()


@shared_task
def access_counts_flush() -> int:
    """Beat: write the recall counts waiting in Redis (memory.search.access_counts), e.g. those of a web
    process that was stopped before its own flush; the number of memories written."""
    from .search.access_counts import access_recorder

    return access_recorder.flush()
