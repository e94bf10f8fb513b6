"""Writes to one memory at a time. Every change writes a MemoryRevision; nothing is lost silently.

Every service takes the actor explicitly (tasks and commands pass projects.access.system_actor(org))
and asks projects.access before it writes. Many at once: memory.batch.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Max
from django.http import Http404
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from audit import services as audit
from config.celery import enqueue_on_commit
from core.text import content_hash
from projects.access import (
    Actor,
    can_change_memory,
    memory_read_q,
    require_actor,
    require_change_memory,
    require_create_memory,
    require_own_org,
    require_read_memory,
    require_subject,
)

from . import gate, pause
from .classify import Decision
from .drafts import MemoryDraft, build_item, defer_tokens, lock_subjects, tokens_expression
from .embeddings import EmbeddingError, provider_for
from .models import MemoryItem, MemoryRevision, RevisionAction, Scope, Source, Status
from .revisions import (
    INCOMING_FIELDS,
    RESTORED_FIELDS,
    audit_revision,
    incoming_of,
    revision_new,
    revision_write,
    snapshot,
)
from .signals import memories_changed, revisions_written

log = logging.getLogger(__name__)

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
    supersedes: int | None = None  # the memory this one replaced (an update: same slot, new value)
    decision: object | None = None  # memory.classify.Decision: duplicate / update / distinct and why


def write_candidates(read_q, base: dict, model: str):
    """The subject's active memories with a vector of this model that read_q lets the actor read: what a
    new memory is compared with at write time (nearest_active, and a batch's in-memory comparison)."""
    return MemoryItem.objects.filter(read_q, **base, status=Status.ACTIVE, embedding_model=model).exclude(
        embedding=None
    )


def nearest_active(
    *,
    actor: Actor,
    base: dict,
    embedding,
    model: str,
    limit: int = 5,
    exclude_id: int | None = None,
    read_q=None,
):
    """The subject's active memories the actor may read nearest to a vector, with cosine similarity.

    Only readable ones: a memory the actor may not read is neither shown, merged into nor superseded.
    read_q: memory_read_q(actor), when the caller already built it (a batch builds it once)."""
    from pgvector.django import CosineDistance

    qs = write_candidates(read_q if read_q is not None else memory_read_q(actor), base, model).defer(
        "embedding", "search_tokens"
    )
    if exclude_id:
        qs = qs.exclude(pk=exclude_id)
    distance = CosineDistance("embedding", embedding)
    with transaction.atomic(), connection.cursor() as cursor:
        # When the HNSW index serves the order (a large table), pgvector 0.8 keeps walking its graph until
        # `limit` rows pass the filters: a plain scan takes the whole table's nearest hnsw.ef_search rows
        # and filters them afterwards, so a subject's near duplicate could be missed and added as new.
        cursor.execute(_NEAREST_SCAN_SQL, [str(settings.SEARCH_MAX_SCAN_TUPLES)])
        rows = list(qs.annotate(distance=distance).order_by("distance")[:limit])
    if len(rows) < limit:
        # Fewer than asked: the subject has few rows, or the graph walk did not reach them. Exact, over the
        # subject's rows (the filter's index finds them; "+ 0" keeps the planner off the vector index).
        rows = list(qs.annotate(distance=distance, exact=distance + 0).order_by("exact")[:limit])
    return [(row, 1.0 - row.distance) for row in rows]


_NEAREST_SCAN_SQL = (
    "SELECT set_config('hnsw.iterative_scan', 'strict_order', true),"
    " set_config('hnsw.max_scan_tuples', %s, true)"
)


def merge_into(
    *, existing: MemoryItem, draft: MemoryDraft, actor: Actor, reason: str, similarity: float | None
) -> MemoryItem:
    """A duplicate joins the existing item: its tags are added, the item counts one more confirmation,
    and the MERGE revision records every field of what came in (`incoming`), so memory_split can
    turn a false merge back into its own memory.

    Only into an item the actor may read (404 otherwise): the dedup lookups find no other."""
    require_read_memory(actor, existing)
    existing = MemoryItem.objects.select_for_update().defer("embedding", "search_tokens").get(pk=existing.pk)
    reason = reason or (f"duplicate (similarity {similarity:.3f})" if similarity is not None else "duplicate")
    before = snapshot(existing)
    existing.tags = list(dict.fromkeys([*(existing.tags or []), *(draft.tags or [])]))
    existing.confirmations += 1
    existing.version += 1
    existing.save(update_fields=["tags", "confirmations", "version", "updated_at"])
    revision_write(
        item=existing,
        action=RevisionAction.MERGE,
        actor=actor,
        reason=reason,
        before=before,
        after=snapshot(existing),
        incoming=incoming_of(draft, actor=actor, similarity=similarity, reason=reason),
    )
    return existing


@transaction.atomic
def memory_create(
    *,
    actor: Actor,
    org,
    draft: MemoryDraft,
    reason: str = "",
    dedup: str = "similarity",  # "similarity" | "hash" | "none"
    embedding: list[float] | None = None,
    embedding_model: str = "",
    honour_pause: bool = True,
) -> CreateResult:
    """Add one memory through the gate. dedup="similarity" (infer): classified against the subject's
    nearest active memories (classify_write): a duplicate merges into the existing item instead, an
    update is added and supersedes the old one (kept, restorable), anything else is added.

    embedding: a vector the caller already has (with its model), so the provider is not asked again.
    Memory paused for the subject or its session (memory.pause): raises MemoryPaused, nothing stored;
    honour_pause=False only for an import (the subject's own data coming back).
    """
    require_own_org(actor, org.pk)
    require_create_memory(
        actor, scope=draft.scope, user_id=draft.user_id, project=draft.project, session_id=draft.session_id
    )
    if honour_pause:
        pause.check(org, draft.user_id, draft.session_id)
    gate.check(draft.content, draft.confidence)
    gate.check_fields(tags=draft.tags, metadata=draft.metadata)
    base = draft.subject(org)
    if dedup != "none":
        lock_subjects(org.pk, [draft])  # a concurrent add of the same text waits, then finds this one
        same = (
            MemoryItem.objects.filter(
                memory_read_q(actor), **base, status=Status.ACTIVE, content_hash=content_hash(draft.content)
            )
            .defer("embedding", "search_tokens")
            .first()
        )
        if same:
            merged = merge_into(
                existing=same, draft=draft, actor=actor, reason="identical content", similarity=None
            )
            return CreateResult(
                item=merged,
                created=False,
                duplicate_of=merged.pk,
                similarity=1.0,
                decision=Decision("duplicate", _("identical content")),
            )
    item = build_item(draft, org=org, actor=actor, embedding=embedding, embedding_model=embedding_model)
    if embedding is None:
        _embed(item)
    decided = None
    if dedup == "similarity" and item.embedding is not None:
        decided = classify_write(
            actor=actor,
            org=org,
            base=base,
            content=draft.content,
            embedding=item.embedding,
            model=item.embedding_model,
        )
        if decided.kind == "duplicate":
            existing, similarity = decided.target, decided.similarity
            merged = merge_into(
                existing=existing,
                draft=draft,
                actor=actor,
                reason=decided.decision.reason,
                similarity=similarity,
            )
            return CreateResult(
                item=merged,
                created=False,
                duplicate_of=merged.pk,
                similarity=similarity,
                decision=decided.decision,
            )
    if draft.source == Source.AUTO and not draft.metadata.get(gate.EXPLICIT_KEY):
        gate.check_rate_limit(org, draft.session_id)
    item.save()
    defer_tokens(item)
    revision_write(
        item=item, action=RevisionAction.ADD, actor=actor, reason=reason, after=snapshot(item), number=1
    )
    if item.embedding is None:
        _enqueue_embedding_retry(item.pk)
    if decided is not None and decided.kind == "update":
        memory_supersede(actor=actor, old=decided.target, new=item, reason=decided.decision.reason)
        return CreateResult(
            item=item,
            created=True,
            similarity=decided.similarity,
            supersedes=decided.target.pk,
            decision=decided.decision,
        )
    return CreateResult(item=item, created=True, decision=decided.decision if decided else None)


def classify_write(
    *,
    actor: Actor,
    org,
    base: dict,
    content: str,
    embedding,
    model: str,
    use_llm: bool = True,
    llm=None,
    read_q=None,
):
    """Duplicate, update or distinct against the subject's nearest active memories the actor may read
    (memory.write_decision; the org's chat model decides when one is configured).

    llm: the org's chat model as a callable (the batch looks it up once); by default it is looked up only
    when a candidate is related. An update only of a memory the actor may change: otherwise the new one
    is added beside it."""
    nearest = nearest_active(
        actor=actor, base=base, embedding=embedding, model=model, limit=NEAREST_K, read_q=read_q
    )
    return decide_write(
        actor=actor, org=org, content=content, nearest=nearest, model=model, use_llm=use_llm, llm=llm
    )


def decide_write(
    *, actor: Actor, org, content: str, nearest: list, model: str, use_llm: bool = True, llm=None
):
    """classify_write's decision over nearest [(item, similarity)], nearest first (the batch finds them
    for all its items at once)."""
    from .llm import llm_for
    from .write_decision import decide

    client = (llm or (lambda: llm_for(org))) if use_llm else None
    decided = decide(content, nearest, model, client=client)
    if decided.kind == "update" and not can_change_memory(actor, decided.target):
        changeable = [(row, sim) for row, sim in nearest if can_change_memory(actor, row)]
        decided = decide(content, changeable, model)
    return decided


NEAREST_K = 5


class StaleVersion(Exception):
    """The caller edited an older version than the stored one (HTTP 412)."""

    def __init__(self, current: MemoryItem):
        self.current = current


@transaction.atomic
def memory_update(
    *, actor: Actor, item: MemoryItem, expected_version: int | None = None, reason: str = "", **fields
) -> MemoryItem:
    """Edit an item (optimistic concurrency on version); content changes re-embed and re-check the gate."""
    require_actor(actor)
    item = MemoryItem.objects.select_for_update().get(pk=item.pk)
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
    if "tags" in changed or "metadata" in changed:
        gate.check_fields(tags=fields.get("tags"), metadata=fields.get("metadata"))
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
def memory_supersede(*, actor: Actor, old: MemoryItem, new: MemoryItem, reason: str = "") -> MemoryItem:
    """The new item replaces the old one; the old text stays, linked and revisioned.

    The actor must be allowed to change the old item (404 when it may not read it, 403 when it may not
    change it), and the new one must be of the same org (404)."""
    return memory_supersede_many(actor=actor, pairs=[(old, new, reason)])[0]


@transaction.atomic
def memory_supersede_many(
    *, actor: Actor, pairs: list[tuple[MemoryItem, MemoryItem, str]]
) -> list[MemoryItem]:
    """Each new item replaces its old one, in order (a batch's updates, or one: memory_supersede): the
    checks, rows, revisions and audit events of one supersede each, with the lookups and writes made once
    for all of them. Returns the old items, changed, in the order of pairs."""
    require_actor(actor)
    if not pairs:
        return []
    for _old, new, _reason in pairs:
        require_own_org(actor, new.org_id)
    ids = {old.pk for old, _new, _reason in pairs}
    olds = (
        MemoryItem.objects.select_for_update()
        .filter(memory_read_q(actor), pk__in=ids)
        .defer("embedding", "search_tokens")
        .in_bulk()
    )
    if ids - olds.keys():
        raise Http404("No such memory.")
    for old in olds.values():
        if not can_change_memory(actor, old):
            raise PermissionDenied("Your role may not change this memory.")
    numbers = dict(
        MemoryRevision.objects.filter(org=actor.org, item_ref__in=ids)
        .values("item_ref")
        .annotate(n=Max("number"))
        .values_list("item_ref", "n")
    )
    now = timezone.now()
    revisions, audits = [], []
    for old_ref, new, reason in pairs:
        old = olds[old_ref.pk]
        before = snapshot(old)
        old.status = Status.SUPERSEDED
        old.superseded_by = new
        old.version += 1
        old.updated_at = now
        numbers[old.pk] = (numbers.get(old.pk) or 0) + 1
        after = snapshot(old)
        revisions.append(
            revision_new(
                item=old,
                action=RevisionAction.SUPERSEDE,
                actor=actor,
                number=numbers[old.pk],
                reason=reason or f"superseded by #{new.pk}",
                before=before,
                after=after,
            )
        )
        audits.append((old, before, after))
    changed = list(olds.values())
    MemoryItem.objects.bulk_update(changed, ["status", "superseded_by", "version", "updated_at"])
    MemoryRevision.objects.bulk_create(revisions)
    memories_changed.send(sender=MemoryItem, org_id=actor.org.pk, items=changed)
    revisions_written.send(sender=MemoryRevision, org_id=actor.org.pk, revisions=revisions)
    for old, before, after in audits:
        audit_revision(item=old, action=RevisionAction.SUPERSEDE, actor=actor, before=before, after=after)
    return [olds[old.pk] for old, _new, _reason in pairs]


@transaction.atomic
def memory_archive(*, actor: Actor, item: MemoryItem, reason: str = "") -> MemoryItem:
    return memory_update(actor=actor, item=item, status=Status.ARCHIVED, reason=reason or "archived")


@transaction.atomic
def memory_restore(*, actor: Actor, item: MemoryItem, number: int, reason: str = "") -> MemoryItem:
    """Bring an item back to the state recorded by one of its revisions (after, or before for deletions)."""
    require_actor(actor)
    item = MemoryItem.objects.select_for_update().get(pk=item.pk)
    require_change_memory(actor, item)
    revision = MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk, number=number).first()
    if revision is None:
        raise MemoryRevision.DoesNotExist(f"No revision {number} of memory {item.pk}.")
    state = revision.after or revision.before or {}
    before = snapshot(item)
    for name in RESTORED_FIELDS:
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
def memory_delete(*, actor: Actor, item: MemoryItem, reason: str = "") -> None:
    """Hard delete: the content is gone; a revision without content records that it happened."""
    require_actor(actor)
    require_change_memory(actor, item)
    revision_write(item=item, action=RevisionAction.DELETE, actor=actor, reason=reason or "deleted")
    # Earlier revisions of a hard-deleted item lose their content too: that is the point of deleting.
    MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).update(
        before=None, after=None, incoming=None, item=None
    )
    item.delete()


