"""Memory revisions: the snapshot of an item and the numbered revision every change appends."""

from __future__ import annotations

import difflib
import re
from dataclasses import fields
from datetime import datetime

from django.db.models import Max

from audit import services as audit
from core.times import rfc3339, rfc3339_value
from projects.access import Actor

from .drafts import MemoryDraft
from .models import MemoryItem, MemoryRevision
from .signals import memories_changed, revisions_written

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
    "confirmations",
    "version",
]


# What restoring a revision brings back (memory.services.memory_restore); the item also becomes active.
RESTORED_FIELDS = (
    "content",
    "memory_type",
    "confidence",
    "visibility",
    "pinned",
    "tags",
    "metadata",
    "skill",
)


def restore_changes_anything(item: MemoryItem, revision: MemoryRevision) -> bool:
    """Whether restoring this revision would change the item (no "restore" offered for its current state)."""
    state = revision.after or revision.before or {}
    if not state:
        return False
    current = snapshot(item)
    if item.status != "active":
        return True
    return any(current.get(name) != state[name] for name in RESTORED_FIELDS if name in state)


# Words of Latin script stay whole; every other character (CJK, punctuation) is a token of its own.
_DIFF_TOKEN = re.compile(r"[A-Za-z0-9_'’-]+|\s+|.", re.S)


def content_diff(before: str, after: str) -> list[tuple[str, str]]:
    """The change from one content to the next as (op, text) runs: op is "same", "del" or "ins"."""
    a, b = _DIFF_TOKEN.findall(before or ""), _DIFF_TOKEN.findall(after or "")
    runs: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            runs.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            runs.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            runs.append(("ins", "".join(b[j1:j2])))
    return runs


def changed_fields(revision: MemoryRevision) -> list[tuple[str, object, object]]:
    """The restorable fields other than content a revision changed: (name, before, after)."""
    before, after = revision.before or {}, revision.after or {}
    if not before or not after:
        return []
    return [
        (name, before.get(name), after.get(name))
        for name in RESTORED_FIELDS
        if name not in ("content", "metadata", "confidence") and before.get(name) != after.get(name)
    ]


def _json(value):
    return rfc3339(value) if isinstance(value, datetime) else value


def snapshot(item: MemoryItem) -> dict:
    return {name: _json(getattr(item, name)) for name in SNAPSHOT_FIELDS}


# What an add brings that a merge would otherwise drop: every field of the draft but its subject (scope,
# user, project: the same as the item's, or it would not have been a duplicate).
INCOMING_FIELDS = [f.name for f in fields(MemoryDraft) if f.name not in ("scope", "user_id", "project")]


def incoming_of(draft: MemoryDraft, *, actor: Actor, similarity: float | None, reason: str) -> dict:
    """The record of an add merged into an existing item (MemoryRevision.incoming): the draft's fields,
    who sent it, how similar it was and why it merged; memory.services.memory_split turns it back."""
    out = {name: _json(getattr(draft, name)) for name in INCOMING_FIELDS}
    out.update(
        tags=list(draft.tags or []),
        actor=actor.label,
        similarity=None if similarity is None else round(similarity, 4),
        reason=reason,
    )
    return out


# Snapshot keys named as the memory object (the API) names them.
SNAPSHOT_NAMES = {"project_id": "project", "superseded_by_id": "superseded_by"}


def snapshot_out(snapshot):
    """A stored snapshot in the answers' shape: field names as on a memory, timestamps ending in Z (older
    snapshots were written with +00:00). Stored snapshots keep their names: restore reads them."""
    if not isinstance(snapshot, dict):
        return snapshot
    return {SNAPSHOT_NAMES.get(k, k): rfc3339_value(v) for k, v in snapshot.items()}


def revision_new(
    *,
    item: MemoryItem,
    action: str,
    actor: Actor,
    number: int,
    reason: str = "",
    before=None,
    after=None,
    incoming: dict | None = None,
) -> MemoryRevision:
    """An unsaved revision of an item (for bulk inserts; revision_write saves one)."""
    return MemoryRevision(
        org_id=item.org_id,
        item=item,
        item_ref=item.pk,
        user_id=item.user_id,
        number=number,
        action=action,
        actor=actor.label,
        reason=reason,
        before=before,
        after=after,
        incoming=incoming,
    )


def revision_write(
    *,
    item: MemoryItem,
    action: str,
    actor: Actor,
    reason: str = "",
    before=None,
    after=None,
    number: int | None = None,
    incoming: dict | None = None,
) -> MemoryRevision:
    """Append the next numbered revision of an item (number=1 for a new item skips the lookup)."""
    if number is None:
        last = MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).aggregate(n=Max("number"))
        number = (last["n"] or 0) + 1
    memories_changed.send(sender=MemoryItem, org_id=item.org_id, items=[item])
    revision = revision_new(
        item=item,
        action=action,
        actor=actor,
        number=number,
        reason=reason,
        before=before,
        after=after,
        incoming=incoming,
    )
    revision.save()
    revisions_written.send(sender=MemoryRevision, org_id=item.org_id, revisions=[revision])
    audit_revision(item=item, action=action, actor=actor, before=before, after=after)
    return revision


AUDIT_ACTIONS = {
    "add": audit.Action.MEMORY_CREATE,
    "update": audit.Action.MEMORY_UPDATE,
    "merge": audit.Action.MEMORY_MERGE,
    "supersede": audit.Action.MEMORY_SUPERSEDE,
    "archive": audit.Action.MEMORY_ARCHIVE,
    "restore": audit.Action.MEMORY_RESTORE,
    "delete": audit.Action.MEMORY_DELETE,
    "split": audit.Action.MEMORY_SPLIT,
}


def audit_revision(*, item: MemoryItem, action: str, actor: Actor, before=None, after=None) -> None:
    """The audit event of a change by an account or key: the names of the fields it changed, no values.
    The system's own changes (extraction, expiry, re-embedding) are in the revision history only."""
    if actor.is_system:
        return
    changed = sorted(
        k for k in SNAPSHOT_FIELDS if k != "version" and (before or {}).get(k) != (after or {}).get(k)
    )
    details = {"scope": item.scope, "version": item.version}
    kind = AUDIT_ACTIONS[action]
    if kind == audit.Action.MEMORY_UPDATE and changed == ["pinned"]:
        kind, details["pinned"] = audit.Action.MEMORY_PIN, bool(item.pinned)
    elif before is not None and after is not None:
        details["fields"] = changed
    audit.record(actor, kind, target=item, project=item.project_id, subject=item.user_id, details=details)
