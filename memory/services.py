"""Writes to long-term memory. Every change writes a MemoryRevision; nothing is lost silently."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import transaction
from django.db.models import F, Func, Max, Value
from django.utils import timezone

from config.celery import enqueue_on_commit
from core.text import content_hash, keyword_tokens
from projects.access import Actor, require_change_memory, require_create_memory, require_subject
from projects.models import Project

from . import gate
from .dedup import is_duplicate
from .embeddings import EmbeddingError, provider_for
from .models import MemoryItem, MemoryRevision, RevisionAction, Scope, Source, Status
from .signals import memories_changed

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
    *,
    item: MemoryItem,
    action: str,
    actor: Actor | None,
    reason: str = "",
    before=None,
    after=None,
    number: int | None = None,
):
    """Append the next numbered revision of an item (number=1 for a new item skips the lookup)."""
    if number is None:
        last = MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).aggregate(n=Max("number"))
        number = (last["n"] or 0) + 1
    memories_changed.send(sender=MemoryItem, org_id=item.org_id, items=[item])
    return MemoryRevision.objects.create(
        org_id=item.org_id,
        item=item,
        item_ref=item.pk,
        user_id=item.user_id,
        number=number,
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
        # The exception text never contains the memory's content, only what went wrong with the call.
        log.warning("embedding failed for memory %s (will retry): %s", item.pk or "(new)", exc)
        item.embedding = None
        item.embedding_model = ""


def _enqueue_embedding_retry(item_id: int) -> None:
    from .tasks import memory_embed

    enqueue_on_commit(memory_embed, item_id)


@dataclass
class CreateResult:
    item: MemoryItem
    created: bool
    duplicate_of: int | None = None
    similarity: float | None = None
    details: dict = field(default_factory=dict)


def subject_filter(
    *,
    org,
    scope: str,
    user_id: str,
    project: Project | None,
    session_id: str,
    agent_id: str = "",
    skill: str = "",
) -> dict:
    """The rows that count as the same subject for deduplication.

    One agent's memories stay its own, and a skill's memories stay apart from general ones (seed 003:
    a skill's document is injected only when the skill is enabled, so merging across would hide a fact).
    """
    common = {"org": org, "scope": scope, "agent_id": agent_id or "", "skill": skill or ""}
    if scope == Scope.PROJECT:
        return {**common, "project": project}
    if scope == Scope.SESSION:
        return {**common, "user_id": user_id, "session_id": session_id}
    return {**common, "user_id": user_id}


def subject_key(
    *, scope: str, user_id: str, project_id: int | None, session_id: str, agent_id: str, skill: str = ""
) -> tuple:
    """subject_filter as a hashable key, for matching many rows in Python."""
    if scope == Scope.PROJECT:
        return (scope, project_id, agent_id or "", skill or "")
    if scope == Scope.SESSION:
        return (scope, user_id, session_id, agent_id or "", skill or "")
    return (scope, user_id, agent_id or "", skill or "")


def nearest_active(*, base: dict, embedding, model: str, limit: int = 5, exclude_id: int | None = None):
    """The subject's active memories nearest to a vector, with cosine similarity."""
    from pgvector.django import CosineDistance

    qs = (
        MemoryItem.objects.filter(**base, status=Status.ACTIVE, embedding_model=model)
        .exclude(embedding=None)
        .defer("embedding", "search_tokens")
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
    base = subject_filter(
        org=org,
        scope=scope,
        user_id=user_id,
        project=project,
        session_id=session_id,
        agent_id=agent_id,
        skill=skill,
    )
    digest = content_hash(content)
    if dedup != "none":
        same = (
            MemoryItem.objects.filter(**base, status=Status.ACTIVE, content_hash=digest)
            .defer("embedding", "search_tokens")
            .first()
        )
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
        found = find_duplicate(
            base=base, content=content, embedding=item.embedding, model=item.embedding_model
        )
        if found:
            existing, similarity = found
            merged = _merge_into(existing=existing, tags=tags, actor=actor, reason="", similarity=similarity)
            return CreateResult(item=merged, created=False, duplicate_of=merged.pk, similarity=similarity)
    if source == Source.AUTO:
        gate.check_rate_limit(org, session_id)
    item.search_tokens = tokens_expression(content)
    item.save()
    _defer_tokens(item)
    revision_write(
        item=item, action=RevisionAction.ADD, actor=actor, reason=reason, after=snapshot(item), number=1
    )
    if item.embedding is None:
        _enqueue_embedding_retry(item.pk)
    return CreateResult(item=item, created=True)


def _defer_tokens(item: MemoryItem) -> None:
    """Forget the insert expression: a later save() of this instance must not touch search_tokens."""
    item.__dict__.pop("search_tokens", None)


def find_duplicate(*, base: dict, content: str, embedding, model: str, exclude_id: int | None = None):
    """The subject's active memory that is the same fact as `content`, with its similarity, or None.

    Looks at the few nearest (a translation can score below a same-language neighbour) and lets
    dedup.is_duplicate decide: the model's threshold for the language pair, then the veto.
    """
    for existing, similarity in nearest_active(
        base=base, embedding=embedding, model=model, limit=3, exclude_id=exclude_id
    ):
        if is_duplicate(existing.content, content, similarity, model):
            return existing, similarity
    return None


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
    """Delete every memory about a subject (user and session scope) in the org, optionally of one agent; no cap.

    Project-scope rows are not the subject's to delete: they belong to the project and its roles.
    """
    if actor is not None:
        require_subject(actor, user_id, write=True)
    qs = MemoryItem.objects.filter(org=org, user_id=user_id, scope__in=[Scope.USER, Scope.SESSION])
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
    MemoryItem.objects.filter(pk__in=ids).delete()
    memories_changed.send(sender=MemoryItem, org_id=org.pk, items=[], user_id=user_id)
    return len(ids)


# ---- many at once -----------------------------------------------------------------------------------


@dataclass
class BatchEntry:
    """One item of a batch write, already validated and resolved (project is a Project or None)."""

    content: str
    scope: str = Scope.USER
    user_id: str = ""
    project: Project | None = None
    session_id: str = ""
    agent_id: str = ""
    skill: str = ""
    memory_type: str = "fact"
    source: str = Source.USER
    source_id: str = ""
    source_message_id: str = ""
    confidence: float = 1.0
    visibility: str = "members"
    pinned: bool = False
    tags: list = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    occurred_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    expires_at: datetime | None = None


@dataclass
class BatchResult:
    index: int
    status: str  # created | duplicate | rejected
    id: int | None = None
    duplicate_of: int | None = None
    similarity: float | None = None
    code: str = ""
    message: str = ""


def _batch_key(entry: BatchEntry) -> tuple:
    return subject_key(
        scope=entry.scope,
        user_id=entry.user_id,
        project_id=entry.project.pk if entry.project else None,
        session_id=entry.session_id,
        agent_id=entry.agent_id,
        skill=entry.skill,
    )


def _batch_embed(org, entries: list[tuple[int, BatchEntry]]) -> dict[int, tuple[list[float], str]]:
    """One provider call per distinct provider (usually one for the whole batch); failures leave no vector."""
    from .models import EmbeddingConfig

    # Subjects with their own embedding setting are embedded apart; everyone else shares the org's.
    overrides = set(
        EmbeddingConfig.objects.filter(org=org).exclude(user_id="").values_list("user_id", flat=True)
    )
    by_user: dict[str, list[tuple[int, BatchEntry]]] = {}
    for index, entry in entries:
        by_user.setdefault(entry.user_id if entry.user_id in overrides else "", []).append((index, entry))
    groups: dict[tuple, tuple[object, list]] = {}
    for user_id, rows in by_user.items():
        provider = provider_for(org, user_id)
        key = (type(provider).__name__, provider.model_name, getattr(provider, "base_url", ""))
        groups.setdefault(key, (provider, []))[1].extend(rows)
    out: dict[int, tuple[list[float], str]] = {}
    for provider, rows in groups.values():
        try:
            vectors = provider.embed_passages([entry.content for _, entry in rows])
        except EmbeddingError as exc:
            log.warning("batch embedding of %d memories failed (will retry): %s", len(rows), exc)
            continue
        for (index, _), vector in zip(rows, vectors, strict=True):
            out[index] = (vector, provider.model_name)
    return out


def _cosine_max(vectors: list, vector) -> tuple[int, float]:
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    v = np.asarray(vector, dtype=np.float32)
    sims = matrix @ v / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(v) + 1e-12)
    best = int(np.argmax(sims))
    return best, float(sims[best])


@transaction.atomic
def memory_create_batch(
    *,
    actor: Actor | None,
    org,
    entries: list[BatchEntry | BaseException],
    infer: bool = True,
    dedup: bool | None = None,
) -> list[BatchResult]:
    """Add many memories at once: one embedding call, one bulk insert, per-item results.

    infer=True: every item passes the whole gate (confidence, secrets, length, rate limit) and
    similarity dedup, as a single add does. infer=False: the text is stored verbatim; the gate still
    refuses secrets and bad lengths, duplicates are found by content hash only unless dedup=True.
    An entry may already be an exception (invalid input, no access): it is reported as rejected.
    """
    similarity_dedup = infer if dedup is None else dedup
    results: dict[int, BatchResult] = {}
    accepted: list[tuple[int, BatchEntry]] = []
    auto_counts: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if isinstance(entry, BaseException):
            results[index] = _rejection(index, entry)
            continue
        entry.content = entry.content.strip()
        try:
            if actor is not None:
                require_create_memory(actor, scope=entry.scope, user_id=entry.user_id, project=entry.project)
            if infer:
                gate.check(entry.content, entry.confidence)
                if entry.source == Source.AUTO and entry.session_id:
                    used = auto_counts.get(entry.session_id)
                    if used is None:
                        used = gate.check_rate_limit(org, entry.session_id)
                    if used >= settings.MEMORY_MAX_EXTRACTIONS:
                        raise gate.GateRejection("rate_limited", gate.RATE_LIMIT_MESSAGE)
                    auto_counts[entry.session_id] = used + 1
            else:
                gate.check_sensitive(entry.content)
                gate.check_length(entry.content)
        except Exception as exc:  # GateRejection, PermissionDenied, Http404
            results[index] = _rejection(index, exc)
            continue
        accepted.append((index, entry))

    # Identical content: against stored rows of the same subject, then earlier items of this batch.
    digests = {index: content_hash(entry.content) for index, entry in accepted}
    stored: dict[tuple, MemoryItem] = {}
    if digests:
        for row in MemoryItem.objects.filter(
            org=org, status=Status.ACTIVE, content_hash__in=set(digests.values())
        ).defer("embedding", "search_tokens"):
            key = subject_key(
                scope=row.scope,
                user_id=row.user_id,
                project_id=row.project_id,
                session_id=row.session_id,
                agent_id=row.agent_id,
                skill=row.skill,
            )
            stored.setdefault((key, row.content_hash), row)
    fresh: list[tuple[int, BatchEntry]] = []
    first_in_batch: dict[tuple, int] = {}
    merges: dict[int, tuple[MemoryItem, list, float]] = {}
    for index, entry in accepted:
        key = (_batch_key(entry), digests[index])
        if key in stored:
            merges[index] = (stored[key], entry.tags, 1.0)
        elif key in first_in_batch:
            results[index] = BatchResult(
                index, "duplicate", duplicate_of=-1 - first_in_batch[key], similarity=1.0
            )
        else:
            first_in_batch[key] = index
            fresh.append((index, entry))

    vectors = _batch_embed(org, fresh)

    if similarity_dedup:
        kept: list[tuple[int, BatchEntry]] = []
        seen: dict[tuple, list[tuple[int, BatchEntry, list[float]]]] = {}
        for index, entry in fresh:
            if index not in vectors:
                kept.append((index, entry))
                continue
            vector, model = vectors[index]
            key = _batch_key(entry)
            base = subject_filter(
                org=org,
                scope=entry.scope,
                user_id=entry.user_id,
                project=entry.project,
                session_id=entry.session_id,
                agent_id=entry.agent_id,
                skill=entry.skill,
            )
            found = find_duplicate(base=base, content=entry.content, embedding=vector, model=model)
            if found:
                merges[index] = (found[0], entry.tags, found[1])
                continue
            earlier = seen.get(key, [])
            if earlier:
                best, sim = _cosine_max([v for _, _, v in earlier], vector)
                if is_duplicate(earlier[best][1].content, entry.content, sim, model):
                    results[index] = BatchResult(
                        index, "duplicate", duplicate_of=-1 - earlier[best][0], similarity=round(sim, 4)
                    )
                    continue
            seen.setdefault(key, []).append((index, entry, vector))
            kept.append((index, entry))
        fresh = kept

    for index, (existing, tags, similarity) in merges.items():
        merged = _merge_into(
            existing=existing,
            tags=tags,
            actor=actor,
            reason="identical content" if similarity == 1.0 else "",
            similarity=similarity,
        )
        results[index] = BatchResult(
            index, "duplicate", duplicate_of=merged.pk, similarity=round(similarity, 4)
        )

    items = []
    for index, entry in fresh:
        vector, model = vectors.get(index, (None, ""))
        items.append(
            MemoryItem(
                org=org,
                content=entry.content,
                memory_type=entry.memory_type,
                scope=entry.scope,
                user_id=entry.user_id or "",
                project=entry.project,
                session_id=entry.session_id or "",
                agent_id=entry.agent_id or "",
                skill=entry.skill or "",
                source=entry.source,
                source_id=entry.source_id,
                source_message_id=entry.source_message_id,
                confidence=entry.confidence,
                visibility=entry.visibility,
                pinned=entry.pinned,
                tags=list(entry.tags or []),
                metadata=entry.metadata or {},
                occurred_at=entry.occurred_at,
                valid_from=entry.valid_from,
                valid_until=entry.valid_until,
                expires_at=entry.expires_at,
                content_hash=digests[index],
                embedding=vector,
                embedding_model=model,
                search_tokens=tokens_expression(entry.content),
                created_by=actor.account if actor and actor.account else None,
                created_by_key=actor.api_key if actor else None,
            )
        )
    MemoryItem.objects.bulk_create(items, batch_size=500)
    label = actor.label if actor else "system"
    revisions = []
    for (index, _), item in zip(fresh, items, strict=True):
        _defer_tokens(item)
        results[index] = BatchResult(index, "created", id=item.pk)
        revisions.append(
            MemoryRevision(
                org_id=org.pk,
                item=item,
                item_ref=item.pk,
                user_id=item.user_id,
                number=1,
                action=RevisionAction.ADD,
                actor=label,
                reason="batch add",
                after=snapshot(item),
            )
        )
    MemoryRevision.objects.bulk_create(revisions, batch_size=1000)
    memories_changed.send(sender=MemoryItem, org_id=org.pk, items=items)
    # Duplicates of an earlier item of the same batch point at its new id.
    for result in results.values():
        if result.duplicate_of is not None and result.duplicate_of < 0:
            target = results[-1 - result.duplicate_of]
            result.duplicate_of = target.id or target.duplicate_of
    missing = [item.pk for item in items if item.embedding is None]
    if missing:
        from .tasks import memory_embed_many

        enqueue_on_commit(memory_embed_many, missing)
    return [results[i] for i in range(len(entries))]


def _rejection(index: int, exc: BaseException) -> BatchResult:
    from django.core.exceptions import PermissionDenied
    from django.http import Http404

    if isinstance(exc, gate.GateRejection):
        return BatchResult(index, "rejected", code=exc.code, message=exc.message)
    if isinstance(exc, Http404):
        return BatchResult(index, "rejected", code="not_found", message=str(exc) or "Not found.")
    if isinstance(exc, PermissionDenied):
        return BatchResult(index, "rejected", code="permission_denied", message=str(exc))
    code = getattr(exc, "code", "invalid")
    return BatchResult(index, "rejected", code=code if isinstance(code, str) else "invalid", message=str(exc))
