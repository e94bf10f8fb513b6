"""Memory revisions: the snapshot of an item and the numbered revision every change appends."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Max

from audit import services as audit
from projects.access import Actor

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
    "version",
]


def snapshot(item: MemoryItem) -> dict:
    out = {}
    for name in SNAPSHOT_FIELDS:
        value = getattr(item, name)
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    return out


def revision_new(
    *, item: MemoryItem, action: str, actor: Actor, number: int, reason: str = "", before=None, after=None
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
) -> MemoryRevision:
    """Append the next numbered revision of an item (number=1 for a new item skips the lookup)."""
    if number is None:
        last = MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).aggregate(n=Max("number"))
        number = (last["n"] or 0) + 1
    memories_changed.send(sender=MemoryItem, org_id=item.org_id, items=[item])
    revision = revision_new(
        item=item, action=action, actor=actor, number=number, reason=reason, before=before, after=after
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
