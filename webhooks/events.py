"""The events webhooks send, built from what memory, extraction and forget signal (webhooks.apps connects
these receivers; those apps never import this one).

A payload is Standard Webhooks' shape: {"type", "timestamp", "data"}. data carries ids and metadata; a
memory's content, tags and metadata only for endpoints that opted in (include_content), and never for a
deleted memory. The receivers run inside the writer's transaction: the deliveries exist exactly when the
change does, and are sent after it commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from core.secrets import redact
from memory.models import (
    ExtractionJob,
    JobStatus,
    MemoryItem,
    MemoryRevision,
    RevisionAction,
    Scope,
    Visibility,
)

from .models import Event, WebhookDelivery

MEMORY_EVENTS = {
    RevisionAction.ADD: Event.MEMORY_CREATED,
    RevisionAction.UPDATE: Event.MEMORY_UPDATED,
    RevisionAction.ARCHIVE: Event.MEMORY_UPDATED,
    RevisionAction.RESTORE: Event.MEMORY_UPDATED,
    RevisionAction.MERGE: Event.MEMORY_MERGED,
    RevisionAction.SUPERSEDE: Event.MEMORY_SUPERSEDED,
    RevisionAction.DELETE: Event.MEMORY_DELETED,
}
CONTENT_FIELDS = ("content", "tags", "metadata")


@dataclass
class Occurrence:
    """One event of an org, before it is addressed to endpoints."""

    event: str
    data: dict  # ids and metadata: every subscribed endpoint gets these
    content: dict = field(default_factory=dict)  # only endpoints with include_content
    user_id: str = ""  # the subject it is about ("" for none)
    project_id: int | None = None
    shared: bool = False  # readable by the project's admins (projects.access.webhook_receives)


def rfc3339(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def payload(occurrence: Occurrence, *, include_content: bool) -> dict:
    data = dict(occurrence.data)
    if include_content:
        data.update(occurrence.content)
    return {"type": occurrence.event, "timestamp": rfc3339(timezone.now()), "data": data}


# ---- memory ---------------------------------------------------------------------------------------


def memory_occurrence(revision: MemoryRevision, item: MemoryItem | None) -> Occurrence:
    event = MEMORY_EVENTS.get(revision.action, Event.MEMORY_UPDATED)
    data = {"id": revision.item_ref, "revision": revision.number, "action": revision.action}
    content: dict = {}
    shared = False
    project_id = None
    if item is not None:
        project_id = item.project_id
        shared = item.scope == Scope.PROJECT and item.visibility != Visibility.OWNER_ONLY
        data.update(
            {
                "project": item.project_id,
                "scope": item.scope,
                "user_id": item.user_id,
                "session_id": item.session_id,
                "agent_id": item.agent_id,
                "memory_type": item.memory_type,
                "status": item.status,
                "visibility": item.visibility,
                "version": item.version,
                "superseded_by": item.superseded_by_id,
                "created_at": rfc3339(item.created_at),
            }
        )
        if event != Event.MEMORY_DELETED:
            content = {name: getattr(item, name) for name in CONTENT_FIELDS}
    data["actor"] = revision.actor
    return Occurrence(event, data, content, user_id=revision.user_id, project_id=project_id, shared=shared)


def on_revisions(sender, *, org_id: int, revisions: list[MemoryRevision], **kwargs) -> None:
    """Receiver of memory.signals.revisions_written."""
    from .services import deliveries_create, receiving_endpoints

    endpoints = receiving_endpoints(org_id)
    if not endpoints or not revisions:
        return
    items: dict[int, MemoryItem] = {
        r.item_ref: r.item for r in revisions if MemoryRevision.item.is_cached(r) and r.item is not None
    }
    missing = [r.item_ref for r in revisions if r.item_ref not in items]
    if missing:
        items.update(MemoryItem.objects.filter(org_id=org_id).in_bulk(missing))
    deliveries_create(
        org_id=org_id,
        endpoints=endpoints,
        occurrences=[memory_occurrence(r, items.get(r.item_ref)) for r in revisions],
    )


# ---- extraction -----------------------------------------------------------------------------------


def _ids(entries) -> list[int]:
    return [e["id"] for e in entries or [] if isinstance(e, dict) and isinstance(e.get("id"), int)]


def extraction_occurrence(job: ExtractionJob) -> Occurrence:
    result = job.result or {}
    done = job.status == JobStatus.DONE
    data = {
        "id": job.pk,
        "status": job.status,
        "user_id": job.user_id,
        "project": job.project_id,
        "session_id": job.session_id,
        "agent_id": job.agent_id,
        "method": job.method,
        "attempts": job.attempts,
        "added": _ids(result.get("added")),
        "merged": _ids(result.get("merged")),
        "superseded": _ids(result.get("superseded")),
        "withdrawn": _ids(result.get("withdrawn")),
        "rejected": len(result.get("rejected") or []),
        "skipped": len(result.get("skipped") or []),
        "deferred": len(result.get("deferred") or []),
        "finished_at": rfc3339(job.finished_at),
    }
    if not done:
        data["error"] = redact(job.error or "")[:500]
    event = Event.EXTRACTION_COMPLETED if done else Event.EXTRACTION_FAILED
    return Occurrence(
        event, data, user_id=job.user_id, project_id=job.project_id, shared=job.project_id is not None
    )


def on_extraction(sender, *, job: ExtractionJob, status: str, **kwargs) -> None:
    """Receiver of memory.signals.extraction_finished (in the worker, after the job's row says so)."""
    from .services import deliveries_create, receiving_endpoints

    endpoints = receiving_endpoints(job.org_id)
    if not endpoints:
        return
    job = ExtractionJob.objects.filter(pk=job.pk).first()
    if job is None or job.status not in (JobStatus.DONE, JobStatus.FAILED):
        return
    deliveries_create(org_id=job.org_id, endpoints=endpoints, occurrences=[extraction_occurrence(job)])


# ---- forget ---------------------------------------------------------------------------------------


def scrub(payload: dict) -> dict:
    """The payload without a memory's content (what a forget must not leave behind)."""
    data = {k: v for k, v in (payload.get("data") or {}).items() if k not in CONTENT_FIELDS}
    return {**payload, "data": data}


def on_forget(sender, *, org_id: int, user_id: str, complete: bool, deleted: dict, **kwargs) -> None:
    """Receiver of workspace.signals.subject_forgotten: the subject's deliveries that are left (a
    restricted key's forget keeps some; a whole one removed them) lose their content, and org-wide
    endpoints hear of it (ids only: the subject and counts)."""
    from .services import deliveries_create, receiving_endpoints

    left = list(WebhookDelivery.objects.filter(org_id=org_id, user_id=user_id))
    for delivery in left:
        delivery.payload = scrub(delivery.payload)
    WebhookDelivery.objects.bulk_update(left, ["payload"], batch_size=500)
    endpoints = receiving_endpoints(org_id)
    if endpoints:
        data = {"user_id": user_id, "complete": complete, "deleted": dict(deleted)}
        deliveries_create(
            org_id=org_id, endpoints=endpoints, occurrences=[Occurrence(Event.SUBJECT_FORGOTTEN, data)]
        )
