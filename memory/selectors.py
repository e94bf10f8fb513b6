"""Reads of long-term memory: the readable memories, the candidate set a search or context call may draw
from, core memories, revisions, extraction and re-embed jobs, injection logs. Access is decided by
projects.access (its *_read_q filters) inside the query, never after it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from projects.access import (
    Actor,
    extraction_job_read_q,
    injection_figures_q,
    injection_read_q,
    memory_figures_q,
    memory_read_q,
    reembed_job_read_q,
    require_read_memory,
)
from projects.models import Project

from .filters import MemoryFilterSet
from .models import (
    ExtractionJob,
    InjectionLog,
    MemoryFeedback,
    MemoryItem,
    MemoryRevision,
    MemoryType,
    ReembedJob,
    Scope,
    Status,
)


def readable_memories(actor: Actor) -> QuerySet[MemoryItem]:
    """Every memory the actor may read; the query itself enforces it."""
    return MemoryItem.objects.filter(memory_read_q(actor))


def memory_revisions(*, item: MemoryItem) -> QuerySet[MemoryRevision]:
    """The revisions of a memory the caller has read (readable_memories); unordered."""
    return MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk)


def own_skill_names(*, actor: Actor) -> list[str]:
    """The skills of the actor's own active user-scope memories (the Markdown editor's documents)."""
    qs = readable_memories(actor).filter(scope=Scope.USER, user_id=actor.user_id, status=Status.ACTIVE)
    return sorted(set(qs.exclude(skill="").values_list("skill", flat=True)))


@dataclass
class MemoryFilters:
    """Everything that narrows a search or a context call, besides the query text.

    The subject (user_id, session_id, project) says whose memories take part; the rest are
    memory.filters.MemoryFilterSet's filters (tags: ALL of them), applied by that FilterSet."""

    user_id: str = ""
    project: Project | None = None
    session_id: str = ""
    agent_id: str = ""
    skills: list[str] | None = None  # None: no skill memories at all; [...] only those skills'
    memory_types: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    created_after: datetime | None = None
    created_before: datetime | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    include_superseded: bool = False
    include_expired: bool = False

    def filter_values(self) -> dict:
        """These filters as MemoryFilterSet values; a search keeps active, unexpired rows by default."""
        return {
            "agent_id": self.agent_id or None,
            # Seed 003: a skill's memories are injected only while that skill is enabled.
            "skills": self.skills or [],
            "memory_type": self.memory_types or None,
            "scope": self.scopes or None,
            "status": list(self.statuses) or [Status.ACTIVE],
            "include_superseded": self.include_superseded,
            "include_expired": self.include_expired,
            "tags": self.tags or None,
            "metadata": self.metadata or None,
            "created_after": self.created_after,
            "created_before": self.created_before,
            "occurred_after": self.occurred_after,
            "occurred_before": self.occurred_before,
        }


def subject_q(filters: MemoryFilters) -> Q:
    """Which rows are about the subject of the call: the user's own, their session's, the project's."""
    q = Q(pk__in=[])
    if filters.user_id:
        # The user id once, beside the scopes: a prepared search's generic plan (memory.search.sql) cannot
        # tell that two of its parameters hold the same id, and read the subject's index twice (a bitmap OR).
        if filters.session_id:
            scopes = Q(scope=Scope.USER) | Q(scope=Scope.SESSION, session_id=filters.session_id)
        else:
            scopes = Q(scope__in=[Scope.USER, Scope.SESSION])
        q |= Q(user_id=filters.user_id) & scopes
    if filters.project is not None:
        q |= Q(scope=Scope.PROJECT, project=filters.project)
    return q


def memory_candidates(*, actor: Actor, filters: MemoryFilters) -> QuerySet:
    """Every memory the actor may read that is about the subject and that the filters allow (unordered).

    A pure function of (actor, filters): memory.search.sql caches its compiled WHERE under that key."""
    q = subject_q(filters) & MemoryFilterSet.values_q(filters.filter_values())
    # One filter() call: each call clones the query, which costs more than the filter itself.
    # memory_read_q is readable_memories' filter (org included).
    return MemoryItem.objects.filter(memory_read_q(actor) & q)


def core_memories(*, actor: Actor, filters: MemoryFilters, limit: int = 100) -> list[MemoryItem]:
    """Layer 1 of seed 004: every core-type and every pinned memory, no retrieval."""
    qs = memory_candidates(actor=actor, filters=filters).filter(
        Q(memory_type=MemoryType.CORE) | Q(pinned=True)
    )
    return list(qs.order_by("-pinned", "created_at", "id")[:limit])


def injections_for_user(*, actor: Actor, user_id: str) -> QuerySet[InjectionLog]:
    """A subject's injection logs that the actor may read (the caller has passed require_subject)."""
    return InjectionLog.objects.filter(injection_read_q(actor), user_id=user_id)


def injections_for_memory(*, actor: Actor, item: MemoryItem) -> QuerySet[InjectionLog]:
    """Logs that handed this (readable) memory to an agent; an account sees only logs about itself."""
    return InjectionLog.objects.filter(injection_read_q(actor), memory_ids__contains=[item.pk])


def injection_count_for_memory(*, actor: Actor, item: MemoryItem) -> int:
    """How many agent calls, anyone's, were given this memory: a count only (the calls stay their
    subject's); the item must be readable by the actor."""
    require_read_memory(actor, item)
    return InjectionLog.objects.filter(org=item.org_id, memory_ids__contains=[item.pk]).count()


def feedback_given(*, actor: Actor) -> QuerySet[MemoryFeedback]:
    """The feedback the actor (an account: its own subject) gave on memories it may read."""
    return MemoryFeedback.objects.filter(
        org=actor.org, subject=actor.user_id or "", memory__in=readable_memories(actor).values("id")
    )


def extraction_jobs_for(actor: Actor) -> QuerySet[ExtractionJob]:
    """Extraction jobs the actor may see (projects.access.extraction_job_read_q)."""
    return ExtractionJob.objects.filter(extraction_job_read_q(actor)).select_related("project")


def reembed_jobs_for(actor: Actor) -> QuerySet[ReembedJob]:
    """The org's re-embed jobs, newest first."""
    return ReembedJob.objects.filter(reembed_job_read_q(actor)).order_by("-created_at", "-id")


def usage_memories(actor: Actor) -> QuerySet[MemoryItem]:
    """The memories the usage page counts (the org's for its owners and admins)."""
    return MemoryItem.objects.filter(memory_figures_q(actor))


def usage_injections(actor: Actor) -> QuerySet[InjectionLog]:
    """The injection logs the usage page counts (the org's for its owners and admins)."""
    return InjectionLog.objects.filter(injection_figures_q(actor))


VISIBILITY_ORDER = Case(
    When(visibility="public", then=Value(0)),
    When(visibility="members", then=Value(1)),
    default=Value(2),
    output_field=IntegerField(),
)


def project_memories(*, actor: Actor, project):
    """The project's active project-scope memories the actor may read: public first, then members, private."""
    return (
        readable_memories(actor)
        .filter(project=project, scope="project", status="active")
        .select_related("created_by", "created_by_key", "project")
        .annotate(vis_order=VISIBILITY_ORDER)
        .order_by("vis_order", "-updated_at")
    )
