"""Typed answers of the API. Every model keeps fields it does not know (`model_extra`) and tolerates
missing optional ones, so a newer server does not break an older client."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, protected_namespaces=())

    def __getitem__(self, name: str) -> Any:
        """`m["field"]` for fields the model does not declare (and those it does)."""
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None


class _ProjectField(Model):
    """Memories carried `project`, search and context results `project_id`: either fills `project`."""

    project: int | str | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_project_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and "project" not in data and "project_id" in data:
            data = {**data, "project": data["project_id"]}
        return data


class Memory(_ProjectField):
    id: int
    content: str = ""
    memory_type: str = ""
    scope: str = ""
    user_id: str = ""
    session_id: str = ""
    agent_id: str = ""
    skill: str = ""
    source: str = ""
    confidence: float | None = None
    visibility: str | None = None
    status: str = ""
    pinned: bool = False
    tags: list[str] = []
    metadata: dict[str, Any] = {}
    superseded_by: int | None = None
    confirmations: int = 0
    version: int | None = None
    occurred_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # POST memories answering with an existing memory (a duplicate): which one, and how close.
    duplicate_of: int | None = None
    similarity: float | None = None
    # POST memories/{id}/split: the memory the merged-in text came back from.
    split_from: int | None = None


class SearchResult(Memory):
    score: float = 0.0
    explain: dict[str, Any] | None = None


class SearchResponse(Model):
    results: list[SearchResult] = []
    took_ms: float | None = None
    notes: list[Any] | None = None
    explain: dict[str, Any] | None = None

    def __iter__(self):  # type: ignore[override]
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


class BatchError(Model):
    code: str = ""
    message: str = ""


class BatchItemResult(Model):
    index: int
    status: str
    id: int | None = None
    duplicate_of: int | None = None
    similarity: float | None = None
    error: BatchError | None = None


class BatchResult(Model):
    created: int = 0
    duplicate: int = 0
    superseded: int = 0
    rejected: int = 0
    # Items not stored because memory is paused for their subject or session; `status` "paused" when all.
    paused: int = 0
    status: str | None = None
    results: list[BatchItemResult] = []


class Paused(Model):
    """A write while memory is paused for the subject (`paused` "subject") or the session ("session"):
    nothing was stored."""

    status: str = "paused"
    paused: str = ""
    user_id: str = ""
    session_id: str | None = None
    stored: int = 0
    message: str = ""


class PausedSession(Model):
    session_id: str
    paused_at: datetime | None = None


class PauseState(Model):
    """GET/PUT/DELETE users/{user_id}/memory-pause: whether memory is paused for the subject, and for
    which of its conversations."""

    user_id: str
    paused: bool = False
    paused_at: datetime | None = None
    sessions: list[PausedSession] = []


class Feedback(Model):
    """Useful / wrong / outdated from a person a memory is about."""

    id: int
    memory: int
    user_id: str = ""
    injection: int | None = None
    value: str = ""
    note: str = ""
    actor: str = ""
    # The memory's feedback signal after this one, in (-1, 1).
    memory_feedback: float = 0.0
    created_at: datetime | None = None


class Revision(Model):
    number: int
    action: str = ""
    actor: str = ""
    reason: str = ""
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    # A merge's record of what came in (text, type, metadata, times, source, who), and the memory a split
    # turned it back into.
    incoming: dict[str, Any] | None = None
    split_into: int | None = None
    created_at: datetime | None = None


class MemoryStats(Model):
    total: int = 0
    by_type: dict[str, int] = {}
    by_source: dict[str, int] = {}
    by_status: dict[str, int] = {}
    user_count: int = 0


class Deleted(Model):
    deleted: int = 0
    ok: bool | None = None


class ContextMessage(Model):
    role: str
    content: str = ""
    created_at: datetime | None = None


class Context(Model):
    profile: dict[str, Any] | None = None
    core: list[Memory] = []
    relevant: list[SearchResult] = []
    summary: str | None = ""
    recent_messages: list[ContextMessage] = []
    language: str | None = None
    prompt: str = ""
    injection_id: int | None = None
    took_ms: float | None = None


class Message(Model):
    id: int | None = None
    role: str
    content: str = ""
    message_id: str = ""
    created_at: datetime | None = None


class Session(_ProjectField):
    session_id: str
    user_id: str = ""
    agent_id: str = ""
    status: str = ""
    summary: str = ""
    summarized_count: int = 0
    message_count: int = 0
    messages: list[Message] = []
    created_at: datetime | None = None
    last_activity_at: datetime | None = None


class JobRef(Model):
    id: int
    status: str = ""


class MessagesAppended(Model):
    session: Session
    messages: list[Message] = []
    duplicates: int = 0
    extraction_job: JobRef | None = None


class _Job(Model):
    status: str = ""

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")


class ExtractionJob(_Job, _ProjectField):
    id: int
    user_id: str = ""
    session_id: str = ""
    agent_id: str = ""
    attempts: int = 0
    error: str = ""
    method: str = ""
    result: dict[str, Any] | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


class ReembedJob(_Job):
    id: int
    model: str = ""
    total: int = 0
    done: int = 0
    errors: int = 0
    created_at: datetime | None = None
    finished_at: datetime | None = None


class Checkpoint(Model):
    id: int
    session_id: str = ""
    user_id: str = ""
    parent: int | None = None
    messages: list[Any] = []
    agent_state: dict[str, Any] = {}
    tool_states: dict[str, Any] = {}
    pending_tool_calls: list[Any] = []
    metadata: dict[str, Any] = {}
    created_at: datetime | None = None
    archived: bool = False
    archived_at: datetime | None = None


class UserProfile(Model):
    user_id: str
    history: list[dict[str, Any]] = []
    edited_fields: list[str] = []


class ProjectProfile(Model):
    project: int
    history: list[dict[str, Any]] = []
    edited_fields: list[str] = []


class Project(Model):
    id: int
    name: str = ""
    slug: str = ""
    description: str = ""
    role: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Member(Model):
    id: int
    account: int | None = None
    username: str = ""
    role: str = ""
    created_at: datetime | None = None


class Webhook(Model):
    id: int
    url: str = ""
    description: str = ""
    project: int | None = None
    events: list[str] = []
    include_content: bool = False
    active: bool = True
    disabled_at: datetime | None = None
    disabled_reason: str = ""
    consecutive_failures: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # Only in the answers to create and rotate-secret: whsec_..., shown once.
    secret: str | None = None


class WebhookDelivery(Model):
    id: int
    event: str = ""
    message_id: str = ""
    status: str = ""
    attempts: int = 0
    response_code: int | None = None
    last_error: str = ""
    next_attempt_at: datetime | None = None
    delivered_at: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    payload: dict[str, Any] = {}


class ApiKey(Model):
    id: int
    name: str = ""
    prefix: str = ""
    read_only: bool = False
    projects: list[Any] = []
    created_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    # Only in the answer to create: shown once.
    secret: str | None = None


class AuditEvent(Model):
    id: int
    created_at: datetime | None = None
    action: str = ""
    actor: Any = None
    subject: str | None = None
    details: dict[str, Any] = {}


class Injection(Model):
    id: int
    user_id: str = ""
    session_id: str = ""
    kind: str = ""
    query: str = ""
    memory_ids: list[int] = []
    created_at: datetime | None = None


class MarkdownDocument(Model):
    title: str = ""
    document: str = ""
    version: str = ""
    count: int = 0
    applied: dict[str, Any] | None = None


class Forgotten(Model):
    user_id: str
    deleted: dict[str, int] = {}
    left: dict[str, int] = {}
    total: int = 0


class StoreItem(Model):
    """An item of the LangGraph store; `score` is the similarity to a search's query (None without one)."""

    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    score: float | None = None


class ToolResult(Model):
    result: Any = None
    output: str = ""


class Config(Model):
    """GET/PUT/DELETE embedding-config and llm-config: the stored setting (None: none) and the one in effect."""

    config: dict[str, Any] | None = None
    effective: dict[str, Any] | None = None
