"""Writes for short-term memory (sessions, messages, rolling summaries) and episodic memory (checkpoints)."""

from __future__ import annotations

import json
import zlib
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from config.celery import enqueue_on_commit
from core.roles import USER_ROLES, role_kind
from core.secrets import redact, redact_json
from core.times import rfc3339
from memory.pause import paused

from .models import Checkpoint, CheckpointArchive, Message, Session

SUMMARY_MAX_CHARS = 4000
# A session over SHORT_TERM_MAX_MESSAGES queues one compression, and one more for every this many messages
# after it while none has run: not one per message, which a busy queue turned into hundreds of copies.
COMPRESS_EVERY = 10
# Messages before the new turn handed to the extraction model as context (never extracted from again).
EXTRACTION_CONTEXT_MESSAGES = 6
ROLE_NAMES = {"user": "用户", "assistant": "AI", "system": "系统", "tool": "工具"}


class Conflict(Exception):
    """The request clashes with the stored state (HTTP 409)."""


# ---- sessions and messages -------------------------------------------------------------------------


def _session_for_write(*, org, session_id: str, user_id: str, project=None, agent_id: str = "") -> Session:
    """The session row, locked; created on first use, revived when it had expired."""
    agent_id = redact(agent_id or "")[:255]  # kept like the session's messages: without secrets
    session = Session.objects.select_for_update().filter(org=org, session_id=session_id).first()
    if session is None:
        session, _ = Session.objects.get_or_create(
            org=org,
            session_id=session_id,
            defaults={"user_id": user_id, "project": project, "agent_id": agent_id or ""},
        )
        session = Session.objects.select_for_update().get(pk=session.pk)
    if session.user_id != user_id:
        raise Conflict(f"Session {session_id} belongs to another user.")
    changed = []
    if session.status != "active":
        session.status = "active"
        changed.append("status")
    if project is not None and session.project_id != project.pk:
        session.project = project
        changed.append("project")
    if agent_id and session.agent_id != agent_id:
        session.agent_id = agent_id
        changed.append("agent_id")
    session.last_activity_at = timezone.now()
    session.save(update_fields=[*changed, "last_activity_at"])
    return session


@transaction.atomic
def messages_append(
    *,
    org,
    session_id: str,
    user_id: str,
    messages: list[dict],
    project=None,
    agent_id: str = "",
    extract: bool = True,
    created_by_key=None,
) -> tuple[Session, list[Message], object]:
    """Append a turn; queue compression when the window overflows and extraction when asked.

    A message whose message_id is already in the session is not stored twice (an agent's retry).
    """
    session = _session_for_write(
        org=org, session_id=session_id, user_id=user_id, project=project, agent_id=agent_id
    )
    given_ids = [m["message_id"] for m in messages if m.get("message_id")]
    known = set(
        Message.objects.filter(session=session, message_id__in=given_ids).values_list("message_id", flat=True)
    )
    rows = []
    for m in messages:
        if m.get("message_id") and m["message_id"] in known:
            continue
        known.add(m.get("message_id") or "")
        rows.append(
            Message(
                org=org,
                session=session,
                user_id=user_id,
                role=m["role"],
                # Conversation history is kept as said, less its secrets (keys, passwords, card numbers).
                content=redact(m["content"]),
                message_id=m.get("message_id") or "",
            )
        )
    created = Message.objects.bulk_create(rows)
    total = Message.objects.filter(session=session).count()
    if _overflow_step(total) > _overflow_step(total - len(created)):
        from .tasks import session_compress

        enqueue_on_commit(session_compress, session.pk)
    job = None
    # Memory paused for the subject or this conversation (memory.pause): the turn is kept, nothing extracted.
    if extract and paused(org, user_id, session.session_id):
        extract = False
    if extract and any(m.role in USER_ROLES for m in created):
        from memory.extraction.services import extraction_job_create

        earlier = Message.objects.filter(session=session, id__lt=created[0].pk).order_by("-id")
        context = [
            {"role": m.role, "content": m.content, "message_id": m.message_id, "context": True}
            for m in reversed(earlier[:EXTRACTION_CONTEXT_MESSAGES])
        ]
        job = extraction_job_create(
            org=org,
            user_id=user_id,
            project=session.project,
            session_id=session.session_id,
            agent_id=session.agent_id,
            messages=context
            + [{"role": m.role, "content": m.content, "message_id": m.message_id} for m in created],
            created_by_key=created_by_key,
        )
    return session, created, job


