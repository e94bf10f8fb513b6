"""Reads of the Mem0 surface: always from the caller's readable memories (memory.selectors), narrowed by
Mem0's filters (mem0compat.filters)."""

from __future__ import annotations

from django.db.models import Count, Max, Min, Q, QuerySet
from django.utils import timezone

from memory.models import MemoryItem, MemoryRevision, Status
from memory.selectors import memory_revisions, readable_memories
from projects.access import Actor

ENTITY_TYPES = {"user": "user_id", "agent": "agent_id", "run": "session_id", "app": "project"}


def mem0_memories(
    *, actor: Actor, q: Q | None = None, show_expired: bool = False, latest_only: bool = True
) -> QuerySet[MemoryItem]:
    """The readable memories a Mem0 call may show, newest first: active ones (and the versions an update
    replaced unless latest_only), unexpired unless show_expired."""
    statuses = [Status.ACTIVE] if latest_only else [Status.ACTIVE, Status.SUPERSEDED]
    qs = readable_memories(actor).filter(status__in=statuses)
    if q is not None:
        qs = qs.filter(q)
    if not show_expired:
        qs = qs.filter(Q(expires_at=None) | Q(expires_at__gt=timezone.now()))
    return qs.defer("embedding", "search_tokens").order_by("-created_at", "-id")


def mem0_memory(*, actor: Actor, memory_id: str) -> MemoryItem | None:
    """One readable memory by its id as Mem0 sends it (a string in the path), or None."""
    text = str(memory_id)
    if not text.isdigit() or len(text) > 18:
        return None
    return readable_memories(actor).filter(pk=int(text)).defer("embedding", "search_tokens").first()


def mem0_history(*, item: MemoryItem) -> list[MemoryRevision]:
    return list(memory_revisions(item=item).order_by("number", "id"))


def mem0_entities(*, actor: Actor) -> list[dict]:
    """Every user, agent, run (session) and app (project) that has a memory the caller may read."""
    qs = readable_memories(actor).order_by()
    out = []
    for kind, column in ENTITY_TYPES.items():
        rows = (
            qs.exclude(**({f"{column}__isnull": True} if column == "project" else {column: ""}))
            .values(column)
            .annotate(total=Count("id"), first=Min("created_at"), last=Max("updated_at"))
            .order_by(column)
        )
        for row in rows:
            name = str(row[column])
            out.append(
                {
                    "id": name,
                    "name": name,
                    "type": kind,
                    "total_memories": row["total"],
                    "created_at": row["first"],
                    "updated_at": row["last"],
                    "owner": None,
                    "organization": actor.org.slug,
                    "metadata": None,
                }
            )
    return out


def mem0_entity_memories(*, actor: Actor, entity_type: str, value) -> QuerySet[MemoryItem]:
    """The readable memories of one entity (a project for "app"), every status."""
    return (
        readable_memories(actor)
        .filter(**{ENTITY_TYPES[entity_type]: value})
        .defer("embedding", "search_tokens")
    )
