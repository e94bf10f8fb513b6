"""Writes to long-term memory. Every change writes a MemoryRevision; nothing is lost silently."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.postgres.search import SearchVectorField
from django.db import transaction
from django.db.models import F, Func, Max, Value
from django.utils import timezone

from projects.access import Actor, require_change_memory, require_create_memory
from projects.models import Project

from . import gate
from .embeddings import EmbeddingError, provider_for
from .models import MemoryItem, MemoryRevision, RevisionAction, Scope, Source, Status
from .text import content_hash, keyword_tokens
from .thresholds import duplicate_threshold

log = logging.getLogger(__name__)

SNAPSHOT_FIELDS = [
    "content",
    "memory_type",
    "scope",
    "user_id",
    "project_id",
    "session_id",
    "agent_id",
    "skill",
    "source",
    "source_id",
    "source_message_id",
    "confidence",
    "visibility",
    "status",
    "superseded_by_id",
    "pinned",
    "tags",
    "metadata",
    "occurred_at",
    "valid_from",
    "valid_until",
    "expires_at",
    "version",
]
EDITABLE_FIELDS = {
    "content",
    "memory_type",
    "confidence",
    "visibility",
    "pinned",
    "tags",
    "metadata",
    "occurred_at",
    "valid_from",
    "valid_until",
    "expires_at",
    "skill",
    "agent_id",
    "status",
}


def snapshot(item: MemoryItem) -> dict:
    out = {}
    for name in SNAPSHOT_FIELDS:
        value = getattr(item, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    return out


def revision_write(
    *, item: MemoryItem, action: str, actor: Actor | None, reason: str = "", before=None, after=None
):
    """Append the next numbered revision of an item."""
    last = (
        MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).aggregate(n=Max("number"))["n"] or 0
    )
    return MemoryRevision.objects.create(
        org_id=item.org_id,
        item=item,
        item_ref=item.pk,
        user_id=item.user_id,
        number=last + 1,
        action=action,
        actor=actor.label if actor else "system",
        reason=reason,
        before=before,
        after=after,
    )


def tokens_expression(text: str):
    return Func(
        Value(keyword_tokens(text) or [""]), function="array_to_tsvector", output_field=SearchVectorField()
    )


def _embed(item: MemoryItem) -> None:
    """Embed in the request when the provider answers; otherwise keep the item and retry in the background."""
    provider = provider_for(item.org, item.user_id)
    try:
        item.embedding = provider.embed_passages([item.content])[0]
        item.embedding_model = provider.model_name
    except EmbeddingError as exc:
        log.warning("embedding failed for memory %s: %s", item.pk, exc)
        item.embedding = None
        item.embedding_model = ""


def _enqueue_embedding_retry(item_id: int) -> None:
    from .tasks import memory_embed

    transaction.on_commit(lambda: memory_embed.delay(item_id))


@dataclass
class CreateResult:
    item: MemoryItem
    created: bool
    duplicate_of: int | None = None
    similarity: float | None = None
    details: dict = field(default_factory=dict)


def subject_filter(*, org, scope: str, user_id: str, project: Project | None, session_id: str) -> dict:
    """The rows that count as the same subject for deduplication."""
    if scope == Scope.PROJECT:
        return {"org": org, "scope": scope, "project": project}
    if scope == Scope.SESSION:
        return {"org": org, "scope": scope, "user_id": user_id, "session_id": session_id}
    return {"org": org, "scope": scope, "user_id": user_id}


def nearest_active(*, base: dict, embedding, model: str, limit: int = 5, exclude_id: int | None = None):
    """The subject's active memories nearest to a vector, with cosine similarity."""
    from pgvector.django import CosineDistance

    qs = MemoryItem.objects.filter(**base, status=Status.ACTIVE, embedding_model=model).exclude(
        embedding=None
    )
    if exclude_id:
        qs = qs.exclude(pk=exclude_id)
    rows = qs.annotate(distance=CosineDistance("embedding", embedding)).order_by("distance")[:limit]
    return [(row, 1.0 - row.distance) for row in rows]


def _merge_into(
    *, existing: MemoryItem, tags: list, actor: Actor | None, reason: str, similarity: float | None
):
    before = snapshot(existing)
    merged_tags = list(dict.fromkeys([*(existing.tags or []), *(tags or [])]))
    existing.tags = merged_tags
    existing.version = F("version") + 1
    existing.save(update_fields=["tags", "version", "updated_at"])
    existing.refresh_from_db()
    revision_write(
        item=existing,
        action=RevisionAction.MERGE,
        actor=actor,
        reason=reason
        or (f"duplicate (similarity {similarity:.3f})" if similarity is not None else "duplicate"),
        before=before,
        after=snapshot(existing),
    )
    return existing


