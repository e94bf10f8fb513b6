"""What a new memory is made of (MemoryDraft), the subject it belongs to, and the row built from it.

Every surface that adds memories (API single and batch, agent routes, tools, the web page, Markdown,
extraction, import, seeding) builds drafts and hands them to memory.services / memory.batch, which
build the MemoryItem in one place (build_item).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.postgres.search import SearchVectorField
from django.db.models import Func, Value

from core.text import content_hash, keyword_tokens
from projects.access import Actor
from projects.models import Project

from .models import MemoryItem, Scope, Source


@dataclass
class MemoryDraft:
    """The fields of one memory to be written, validated and resolved (project is a Project or None)."""

    content: str
    memory_type: str = "fact"
    scope: str = Scope.USER
    user_id: str = ""
    project: Project | None = None
    session_id: str = ""
    agent_id: str = ""
    skill: str = ""
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

    def __post_init__(self):
        self.content = self.content.strip()
        self.user_id = self.user_id or ""
        self.session_id = self.session_id or ""
        self.agent_id = self.agent_id or ""
        self.skill = self.skill or ""
        self.tags = list(self.tags or [])
        self.metadata = self.metadata or {}

    def subject(self, org) -> dict:
        """The rows that count as the same subject as this draft (subject_filter)."""
        return subject_filter(
            org=org,
            scope=self.scope,
            user_id=self.user_id,
            project=self.project,
            session_id=self.session_id,
            agent_id=self.agent_id,
            skill=self.skill,
        )

    def subject_key(self) -> tuple:
        return subject_key(
            scope=self.scope,
            user_id=self.user_id,
            project_id=self.project.pk if self.project else None,
            session_id=self.session_id,
            agent_id=self.agent_id,
            skill=self.skill,
        )


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


def row_subject_key(row: MemoryItem) -> tuple:
    """subject_key of a stored row."""
    return subject_key(
        scope=row.scope,
        user_id=row.user_id,
        project_id=row.project_id,
        session_id=row.session_id,
        agent_id=row.agent_id,
        skill=row.skill,
    )


def tokens_expression(text: str):
    return Func(
        Value(keyword_tokens(text) or [""]), function="array_to_tsvector", output_field=SearchVectorField()
    )


def defer_tokens(item: MemoryItem) -> None:
    """Forget the insert expression: a later save() of this instance must not touch search_tokens."""
    item.__dict__.pop("search_tokens", None)


def build_item(
    draft: MemoryDraft, *, org, actor: Actor, embedding: list[float] | None = None, embedding_model: str = ""
) -> MemoryItem:
    """The unsaved row of a draft, written by the actor (its search tokens an insert expression)."""
    return MemoryItem(
        org=org,
        content=draft.content,
        memory_type=draft.memory_type,
        scope=draft.scope,
        user_id=draft.user_id,
        project=draft.project,
        session_id=draft.session_id,
        agent_id=draft.agent_id,
        skill=draft.skill,
        source=draft.source,
        source_id=draft.source_id,
        source_message_id=draft.source_message_id,
        confidence=draft.confidence,
        visibility=draft.visibility,
        pinned=draft.pinned,
        tags=list(draft.tags),
        metadata=draft.metadata,
        occurred_at=draft.occurred_at,
        valid_from=draft.valid_from,
        valid_until=draft.valid_until,
        expires_at=draft.expires_at,
        content_hash=content_hash(draft.content),
        embedding=embedding,
        embedding_model=embedding_model,
        search_tokens=tokens_expression(draft.content),
        created_by=actor.account,
        created_by_key=actor.api_key,
    )
