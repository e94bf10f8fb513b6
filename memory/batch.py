"""Many memories at once: one embedding call, one bulk insert, per-item results.

The same drafts, access checks, gate (rate limit included), dedup and row building as a single add
(memory.services.memory_create), done for the whole batch together.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404

from audit import services as audit
from config.celery import enqueue_on_commit
from core.text import content_hash
from projects.access import Actor, memory_read_q, require_create_memory, require_own_org
from projects.api.errors import error_text

from . import gate, pause, services
from .classify import classify
from .drafts import MemoryDraft, build_item, defer_tokens, lock_subjects, subject_key
from .embeddings import EmbeddingError, provider_for
from .llm import llm_for
from .models import MemoryItem, MemoryRevision, RevisionAction, Source, Status
from .revisions import revision_new, snapshot
from .services import merge_into
from .signals import memories_changed, revisions_written

log = logging.getLogger(__name__)


@dataclass
class BatchResult:
    index: int
    status: str  # created | duplicate | superseded (created, replacing `supersedes`) | rejected | paused
    id: int | None = None
    duplicate_of: int | None = None
    similarity: float | None = None
    code: str = ""
    message: str = ""
    supersedes: int | None = None
    decision: object | None = None  # memory.classify.Decision


def _batch_embed(org, drafts: list[tuple[int, MemoryDraft]]) -> dict[int, tuple[list[float], str]]:
    """One provider call per distinct provider (usually one for the whole batch); failures leave no vector."""
    from .models import EmbeddingConfig

    # Subjects with their own embedding setting are embedded apart; everyone else shares the org's.
    overrides = set(
        EmbeddingConfig.objects.filter(org=org).exclude(user_id="").values_list("user_id", flat=True)
    )
    by_user: dict[str, list[tuple[int, MemoryDraft]]] = {}
    for index, draft in drafts:
        by_user.setdefault(draft.user_id if draft.user_id in overrides else "", []).append((index, draft))
    groups: dict[tuple, tuple[object, list]] = {}
    for user_id, rows in by_user.items():
        provider = provider_for(org, user_id)
        key = (type(provider).__name__, provider.model_name, getattr(provider, "base_url", ""))
        groups.setdefault(key, (provider, []))[1].extend(rows)
    out: dict[int, tuple[list[float], str]] = {}
    for provider, rows in groups.values():
        try:
            vectors = provider.embed_passages([draft.content for _, draft in rows])
        except EmbeddingError as exc:
            log.warning("batch embedding of %d memories failed (will retry): %s", len(rows), exc)
            continue
        for (index, _), vector in zip(rows, vectors, strict=True):
            out[index] = (vector, provider.model_name)
    return out


class _Earlier:
    """The earlier items of one subject in this batch, their unit vectors kept in one growing matrix, so
    finding the nearest one is one matrix product (not a conversion of every earlier vector per item)."""

    def __init__(self):
        self.entries: list[tuple[int, MemoryDraft]] = []
        self.matrix = None

    def __bool__(self) -> bool:
        return bool(self.entries)

    def add(self, index: int, draft: MemoryDraft, vector) -> None:
        import numpy as np

        v = np.asarray(vector, dtype=np.float32)
        v = v / (np.linalg.norm(v) + 1e-12)
        if self.matrix is None:
            self.matrix = np.empty((8, v.shape[0]), dtype=np.float32)
        elif len(self.entries) == self.matrix.shape[0]:
            self.matrix = np.concatenate([self.matrix, np.empty_like(self.matrix)])
        self.matrix[len(self.entries)] = v
        self.entries.append((index, draft))

    def nearest(self, vector) -> tuple[int, MemoryDraft, float]:
        """The earlier item most similar to vector: (its index, its draft, cosine)."""
        import numpy as np

        v = np.asarray(vector, dtype=np.float32)
        sims = self.matrix[: len(self.entries)] @ (v / (np.linalg.norm(v) + 1e-12))
        best = int(np.argmax(sims))
        return (*self.entries[best], float(sims[best]))


def _admit(
    actor: Actor,
    org,
    draft: MemoryDraft,
    *,
    infer: bool,
    auto_counts: dict[str, int],
    pauses: dict[tuple[str, str], str],
) -> None:
    """The checks of one draft, as a single add makes them; raises GateRejection, PermissionDenied, Http404,
    MemoryPaused (memory paused for its subject or session: memory.pause)."""
    require_create_memory(
        actor, scope=draft.scope, user_id=draft.user_id, project=draft.project, session_id=draft.session_id
    )
    level = pauses.get((draft.user_id, draft.session_id))
    if level:
        raise pause.MemoryPaused(draft.user_id, draft.session_id if level == "session" else "", level)
    if infer:
        gate.check(draft.content, draft.confidence)
    else:
        gate.check_sensitive(draft.content)
        gate.check_length(draft.content)
    gate.check_fields(tags=draft.tags, metadata=draft.metadata)
    if infer and draft.source == Source.AUTO:
        gate.check_rate_limit(org, draft.session_id, batch=auto_counts)


@transaction.atomic
def memory_create_batch(
    *,
    actor: Actor,
    org,
    drafts: list[MemoryDraft | BaseException],
    infer: bool = True,
    dedup: bool | None = None,
) -> list[BatchResult]:
    """Add many memories at once: one embedding call, one bulk insert, per-item results.

    infer=True: every item passes the whole gate (confidence, secrets, length, rate limit) and
    similarity dedup, as a single add does. infer=False: the text is stored verbatim; the gate still
    refuses secrets and bad lengths, duplicates are found by content hash only unless dedup=True.
    A draft may already be an exception (invalid input, no access): it is reported as rejected.
    """
    require_own_org(actor, org.pk)
    similarity_dedup = infer if dedup is None else dedup
    results: dict[int, BatchResult] = {}
    accepted: list[tuple[int, MemoryDraft]] = []
    auto_counts: dict[str, int] = {}
    pauses = pause.paused_keys(
        org, {(d.user_id, d.session_id) for d in drafts if isinstance(d, MemoryDraft)}
    )  # one query for the whole batch
    for index, draft in enumerate(drafts):
        if isinstance(draft, BaseException):
            results[index] = _rejection(index, draft)
            continue
        try:
            _admit(actor, org, draft, infer=infer, auto_counts=auto_counts, pauses=pauses)
        except Exception as exc:  # GateRejection, PermissionDenied, Http404, MemoryPaused
            results[index] = _rejection(index, exc)
            continue
        accepted.append((index, draft))

    # Identical content: against stored rows of the same subject (those the actor may read; a concurrent
    # batch for these subjects waits for this one), then earlier items of this batch.
    lock_subjects(org.pk, [draft for _, draft in accepted])
    digests = {index: content_hash(draft.content) for index, draft in accepted}
    stored: dict[tuple, MemoryItem] = {}
    if digests:
        for row in MemoryItem.objects.filter(
            memory_read_q(actor), status=Status.ACTIVE, content_hash__in=set(digests.values())
        ).defer("embedding", "search_tokens"):
            stored.setdefault((subject_key(row), row.content_hash), row)
    fresh: list[tuple[int, MemoryDraft]] = []
    first_in_batch: dict[tuple, int] = {}
    merges: dict[int, tuple[MemoryItem, MemoryDraft, float, object]] = {}
    # Duplicates of an earlier item of this batch: merged into it once it is stored (or merged itself).
    in_batch: list[tuple[int, MemoryDraft, int, float]] = []
    for index, draft in accepted:
        key = (subject_key(draft), digests[index])
        if key in stored:
            merges[index] = (stored[key], draft, 1.0, None)
        elif key in first_in_batch:
            in_batch.append((index, draft, first_in_batch[key], 1.0))
            results[index] = BatchResult(
                index, "duplicate", duplicate_of=-1 - first_in_batch[key], similarity=1.0
            )
        else:
            first_in_batch[key] = index
            fresh.append((index, draft))

    vectors = _batch_embed(org, fresh)

    # index -> (the stored item, or -1 - the index of an earlier item of this batch; similarity; decision)
    updates: dict[int, tuple[object, float, object]] = {}
    if similarity_dedup:
        fresh = _classify_fresh(actor, org, fresh, vectors, results, merges, updates, in_batch)

    merged_into: dict[int, MemoryItem] = {}
    for index, (existing, draft, similarity, decision) in merges.items():
        merged_into[index] = merged = merge_into(
            existing=existing,
            draft=draft,
            actor=actor,
            reason=decision.reason if decision else "identical content",
            similarity=similarity,
        )
        results[index] = BatchResult(
            index, "duplicate", duplicate_of=merged.pk, similarity=round(similarity, 4), decision=decision
        )

    items = []
    for index, draft in fresh:
        vector, model = vectors.get(index, (None, ""))
        items.append(build_item(draft, org=org, actor=actor, embedding=vector, embedding_model=model))
    MemoryItem.objects.bulk_create(items, batch_size=500)
    revisions = []
    for (index, _), item in zip(fresh, items, strict=True):
        defer_tokens(item)
        results[index] = BatchResult(index, "created", id=item.pk)
        if index in updates:
            results[index] = BatchResult(
                index,
                "superseded",
                id=item.pk,
                similarity=round(updates[index][1], 4),
                decision=updates[index][2],
            )
        revisions.append(
            revision_new(
                item=item,
                action=RevisionAction.ADD,
                actor=actor,
                number=1,
                reason="batch add",
                after=snapshot(item),
            )
        )
    MemoryRevision.objects.bulk_create(revisions, batch_size=1000)
    revisions_written.send(sender=MemoryRevision, org_id=org.pk, revisions=revisions)
    # Updates: the new item supersedes the stored one, or an earlier item of this batch.
    created = {index: item for (index, _), item in zip(fresh, items, strict=True)}
    superseded = []
    for index, (old, _sim, decision) in updates.items():
        old_item = created[-1 - old] if isinstance(old, int) else old
        superseded.append((old_item, created[index], decision.reason))
        results[index].supersedes = old_item.pk
    services.memory_supersede_many(actor=actor, pairs=superseded)
    # Duplicates of an earlier item of the same batch merge into the row it became (created or merged into;
    # in index order, an earlier one is resolved first).
    stored_at = {**merged_into, **created}
    for index, draft, first, similarity in sorted(in_batch, key=lambda row: row[0]):
        stored_at[index] = merge_into(
            existing=stored_at[first],
            draft=draft,
            actor=actor,
            reason=f"duplicate of item {first} of the same batch",
            similarity=similarity,
        )
        results[index].duplicate_of = stored_at[index].pk
    memories_changed.send(sender=MemoryItem, org_id=org.pk, items=items)
    missing = [item.pk for item in items if item.embedding is None]
    if missing:
        from .tasks import memory_embed_many

        enqueue_on_commit(memory_embed_many, missing)
    audit.record(actor, audit.Action.MEMORY_BATCH, details=audit.count_by(results.values(), "status"))
    return [results[i] for i in range(len(drafts))]


# A subject with at most this many active memories has them compared in memory, all items of the batch in
# one matrix product (one query loads them); a larger one is asked per item (the vector index).
STORED_IN_MEMORY = 5000


def _stored_nearest(actor, org, fresh, vectors, read_q) -> dict[int, list]:
    """index -> the subject's nearest active stored memories [(item, cosine)], nearest first, for the items
    whose subject has at most STORED_IN_MEMORY of them (the others are not in the answer): the same rows
    services.nearest_active finds (exact cosine, readable by the actor), in two queries per subject and
    model instead of one per item."""
    import numpy as np

    groups: dict[tuple, list[int]] = {}
    for index, draft in fresh:
        if index in vectors:
            groups.setdefault((subject_key(draft), vectors[index][1]), []).append(index)
    drafts = dict(fresh)
    out: dict[int, list] = {}
    for (_key, model), indexes in groups.items():
        stored = services.write_candidates(read_q, drafts[indexes[0]].subject(org), model)
        rows = list(stored.values_list("pk", "embedding")[: STORED_IN_MEMORY + 1])
        if len(rows) > STORED_IN_MEMORY:
            continue
        if not rows:
            out.update((index, []) for index in indexes)
            continue
        ids = [pk for pk, _ in rows]
        matrix = np.asarray([vector for _, vector in rows], dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
        queries = np.asarray([vectors[index][0] for index in indexes], dtype=np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True) + 1e-12
        sims = queries @ matrix.T
        k = min(services.NEAREST_K, len(ids))
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        wanted = {ids[j] for row in top for j in row}
        items = MemoryItem.objects.filter(pk__in=wanted).defer("embedding", "search_tokens").in_bulk()
        for row, index in enumerate(indexes):
            best = sorted(top[row], key=lambda j, row=row: -sims[row, j])
            out[index] = [(items[ids[j]], float(sims[row, j])) for j in best]
    return out


def _classify_fresh(actor, org, fresh, vectors, results, merges, updates, in_batch):
    """Duplicate, update or distinct for each new item: against stored rows (services.classify_write, as a
    single add) and, when those leave it distinct, against the nearest earlier item of the same batch
    (memory.classify). Fills merges / updates / results; returns the items still to insert."""
    kept: list[tuple[int, MemoryDraft]] = []
    seen: dict[tuple, _Earlier] = {}
    read_q = memory_read_q(actor)  # the same for every item of the batch: built once
    llm = functools.cache(lambda: llm_for(org))  # looked up once per batch, only if a candidate is related
    nearest = _stored_nearest(actor, org, fresh, vectors, read_q)
    for index, draft in fresh:
        if index not in vectors:
            kept.append((index, draft))
            continue
        vector, model = vectors[index]
        key = subject_key(draft)
        if index in nearest:
            decided = services.decide_write(
                actor=actor, org=org, content=draft.content, nearest=nearest[index], model=model, llm=llm
            )
        else:
            decided = services.classify_write(
                actor=actor,
                org=org,
                base=draft.subject(org),
                content=draft.content,
                embedding=vector,
                model=model,
                llm=llm,
                read_q=read_q,
            )
        if decided.kind == "duplicate":
            merges[index] = (decided.target, draft, decided.similarity, decided.decision)
            continue
        if decided.kind == "update":
            updates[index] = (decided.target, decided.similarity, decided.decision)
        earlier = seen.get(key)
        if earlier and decided.kind != "update":
            first, first_draft, sim = earlier.nearest(vector)
            decision = classify(first_draft.content, draft.content, sim, model)
            if decision.kind == "duplicate":
                in_batch.append((index, draft, first, sim))
                results[index] = BatchResult(
                    index, "duplicate", duplicate_of=-1 - first, similarity=round(sim, 4), decision=decision
                )
                continue
            if decision.kind == "update":
                updates[index] = (-1 - first, sim, decision)
        seen.setdefault(key, _Earlier()).add(index, draft, vector)
        kept.append((index, draft))
    return kept


def _rejection(index: int, exc: BaseException) -> BatchResult:
    if isinstance(exc, pause.MemoryPaused):
        return BatchResult(index, "paused", message=exc.message)
    if isinstance(exc, gate.GateRejection):
        return BatchResult(index, "rejected", code=exc.code, message=exc.message)
    if isinstance(exc, Http404):
        return BatchResult(index, "rejected", code="not_found", message=str(exc) or "Not found.")
    if isinstance(exc, PermissionDenied):
        return BatchResult(index, "rejected", code="permission_denied", message=str(exc))
    if isinstance(exc, ValidationError):  # Django's: str() would be the repr of a list or dict
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return BatchResult(index, "rejected", code="invalid", message=error_text(detail))
    code = getattr(exc, "code", "invalid")
    return BatchResult(index, "rejected", code=code if isinstance(code, str) else "invalid", message=str(exc))