def _overflow_step(count: int) -> int:
    """-1 within the window; 0 for the first COMPRESS_EVERY messages over it, 1 for the next ones, ..."""
    over = count - settings.SHORT_TERM_MAX_MESSAGES
    return -1 if over <= 0 else (over - 1) // COMPRESS_EVERY


def history_text(messages) -> str:
    return "\n".join(f"{ROLE_NAMES[role_kind(m.role)]}: {m.content}" for m in messages)


def summary_truncated(existing: str, messages) -> str:
    """Seed 002's fallback without a model: concatenate and keep the newest SUMMARY_MAX_CHARS characters."""
    text = f"{existing}\n{history_text(messages)}" if existing else history_text(messages)
    return text[-SUMMARY_MAX_CHARS:]


def _summarize(org, existing: str, messages, *, use_llm: bool) -> tuple[str, str]:
    from memory.llm import llm_for

    client = llm_for(org) if use_llm else None
    if client is None:
        return summary_truncated(existing, messages), "truncate"
    from memory.extraction.llm import summarize_llm

    payload = [{"role": m.role, "content": m.content} for m in messages]
    return summarize_llm(client, existing, payload)[:SUMMARY_MAX_CHARS], "llm"


def session_compress(*, session_pk: int, use_llm: bool = True) -> dict:
    """Fold the messages beyond the newest SHORT_TERM_KEEP into the summary (recursively).

    The summary is computed first (an LLM error propagates with nothing changed); then, in one
    transaction, the summary is stored and only then the folded messages are deleted. If another
    compression stored a summary meanwhile, this one changes nothing.
    """
    session = Session.objects.filter(pk=session_pk).select_related("org").first()
    if session is None:
        return {"folded": 0}
    ids = list(Message.objects.filter(session=session).order_by("-id").values_list("id", flat=True))
    if len(ids) <= settings.SHORT_TERM_MAX_MESSAGES:
        return {"folded": 0}
    oldest_kept = ids[settings.SHORT_TERM_KEEP - 1]
    fold = list(Message.objects.filter(session=session, id__lt=oldest_kept).order_by("id"))
    before_summary, before_count = session.summary, session.summarized_count
    summary, method = _summarize(session.org, before_summary, fold, use_llm=use_llm)
    with transaction.atomic():
        locked = Session.objects.select_for_update().get(pk=session.pk)
        if (locked.summary, locked.summarized_count) != (before_summary, before_count):
            return {"folded": 0, "conflict": True}
        locked.summary = summary
        locked.summarized_count = before_count + len(fold)
        locked.save(update_fields=["summary", "summarized_count"])
        Message.objects.filter(session=locked, id__in=[m.pk for m in fold]).delete()
    return {"folded": len(fold), "method": method}


@transaction.atomic
def session_delete(*, session: Session) -> None:
    """Remove a session with its messages, summary and checkpoints (archived ones included)."""
    session.delete()


