"""What a new memory is made of (MemoryDraft), the subject it belongs to, and the row built from it.

Every surface that adds memories (API single and batch, agent routes, tools, the web page, Markdown,
extraction, import, seeding) builds drafts and hands them to memory.services / memory.batch, which
build the MemoryItem in one place (build_item).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.search import SearchVectorField
from django.db import connection
from django.db.models import Func, TextField, Value

from core.secrets import redact
from core.text import content_hash, keyword_tokens
from projects.access import Actor
from projects.models import Project

from .models import MemoryItem, Scope, Source


def default_source(actor: Actor) -> str:
    """Where a memory written without a `source` came from: an API key is an agent, a person is the user."""
    return Source.AGENT if actor.is_key else Source.USER


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
        # Where a memory came from is kept like conversation text: without its secrets (the gate keeps
        # them out of content; an id is not refused, only redacted).
        self.source_id = redact(self.source_id or "")[: MemoryItem._meta.get_field("source_id").max_length]
        self.tags = list(self.tags or [])
        self.metadata = self.metadata or {}

    @property
    def project_id(self) -> int | None:
        return self.project.pk if self.project else None

    def subject(self, org) -> dict:
        """The rows that count as the same subject for deduplication.

        One agent's memories stay its own, and a skill's memories stay apart from general ones (seed
        003: a skill's document is injected only when the skill is enabled, so merging across would
        hide a fact).
        """
        common = {"org": org, "scope": self.scope, "agent_id": self.agent_id, "skill": self.skill}
        if self.scope == Scope.PROJECT:
            return {**common, "project": self.project}
        if self.scope == Scope.SESSION:
            return {**common, "user_id": self.user_id, "session_id": self.session_id}
        return {**common, "user_id": self.user_id}


def subject_key(memory: MemoryDraft | MemoryItem) -> tuple:
    """MemoryDraft.subject as a hashable key, of a draft or a stored row, for matching many in Python."""
    agent_id, skill = memory.agent_id or "", memory.skill or ""
    if memory.scope == Scope.PROJECT:
        return (memory.scope, memory.project_id, agent_id, skill)
    if memory.scope == Scope.SESSION:
        return (memory.scope, memory.user_id, memory.session_id, agent_id, skill)
    return (memory.scope, memory.user_id, agent_id, skill)


def subject_lock_id(org_id: int, key: tuple) -> int:
    """A stable signed 64-bit advisory-lock id of one subject of one org (the same in every process)."""
    digest = hashlib.blake2b(repr(("engram.memory.subject", org_id, key)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lock_subjects(org_id: int, memories: Iterable[MemoryDraft | MemoryItem]) -> None:
    """Serialise duplicate checks per subject: hold each subject's advisory lock until the transaction ends.

    Call it inside the transaction that inserts, before looking for duplicates: a concurrent add of the
    same text to the same subject then waits and finds this one's row. The locks are taken in one
    statement, in a fixed order, so two batches over the same subjects cannot deadlock.
    """
    ids = sorted({subject_lock_id(org_id, subject_key(memory)) for memory in memories})
    if ids:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(id) FROM unnest(%s::bigint[]) AS id", [ids])


def tokens_expression(text: str):
    """The search_tokens of a text (an empty tsvector when it has no tokens: "" is not a lexeme)."""
    return Func(
        Value(keyword_tokens(text), output_field=ArrayField(TextField())),
        function="array_to_tsvector",
        output_field=SearchVectorField(),
    )


def defer_tokens(item: MemoryItem) -> None:
    """Forget the insert expression: a later save() of this instance must not touch search_tokens."""
    item.__dict__.pop("search_tokens", None)


def build_item(
    draft: MemoryDraft, *, org, actor: Actor, embedding: list[float] | None = None, embedding_model: str = ""
) -> MemoryItem:
    """The unsaved row of a draft, written by the actor (its search tokens an insert expression)."""
    values = {f.name: getattr(draft, f.name) for f in fields(MemoryDraft)}
    return MemoryItem(
        org=org,
        **{**values, "tags": list(draft.tags)},
        content_hash=content_hash(draft.content),
        embedding=embedding,
        embedding_model=embedding_model,
        search_tokens=tokens_expression(draft.content),
        created_by=actor.account,
        created_by_key=actor.api_key,
    )