@transaction.atomic
def memory_delete_all(*, actor: Actor, org, user_id: str, agent_id: str | None = None) -> int:
    """Delete every memory about a subject (user and session scope) in the org, optionally of one agent; no cap.

    Project-scope rows are not the subject's to delete: they belong to the project and its roles.
    """
    require_own_org(actor, org.pk)
    require_subject(actor, user_id, write=True)
    qs = MemoryItem.objects.filter(org=org, user_id=user_id, scope__in=[Scope.USER, Scope.SESSION])
    if agent_id is not None:
        qs = qs.filter(agent_id=agent_id)
    ids = list(qs.values_list("pk", flat=True))
    audit.record(actor, audit.Action.MEMORY_DELETE_ALL, subject=user_id, details={"deleted": len(ids)})
    if not ids:
        return 0
    MemoryRevision.objects.filter(org=org, item_ref__in=ids).update(
        before=None, after=None, incoming=None, item=None
    )
    now = timezone.now()
    deleted = MemoryRevision.objects.bulk_create(
        [
            MemoryRevision(
                org=org,
                item_ref=pk,
                user_id=user_id,
                number=0,
                action=RevisionAction.DELETE,
                actor=actor.label,
                reason="deleted with all of the subject's memories",
                created_at=now,
            )
            for pk in ids
        ],
        batch_size=1000,
    )
    revisions_written.send(sender=MemoryRevision, org_id=org.pk, revisions=deleted)
    MemoryItem.objects.filter(pk__in=ids).delete()
    memories_changed.send(sender=MemoryItem, org_id=org.pk, items=[], user_id=user_id)
    return len(ids)