@transaction.atomic
def memory_create(
    *,
    actor: Actor | None,
    org,
    content: str,
    memory_type: str = "fact",
    scope: str = Scope.USER,
    user_id: str = "",
    project: Project | None = None,
    session_id: str = "",
    agent_id: str = "",
    skill: str = "",
    source: str = Source.USER,
    source_id: str = "",
    source_message_id: str = "",
    confidence: float = 1.0,
    visibility: str = "members",
    pinned: bool = False,
    tags: list | None = None,
    metadata: dict | None = None,
    occurred_at=None,
    valid_from=None,
    valid_until=None,
    expires_at=None,
    reason: str = "",
    dedup: str = "similarity",  # "similarity" | "hash" | "none"
    embedding: list[float] | None = None,
    embedding_model: str = "",
) -> CreateResult:
    """Add one memory through the gate; a duplicate merges into the existing item instead."""
    if actor is not None:
        require_create_memory(actor, scope=scope, user_id=user_id, project=project)
    content = content.strip()
    gate.check(content, confidence)
    tags = list(tags or [])
    base = subject_filter(org=org, scope=scope, user_id=user_id, project=project, session_id=session_id)
    digest = content_hash(content)
    if dedup != "none":
        same = MemoryItem.objects.filter(**base, status=Status.ACTIVE, content_hash=digest).first()
        if same:
            merged = _merge_into(
                existing=same, tags=tags, actor=actor, reason="identical content", similarity=None
            )
            return CreateResult(item=merged, created=False, duplicate_of=merged.pk, similarity=1.0)
    item = MemoryItem(
        org=org,
        content=content,
        memory_type=memory_type,
        scope=scope,
        user_id=user_id or "",
        project=project,
        session_id=session_id or "",
        agent_id=agent_id or "",
        skill=skill or "",
        source=source,
        source_id=source_id,
        source_message_id=source_message_id,
        confidence=confidence,
        visibility=visibility,
        pinned=pinned,
        tags=tags,
        metadata=metadata or {},
        occurred_at=occurred_at,
        valid_from=valid_from,
        valid_until=valid_until,
        expires_at=expires_at,
        content_hash=digest,
        created_by=actor.account if actor and actor.account else None,
        created_by_key=actor.api_key if actor else None,
    )
    if embedding is not None:
        item.embedding, item.embedding_model = embedding, embedding_model
    else:
        _embed(item)
    if dedup == "similarity" and item.embedding is not None:
        nearest = nearest_active(base=base, embedding=item.embedding, model=item.embedding_model, limit=1)
        if nearest:
            existing, similarity = nearest[0]
            if similarity >= duplicate_threshold(item.embedding_model) and not _vetoed(
                existing.content, content
            ):
                merged = _merge_into(
                    existing=existing, tags=tags, actor=actor, reason="", similarity=similarity
                )
                return CreateResult(item=merged, created=False, duplicate_of=merged.pk, similarity=similarity)
    item.save()
    MemoryItem.objects.filter(pk=item.pk).update(search_tokens=tokens_expression(content))
    revision_write(item=item, action=RevisionAction.ADD, actor=actor, reason=reason, after=snapshot(item))
    if item.embedding is None:
        _enqueue_embedding_retry(item.pk)
    return CreateResult(item=item, created=True)


def _vetoed(existing: str, new: str) -> bool:
    """Hard differences (numbers, names, dates, negation) that keep two similar texts apart."""
    from .dedup import differs_materially

    return differs_materially(existing, new)


class StaleVersion(Exception):
    """The caller edited an older version than the stored one (HTTP 412)."""

    def __init__(self, current: MemoryItem):
        self.current = current


