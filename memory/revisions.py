"""Memory revisions: the snapshot of an item and the numbered revision every change appends."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Max

from projects.access import Actor

from .models import MemoryItem, MemoryRevision
from .signals import memories_changed

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
    return revision