def sessions_expire(*, now=None, batch: int = 500) -> int:
    """Sessions idle longer than SHORT_TERM_TTL lose their messages and summary (status expired).

    Checkpoints stay (episodic memory); a new message revives the session.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SHORT_TERM_TTL)
    total = 0
    while True:
        with transaction.atomic():
            ids = list(
                Session.objects.select_for_update(skip_locked=True)
                .filter(status="active", last_activity_at__lt=cutoff)
                .values_list("pk", flat=True)[:batch]
            )
            if not ids:
                return total
            Message.objects.filter(session_id__in=ids).delete()
            Session.objects.filter(pk__in=ids).update(status="expired", summary="", summarized_count=0)
            total += len(ids)


# ---- checkpoints ------------------------------------------------------------------------------------

PAYLOAD_DEFAULTS = {
    "messages": [],
    "agent_state": {},
    "tool_states": {},
    "pending_tool_calls": [],
    "metadata": {},
}
PAYLOAD_FIELDS = tuple(PAYLOAD_DEFAULTS)


def redacted_payload(payload: dict) -> dict:
    """Checkpoint payload fields without secrets: every string through core.secrets.redact, keys and tool call
    ids kept (decisions refer to the ids). A checkpoint is episodic memory, kept like conversation
    messages; agents keep credentials elsewhere."""
    return {
        name: [redact_json(call, keep=frozenset({"id"})) for call in value]
        if name == "pending_tool_calls"
        else redact_json(value)
        for name, value in payload.items()
    }


def compress_payload(payload: dict) -> bytes:
    """An archived checkpoint's payload: zlib-compressed JSON (archive_payload reads it)."""
    return zlib.compress(json.dumps(payload).encode(), 6)


def validate_tool_calls(calls) -> None:
    """Pending tool calls are objects with a unique string id (OpenAI's tool_call shape)."""
    seen = set()
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            raise ValidationError("pending_tool_calls: every call needs a string id.")
        if call["id"] in seen:
            raise ValidationError(f"pending_tool_calls: id {call['id']} appears twice.")
        seen.add(call["id"])


def validate_payload(payload: dict) -> None:
    """A payload from outside (an imported checkpoint or archive) has the shapes checkpoint_save takes:
    lists of messages and of pending tool calls (validate_tool_calls), objects for the rest."""
    for name, empty in PAYLOAD_DEFAULTS.items():
        value = payload.get(name, empty)
        if isinstance(empty, list) and not isinstance(value, list):
            raise ValidationError(_("%(field)s: must be a list.") % {"field": name})
        if isinstance(empty, dict) and not isinstance(value, dict):
            raise ValidationError(_("%(field)s: must be an object.") % {"field": name})
    validate_tool_calls(payload.get("pending_tool_calls") or [])


@transaction.atomic
def checkpoint_save(
    *,
    org,
    session_id: str,
    user_id: str,
    project=None,
    agent_id: str = "",
    messages: list | None = None,
    agent_state: dict | None = None,
    tool_states: dict | None = None,
    pending_tool_calls: list | None = None,
    metadata: dict | None = None,
    parent_id: int | None = None,
) -> Checkpoint:
    """Save a resumable snapshot, without secrets (redacted_payload); the parent must be a checkpoint of
    the same session."""
    session = _session_for_write(
        org=org, session_id=session_id, user_id=user_id, project=project, agent_id=agent_id
    )
    validate_tool_calls(pending_tool_calls or [])
    parent = None
    if parent_id is not None:
        parent = Checkpoint.objects.filter(session=session, pk=parent_id).first()
        if (
            parent is None
            and not CheckpointArchive.objects.filter(session=session, original_id=parent_id).exists()
        ):
            raise ValidationError(f"parent: no checkpoint {parent_id} in session {session_id}.")
    return Checkpoint.objects.create(
        org=org,
        session=session,
        user_id=user_id,
        parent=parent,
        parent_ref=parent_id,
        **redacted_payload(
            {
                "messages": messages or [],
                "agent_state": agent_state or {},
                "tool_states": tool_states or {},
                "pending_tool_calls": pending_tool_calls or [],
                "metadata": metadata or {},
            }
        ),
    )


