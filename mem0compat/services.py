"""Writes of the Mem0 surface, each a thin call into memory.services (the gate, revisions, access checks
of projects.access) or the extraction path (memory.extraction.services)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.http import Http404
from django.utils.translation import gettext as _

from core.roles import SYSTEM_ROLES
from memory import pause, services
from memory.drafts import MemoryDraft, default_source
from memory.extraction.rules import memory_type_of
from memory.extraction.services import extraction_run_now
from memory.gate import GateRejection
from memory.models import JobStatus, MemoryItem, Scope
from memory.selectors import readable_memories
from projects.access import Actor, require_create_memory, require_subject

from .selectors import mem0_entity_memories, mem0_memory


class Refused(Exception):
    """A write the gate or the input refused, with its HTTP status and a message naming where."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class Entities:
    """Mem0's entity ids resolved: user_id the subject, agent_id, run_id the session, app_id the project."""

    user_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    project: object = None

    @property
    def scope(self) -> str:
        if self.session_id:
            return Scope.SESSION
        if self.project is not None:
            return Scope.PROJECT
        return Scope.USER


@dataclass
class Event:
    id: int
    event: str  # ADD | UPDATE | DELETE | NONE
    memory: str
    previous_memory: str | None = None


@dataclass
class AddOutcome:
    events: list[Event] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    job_id: int | None = None


def _check_subject(actor: Actor, entities: Entities) -> None:
    if entities.session_id and entities.project is not None:
        raise Refused(400, "invalid", _("run_id and app_id: give one of them, not both."))
    if not entities.user_id and entities.project is None:
        raise Refused(
            400, "invalid", _("user_id: required (or app_id for a project's memory): whose memory is it?")
        )
    require_create_memory(
        actor,
        scope=entities.scope,
        user_id=entities.user_id,
        project=entities.project,
        session_id=entities.session_id,
    )


def mem0_add(
    *,
    actor: Actor,
    org,
    messages: list[dict],
    entities: Entities,
    infer: bool,
    fields: dict,
) -> AddOutcome:
    """Mem0's add. infer: Engram's extraction runs on the messages now (its rules or the org's chat model,
    the gate, reconciliation), recorded as an extraction job. Without infer: every message but system
    and developer ones is stored as said, all or nothing (a gate refusal stores none of them)."""
    _check_subject(actor, entities)
    if infer:
        return _extract(actor, org, messages, entities, fields)
    return _store(actor, org, messages, entities, fields)


@transaction.atomic
def _store(actor: Actor, org, messages: list[dict], entities: Entities, fields: dict) -> AddOutcome:
    outcome = AddOutcome()
    for index, message in enumerate(messages):
        content = (message.get("content") or "").strip()
        if message["role"] in SYSTEM_ROLES or not content:
            continue
        draft = MemoryDraft(
            content=content,
            memory_type=memory_type_of(content),
            scope=entities.scope,
            user_id=entities.user_id,
            project=entities.project,
            session_id=entities.session_id,
            agent_id=entities.agent_id,
            source=default_source(actor),
            **fields,
        )
        try:
            result = services.memory_create(actor=actor, org=org, draft=draft, dedup="hash")
        except GateRejection as exc:
            raise Refused(422, exc.code, f"messages[{index}]: {exc.message}") from None
        event = "ADD" if result.created else "NONE"
        outcome.events.append(Event(result.item.pk, event, result.item.content))
    return outcome


def _extract(actor: Actor, org, messages: list[dict], entities: Entities, fields: dict) -> AddOutcome:
    if not entities.user_id:
        raise Refused(400, "invalid", _("user_id: extraction (infer) needs the user the messages are from."))
    pause.check(org, entities.user_id, entities.session_id)  # paused: a 200 "paused" answer, no job
    job = extraction_run_now(
        org=org,
        user_id=entities.user_id,
        messages=[{"role": m["role"], "content": m.get("content") or ""} for m in messages],
        project=entities.project,
        session_id=entities.session_id,
        agent_id=entities.agent_id,
        created_by_key=actor.api_key if actor.is_key else None,
        draft_fields=fields,
    )
    if job.status != JobStatus.DONE:
        raise Refused(503, "extraction_failed", _("The extraction failed: %(error)s") % {"error": job.error})
    result = job.result or {}
    outcome = AddOutcome(job_id=job.pk, rejected=result.get("rejected", []))
    for entry in result.get("added", []):
        outcome.events.append(Event(entry["id"], "ADD", entry["content"]))
    for entry in result.get("superseded", []):
        outcome.events.append(Event(entry["id"], "UPDATE", entry["content"], entry.get("old_content")))
    for entry in result.get("merged", []):
        outcome.events.append(Event(entry["id"], "NONE", entry["content"]))
    for entry in result.get("withdrawn", []):
        if entry.get("id"):  # (a deferred candidate taken back was never a memory)
            outcome.events.append(Event(entry["id"], "DELETE", entry["content"]))
    return outcome