@transaction.atomic
def memory_update(
    *, actor: Actor | None, item: MemoryItem, expected_version: int | None = None, reason: str = "", **fields
) -> MemoryItem:
    """Edit an item (optimistic concurrency on version); content changes re-embed and re-check the gate."""
    item = MemoryItem.objects.select_for_update().get(pk=item.pk)
    if actor is not None:
        require_change_memory(actor, item)
    if expected_version is not None and expected_version != item.version:
        raise StaleVersion(item)
    unknown = set(fields) - EDITABLE_FIELDS
    if unknown:
        raise ValueError(f"not editable: {sorted(unknown)}")
    before = snapshot(item)
    changed = [name for name, value in fields.items() if getattr(item, name) != value]
    if not changed:
        return item
    if "content" in changed:
        fields["content"] = fields["content"].strip()
        gate.check_sensitive(fields["content"])
        gate.check_length(fields["content"])
    if "confidence" in changed:
        gate.check_confidence(fields["confidence"])
    for name, value in fields.items():
        setattr(item, name, value)
    if "content" in changed:
        item.content_hash = content_hash(item.content)
        _embed(item)
    item.version += 1
    item.save()
    if "content" in changed:
        MemoryItem.objects.filter(pk=item.pk).update(search_tokens=tokens_expression(item.content))
        if item.embedding is None:
            _enqueue_embedding_retry(item.pk)
    action = RevisionAction.ARCHIVE if fields.get("status") == Status.ARCHIVED else RevisionAction.UPDATE
    revision_write(item=item, action=action, actor=actor, reason=reason, before=before, after=snapshot(item))
    return item


@transaction.atomic
def memory_supersede(
    *, actor: Actor | None, old: MemoryItem, new: MemoryItem, reason: str = ""
) -> MemoryItem:
    """The new item replaces the old one; the old text stays, linked and revisioned."""
    old = MemoryItem.objects.select_for_update().get(pk=old.pk)
    before = snapshot(old)
    old.status = Status.SUPERSEDED
    old.superseded_by = new
    old.version += 1
    old.save(update_fields=["status", "superseded_by", "version", "updated_at"])
    revision_write(
        item=old,
        action=RevisionAction.SUPERSEDE,
        actor=actor,
        reason=reason or f"superseded by #{new.pk}",
        before=before,
        after=snapshot(old),
    )
    return old


@transaction.atomic
def memory_archive(*, actor: Actor | None, item: MemoryItem, reason: str = "") -> MemoryItem:
    return memory_update(actor=actor, item=item, status=Status.ARCHIVED, reason=reason or "archived")


@transaction.atomic
def memory_restore(*, actor: Actor | None, item: MemoryItem, number: int, reason: str = "") -> MemoryItem:
    """Bring an item back to the state recorded by one of its revisions (after, or before for deletions)."""
    item = MemoryItem.objects.select_for_update().get(pk=item.pk)
    if actor is not None:
        require_change_memory(actor, item)
    revision = MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk, number=number).first()
    if revision is None:
        raise MemoryRevision.DoesNotExist(f"No revision {number} of memory {item.pk}.")
    state = revision.after or revision.before or {}
    before = snapshot(item)
    for name in ("content", "memory_type", "confidence", "visibility", "pinned", "tags", "metadata", "skill"):
        if name in state:
            setattr(item, name, state[name])
    item.status = Status.ACTIVE
    item.superseded_by = None
    item.content_hash = content_hash(item.content)
    if before["content"] != item.content:
        _embed(item)
    item.version += 1
    item.save()
    MemoryItem.objects.filter(pk=item.pk).update(search_tokens=tokens_expression(item.content))
    revision_write(
        item=item,
        action=RevisionAction.RESTORE,
        actor=actor,
        reason=reason or f"restored revision {number}",
        before=before,
        after=snapshot(item),
    )
    return item


@transaction.atomic
def memory_delete(*, actor: Actor | None, item: MemoryItem, reason: str = "") -> None:
    """Hard delete: the content is gone; a revision without content records that it happened."""
    if actor is not None:
        require_change_memory(actor, item)
    revision_write(item=item, action=RevisionAction.DELETE, actor=actor, reason=reason or "deleted")
    # Earlier revisions of a hard-deleted item lose their content too: that is the point of deleting.
    MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).update(
        before=None, after=None, item=None
    )
    item.delete()


@transaction.atomic
def memory_delete_all(*, actor: Actor | None, org, user_id: str, agent_id: str | None = None) -> int:
    """Delete every memory of a subject in the org (optionally of one agent); no cap."""
    qs = MemoryItem.objects.filter(org=org, user_id=user_id)
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    ids = list(qs.values_list("pk", flat=True))
    if not ids:
        return 0
    MemoryRevision.objects.filter(org=org, item_ref__in=ids).update(before=None, after=None, item=None)
    now = timezone.now()
    MemoryRevision.objects.bulk_create(
        [
            MemoryRevision(
                org=org,
                item_ref=pk,
                user_id=user_id,
                number=0,
                action=RevisionAction.DELETE,
                actor=actor.label if actor else "system",
                reason="deleted with all of the subject's memories",
                created_at=now,
            )
            for pk in ids
        ],
        batch_size=1000,
    )
    deleted, _ = MemoryItem.objects.filter(pk__in=ids).delete()
    return len(ids)