@transaction.atomic
def checkpoint_decide(
    *, checkpoint: Checkpoint, decision: str, tool_call_ids: list[str] | None, comment: str, decided_by: str
) -> Checkpoint:
    """Approve or reject pending tool calls (HITL): a new checkpoint records the decision.

    Only the session's latest checkpoint can be decided on (409 otherwise). The new checkpoint keeps
    the undecided calls pending and lists the decided ones in metadata["decisions"].
    """
    session = Session.objects.select_for_update().get(pk=checkpoint.session_id)
    latest = Checkpoint.objects.filter(session=session).aggregate(m=Max("id"))["m"]
    if latest != checkpoint.pk:
        raise Conflict(f"Checkpoint {checkpoint.pk} is not the latest of its session ({latest}).")
    pending = {call["id"]: call for call in checkpoint.pending_tool_calls}
    ids = list(pending) if tool_call_ids is None else list(dict.fromkeys(tool_call_ids))
    if not ids:
        raise ValidationError("There are no pending tool calls to decide.")
    unknown = [i for i in ids if i not in pending]
    if unknown:
        raise ValidationError(f"tool_call_ids: not pending here: {', '.join(unknown)}.")
    now = rfc3339(timezone.now())
    verdict = "approved" if decision == "approve" else "rejected"
    decisions = [
        {
            "tool_call_id": i,
            "decision": verdict,
            "tool_call": pending[i],
            "comment": redact(comment),
            "decided_by": decided_by,
            "decided_at": now,
        }
        for i in ids
    ]
    session.last_activity_at = timezone.now()
    session.save(update_fields=["last_activity_at"])
    return Checkpoint.objects.create(
        org_id=checkpoint.org_id,
        session=session,
        user_id=checkpoint.user_id,
        parent=checkpoint,
        parent_ref=checkpoint.pk,
        messages=checkpoint.messages,
        agent_state=checkpoint.agent_state,
        tool_states=checkpoint.tool_states,
        pending_tool_calls=[call for call in checkpoint.pending_tool_calls if call["id"] not in ids],
        metadata={**checkpoint.metadata, "decisions": decisions},
    )


def archive_json(payload: bytes):
    """The JSON of an archived payload (compress_payload's inverse)."""
    return json.loads(zlib.decompress(payload))


def archive_payload(archive: CheckpointArchive) -> dict:
    return archive_json(bytes(archive.payload))


def checkpoints_archive(*, now=None, batch: int = 500) -> int:
    """Move checkpoints older than CHECKPOINT_ARCHIVE_AFTER into the compressed archive.

    The latest checkpoint of a live (active) session is never archived, so it always resumes.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.CHECKPOINT_ARCHIVE_AFTER)
    total = 0
    while True:
        with transaction.atomic():
            latest_live = (
                Checkpoint.objects.filter(session__status="active")
                .values("session")
                .annotate(m=Max("id"))
                .values("m")
            )
            rows = list(
                Checkpoint.objects.select_for_update(skip_locked=True)
                .filter(created_at__lt=cutoff)
                .exclude(pk__in=latest_live)
                .order_by("id")[:batch]
            )
            if not rows:
                return total
            CheckpointArchive.objects.bulk_create(
                [
                    CheckpointArchive(
                        org_id=row.org_id,
                        original_id=row.pk,
                        session_id=row.session_id,
                        user_id=row.user_id,
                        parent_id_ref=row.parent_ref if row.parent_ref is not None else row.parent_id,
                        payload=compress_payload({name: getattr(row, name) for name in PAYLOAD_FIELDS}),
                        created_at=row.created_at,
                    )
                    for row in rows
                ]
            )
            Checkpoint.objects.filter(pk__in=[row.pk for row in rows]).delete()
            total += len(rows)


@transaction.atomic
def checkpoint_restore(*, archive: CheckpointArchive) -> Checkpoint:
    """Resume from an archived state: it becomes the session's newest checkpoint (the archive row stays)."""
    session = Session.objects.select_for_update().get(pk=archive.session_id)
    data = archive_payload(archive)
    session.status = "active"
    session.last_activity_at = timezone.now()
    session.save(update_fields=["status", "last_activity_at"])
    return Checkpoint.objects.create(
        org_id=archive.org_id,
        session=session,
        user_id=archive.user_id,
        parent=None,
        parent_ref=archive.original_id,
        messages=data.get("messages", []),
        agent_state=data.get("agent_state", {}),
        tool_states=data.get("tool_states", {}),
        pending_tool_calls=data.get("pending_tool_calls", []),
        metadata={**data.get("metadata", {}), "restored_from": archive.original_id},
    )