def mem0_update(*, actor: Actor, item: MemoryItem, fields: dict, reason: str = "") -> MemoryItem:
    if "content" in fields and fields["content"].strip() == item.content:
        fields.pop("content")
    try:
        return services.memory_update(actor=actor, item=item, reason=reason or "updated (Mem0 API)", **fields)
    except GateRejection as exc:
        raise Refused(422, exc.code, exc.message) from None


@transaction.atomic
def mem0_delete(*, actor: Actor, item: MemoryItem, linked: bool = False) -> int:
    """Delete one memory; linked: also the older versions it replaced (superseded), transitively."""
    doomed = [item]
    if linked:
        frontier = [item.pk]
        while frontier:
            older = [
                row
                for row in readable_memories(actor).filter(superseded_by__in=frontier)
                if row not in doomed
            ]
            doomed.extend(older)
            frontier = [row.pk for row in older]
    for row in doomed:
        services.memory_delete(actor=actor, item=row, reason="deleted (Mem0 API)")
    return len(doomed)


@transaction.atomic
def mem0_delete_entity(*, actor: Actor, org, entity_type: str, value) -> int:
    """Delete every memory of one entity the caller may change (a user: their user and session memories,
    as DELETE /api/v1/memories?user_id= does); 404 when it has none the caller may read."""
    rows = list(mem0_entity_memories(actor=actor, entity_type=entity_type, value=value))
    if not rows:
        raise Http404(_("No memories of this entity."))
    if entity_type == "user":
        return services.memory_delete_all(actor=actor, org=org, user_id=value)
    for row in rows:
        services.memory_delete(actor=actor, item=row, reason=f"{entity_type} deleted (Mem0 API)")
    return len(rows)


@transaction.atomic
def mem0_delete_matching(*, actor: Actor, org, entities: Entities, rows) -> int:
    """DELETE /v1/memories/?user_id=…: a subject's memories (of one agent) through memory_delete_all, or
    every readable memory the other entities name, each through memory_delete (which checks the role)."""
    if entities.user_id and not entities.session_id and entities.project is None:
        require_subject(actor, entities.user_id, write=True)
        return services.memory_delete_all(
            actor=actor, org=org, user_id=entities.user_id, agent_id=entities.agent_id or None
        )
    rows = list(rows)
    for row in rows:
        services.memory_delete(actor=actor, item=row, reason="deleted with its entity (Mem0 API)")
    return len(rows)


@transaction.atomic
def mem0_batch(*, actor: Actor, changes: list[dict], delete: bool) -> int:
    """Update or delete many memories at once, all or nothing: an unknown id is a 404 naming it."""
    items = []
    for index, change in enumerate(changes):
        item = mem0_memory(actor=actor, memory_id=change["memory_id"])
        if item is None:
            raise Http404(
                _("memories[%(index)s]: no memory %(id)s.") % {"index": index, "id": change["memory_id"]}
            )
        items.append(item)
    for index, (item, change) in enumerate(zip(items, changes, strict=True)):
        if delete:
            services.memory_delete(actor=actor, item=item, reason="deleted in a batch (Mem0 API)")
            continue
        try:
            mem0_update(
                actor=actor, item=item, fields=change["fields"], reason="updated in a batch (Mem0 API)"
            )
        except Refused as exc:
            raise Refused(exc.status, exc.code, f"memories[{index}]: {exc.message}") from None
    return len(items)


def mem0_feedback(*, actor: Actor, item: MemoryItem, value: str, reason: str):
    """Mem0's feedback call writes the same rows as Engram's own (memory.feedback): the word of the
    person the memory is about; a project memory, which is about no one, is refused (Mem0 names no user)."""
    from memory.feedback import FeedbackRefused, feedback_record

    try:
        return feedback_record(actor=actor, item=item, value=value, user_id=item.user_id or None, note=reason)
    except FeedbackRefused as exc:
        raise Refused(400, "invalid", str(exc)) from None