class SplitRefused(Exception):
    """A revision that cannot be split back out: not a merge or nothing recorded (400), already split (409)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def draft_of_incoming(item: MemoryItem, incoming: dict) -> MemoryDraft:
    """The draft a merge recorded (MemoryRevision.incoming), about the item's subject."""
    values = {name: incoming[name] for name in INCOMING_FIELDS if name in incoming}
    for name in ("occurred_at", "valid_from", "valid_until", "expires_at"):
        values[name] = parse_datetime(values[name]) if values.get(name) else None
    return MemoryDraft(
        **{"session_id": item.session_id, "agent_id": item.agent_id, "skill": item.skill, **values},
        scope=item.scope,
        user_id=item.user_id,
        project=item.project,
    )


@transaction.atomic
def memory_split(*, actor: Actor, item: MemoryItem, revision_number: int, reason: str = "") -> MemoryItem:
    """Turn what one merge revision recorded back into its own memory, in one step: a new item with
    exactly the fields that came in (embedded like any add, the gate asked again, no dedup), an ADD
    revision on it, a SPLIT revision on the item (one confirmation fewer), the merge marked as split.

    The actor must be allowed to change the item and to add the memory. Raises
    MemoryRevision.DoesNotExist (404), SplitRefused (400/409) or GateRejection (422)."""
    require_actor(actor)
    item = MemoryItem.objects.select_for_update().get(pk=item.pk)
    require_change_memory(actor, item)
    revision = (
        MemoryRevision.objects.select_for_update()
        .filter(org=item.org_id, item_ref=item.pk, number=revision_number)
        .first()
    )
    if revision is None:
        raise MemoryRevision.DoesNotExist(f"No revision {revision_number} of memory {item.pk}.")
    if revision.action != RevisionAction.MERGE:
        raise SplitRefused(
            400,
            "invalid",
            _("revision: %(n)s is not a merge; only a merge revision can be split.") % {"n": revision_number},
        )
    if not revision.incoming or not revision.incoming.get("content"):
        raise SplitRefused(
            400,
            "invalid",
            _("revision: merge %(n)s recorded nothing of what came in (it is older than that record).")
            % {"n": revision_number},
        )
    if revision.split_into is not None:
        raise SplitRefused(
            409,
            "conflict",
            _("revision: merge %(n)s was already split into memory #%(id)s.")
            % {"n": revision_number, "id": revision.split_into},
        )
    draft = draft_of_incoming(item, revision.incoming)
    require_create_memory(
        actor, scope=draft.scope, user_id=draft.user_id, project=draft.project, session_id=draft.session_id
    )
    gate.check_sensitive(draft.content)
    gate.check_length(draft.content)
    gate.check_fields(tags=draft.tags, metadata=draft.metadata)
    new = build_item(draft, org=item.org, actor=actor)
    _embed(new)
    new.save()
    defer_tokens(new)
    revision_write(
        item=new,
        action=RevisionAction.ADD,
        actor=actor,
        reason=f"split from #{item.pk} revision {revision_number}",
        after=snapshot(new),
        number=1,
    )
    if new.embedding is None:
        _enqueue_embedding_retry(new.pk)
    before = snapshot(item)
    item.confirmations = max(item.confirmations - 1, 0)
    item.version += 1
    item.save(update_fields=["confirmations", "version", "updated_at"])
    revision_write(
        item=item,
        action=RevisionAction.SPLIT,
        actor=actor,
        reason=reason or f"revision {revision_number} split into #{new.pk}",
        before=before,
        after=snapshot(item),
    )
    revision.split_into = new.pk
    revision.save(update_fields=["split_into"])
    return new
