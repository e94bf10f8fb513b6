"""Everything stored about one subject (a user_id in an org): export, import, forget.

Export holds what the actor may read about the subject, every kind through projects.access's rules;
forget erases all of it, or, for a project-restricted key, its reach (access.forgets_everything).

Kinds covered: memories (every MemoryItem with the subject's user_id, whatever its scope) and their
revisions, the user profile and its history, sessions with messages, checkpoints and archived
checkpoints, injection logs, extraction jobs, and the subject's own embedding setting. forget() also
sweeps any other model that has an `org` foreign key and a `user_id` field (found through the app
registry), so a model added later is not left behind. The OrgMembership row (the account <-> subject
link) is not data about the subject and stays; removing the member ends it.

Export never contains secrets: the embedding setting's encrypted API key is left out, vectors too
(they are recomputed on import).
"""

from __future__ import annotations

import base64
import logging
import zlib
from datetime import date, datetime

from django.apps import apps
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction
from django.db.models import Q
from django.http import Http404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from checkpoints.models import Checkpoint, CheckpointArchive, Message, Session
from checkpoints.services import (
    PAYLOAD_DEFAULTS,
    archive_json,
    compress_payload,
    redacted_payload,
    validate_payload,
)
from core.secrets import redact, redact_json
from core.times import rfc3339
from memory import gate
from memory.drafts import MemoryDraft
from memory.feedback import forget_feedback
from memory.injections import injection_log_row
from memory.models import (
    EmbeddingConfig,
    ExtractionJob,
    InjectionLog,
    JobStatus,
    MemoryFeedback,
    MemoryItem,
    MemoryRevision,
    MemoryType,
    Scope,
    Source,
    Status,
    Visibility,
)
from memory.revisions import snapshot_out
from memory.services import memory_archive, memory_create, memory_supersede
from profiles.models import ProfileRevision, UserProfile
from profiles.selectors import USER_FIELDS
from profiles.services import profile_values_redacted
from projects.access import (
    Actor,
    checkpoint_read_q,
    embedding_config_read_q,
    extraction_job_read_q,
    forgets_everything,
    injection_read_q,
    memory_read_q,
    message_read_q,
    profile_revision_read_q,
    readable_projects,
    session_read_q,
    user_profile_read_q,
)
from projects.idempotency import idempotency_forget_subject
from projects.models import Project

from .signals import subject_forgotten

log = logging.getLogger(__name__)

EXPORT_FORMAT = "engram-subject-export"
EXPORT_VERSION = 1
# Models with a user_id that are not data about the subject (the account link itself; a pause, which
# forgetting leaves in place: memory stays off for someone who turned it off).
NOT_SUBJECT_DATA = {"projects.OrgMembership", "memory.MemoryPause"}
_SKIP_FIELDS = {"embedding", "search_tokens", "api_key_encrypted", "org"}


# ---- rows as JSON ---------------------------------------------------------------------------------


def _value(value):
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (bytes, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    return value


def row(obj: models.Model, *, skip: set[str] = frozenset()) -> dict:
    """Every concrete field of a row (foreign keys as ids), JSON-ready, without vectors or secrets. The
    project is `project` (its id), as in every API answer; other foreign keys keep their column names."""
    out = {}
    for f in obj._meta.concrete_fields:
        if f.name in _SKIP_FIELDS or f.name in skip:
            continue
        key = f.attname if f.is_relation and f.name != "project" else f.name
        out[key] = _value(getattr(obj, f.attname))
    return out


# ---- selection ------------------------------------------------------------------------------------
# Each helper selects the subject's rows of one kind; given an actor, only those the actor may read
# (projects.access decides). Export always passes the actor; forget passes it unless the actor erases
# everything about the subject (access.forgets_everything).


def _memories(org, user_id: str, actor: Actor | None = None):
    qs = MemoryItem.objects.filter(org=org, user_id=user_id)
    return qs if actor is None else qs.filter(memory_read_q(actor))


def _revisions(org, user_id: str, actor: Actor | None = None):
    ids = _memories(org, user_id, actor).values("id")
    if actor is not None:
        # The history of the memories the actor may read; a deleted memory's content-less record stays.
        return MemoryRevision.objects.filter(org=org, item_ref__in=ids)
    return MemoryRevision.objects.filter(org=org).filter(Q(user_id=user_id) | Q(item_ref__in=ids))


def _sessions(org, user_id: str, actor: Actor | None = None):
    qs = Session.objects.filter(org=org, user_id=user_id)
    return qs if actor is None else qs.filter(session_read_q(actor))


def _in_sessions(model, org, user_id: str, actor: Actor | None = None):
    qs = model.objects.filter(org=org).filter(
        Q(user_id=user_id) | Q(session__in=_sessions(org, user_id).values("id"))
    )
    # Messages and (archived) checkpoints follow their session: checkpoint_read_q is that rule too.
    read_q = message_read_q if model is Message else checkpoint_read_q
    return qs if actor is None else qs.filter(read_q(actor))


def _of_subject(model, read_q, org, user_id: str, actor: Actor | None = None):
    qs = model.objects.filter(org=org, user_id=user_id)
    return qs if actor is None else qs.filter(read_q(actor))


# ---- export ---------------------------------------------------------------------------------------


def subject_export(*, actor: Actor, org, user_id: str) -> dict:
    """What the actor may read about the subject in the org, as one JSON-ready dict: every part through
    the access module's rules (require_subject is the caller's check)."""
    slugs = dict(Project.objects.filter(org=org).values_list("id", "slug"))
    memories = []
    for item in _memories(org, user_id, actor).order_by("id"):
        data = row(item)
        data["project_slug"] = slugs.get(item.project_id)
        memories.append(data)
    sessions = []
    for session in _sessions(org, user_id, actor).order_by("id"):
        data = row(session)
        data["project_slug"] = slugs.get(session.project_id)
        data["messages"] = [row(m) for m in session.messages.order_by("id")]
        data["checkpoints"] = [row(c) for c in session.checkpoints.order_by("id")]
        data["archived_checkpoints"] = [row(a) for a in session.archived_checkpoints.order_by("id")]
        sessions.append(data)
    profile = _of_subject(UserProfile, user_profile_read_q, org, user_id, actor).first()
    config = _of_subject(EmbeddingConfig, embedding_config_read_q, org, user_id, actor).first()
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": rfc3339(timezone.now()),
        "org": org.slug,
        "user_id": user_id,
        "memories": memories,
        "memory_revisions": [
            {**row(r), "before": snapshot_out(r.before), "after": snapshot_out(r.after)}
            for r in _revisions(org, user_id, actor).order_by("id")
        ],
        "profile": row(profile) if profile else None,
        "profile_revisions": [
            row(r)
            for r in _of_subject(ProfileRevision, profile_revision_read_q, org, user_id, actor).order_by("id")
        ],
        "sessions": sessions,
        "injection_logs": [
            {**row(i), "project_slug": slugs.get(i.project_id)}
            for i in _of_subject(InjectionLog, injection_read_q, org, user_id, actor).order_by("id")
        ],
        "extraction_jobs": [
            {**row(j), "project_slug": slugs.get(j.project_id)}
            for j in _of_subject(ExtractionJob, extraction_job_read_q, org, user_id, actor).order_by("id")
        ],
        "embedding_config": row(config) if config else None,
        # Useful / wrong / outdated the subject said of memories the actor may read (ids, no content).
        "feedback": [
            row(f)
            for f in MemoryFeedback.objects.filter(
                org=org,
                subject=user_id,
                memory__in=MemoryItem.objects.filter(memory_read_q(actor)).values("id"),
            ).order_by("id")
        ],
    }


# ---- forget ---------------------------------------------------------------------------------------


def _other_subject_models() -> list[type[models.Model]]:
    """Models with an org FK and a user_id field that the explicit steps below do not cover."""
    known = {
        MemoryItem,
        MemoryRevision,
        UserProfile,
        ProfileRevision,
        Session,
        Message,
        Checkpoint,
        CheckpointArchive,
        InjectionLog,
        ExtractionJob,
        EmbeddingConfig,
    }
    out = []
    for model in apps.get_models():
        if model in known or model._meta.label in NOT_SUBJECT_DATA:
            continue
        names = {f.name for f in model._meta.concrete_fields}
        if "user_id" in names and "org" in names:
            out.append(model)
    return out


def _count(counts: dict, result: tuple[int, dict]) -> None:
    for label, n in result[1].items():
        if n:
            key = label.split(".", 1)[1]
            counts[key] = counts.get(key, 0) + n


def _subject_rows(org, user_id: str, actor: Actor | None = None) -> list[tuple[type, models.QuerySet]]:
    """(model, rows) of every kind about the subject, in the order forget deletes them."""
    return [
        # Revisions first: they outlive a plain item delete on purpose (SET_NULL), here they must go too.
        (MemoryRevision, _revisions(org, user_id, actor)),
        (MemoryItem, _memories(org, user_id, actor)),
        (Message, _in_sessions(Message, org, user_id, actor)),
        (CheckpointArchive, _in_sessions(CheckpointArchive, org, user_id, actor)),
        (Checkpoint, _in_sessions(Checkpoint, org, user_id, actor)),
        (Session, _sessions(org, user_id, actor)),
        (InjectionLog, _of_subject(InjectionLog, injection_read_q, org, user_id, actor)),
        (ExtractionJob, _of_subject(ExtractionJob, extraction_job_read_q, org, user_id, actor)),
        (ProfileRevision, _of_subject(ProfileRevision, profile_revision_read_q, org, user_id, actor)),
        (UserProfile, _of_subject(UserProfile, user_profile_read_q, org, user_id, actor)),
        (EmbeddingConfig, _of_subject(EmbeddingConfig, embedding_config_read_q, org, user_id, actor)),
    ]


@transaction.atomic
def subject_forget(*, actor: Actor, org, user_id: str) -> dict:
    """Delete the rows about the subject in the org that the actor may erase (access.forgets_everything:
    all of them, or a project-restricted key's reach), in one transaction, no cap.

    Returns {"deleted": counts per model, "left": counts per model of the rows about the subject that
    remain (empty after a whole erasure)}."""
    reach = None if forgets_everything(actor) else actor
    counts: dict[str, int] = {}
    # The feedback the subject gave (on its own memories and on project memories, which stay): the
    # signal of each memory it was on is recomputed without it.
    feedback = forget_feedback(org, user_id, None if reach is None else memory_read_q(reach))
    if feedback:
        counts["MemoryFeedback"] = feedback
    memory_ids = _memories(org, user_id, reach).values("id")
    # Others' items superseded by one of these lose the link (SET_NULL), not their content.
    MemoryItem.objects.filter(superseded_by__in=memory_ids).exclude(id__in=memory_ids).update(
        superseded_by=None
    )
    for model, rows in _subject_rows(org, user_id, reach):
        if model is Checkpoint:
            Checkpoint.objects.filter(parent__in=rows.values("id")).exclude(id__in=rows.values("id")).update(
                parent=None
            )
        _count(counts, rows.delete())
    others = _other_subject_models()
    if reach is None:
        for model in others:
            _count(counts, model.objects.filter(org=org, user_id=user_id).delete())
    # Stored answers of idempotent writes that name the subject (24-hour replays of its content) go too,
    # whatever the actor's reach: they are copies, and a retry with the key then simply writes again.
    idempotency_forget_subject(org=org, user_id=user_id)
    left = {model.__name__: rows.count() for model, rows in _subject_rows(org, user_id)}
    left.update({model.__name__: model.objects.filter(org=org, user_id=user_id).count() for model in others})
    left["MemoryFeedback"] = MemoryFeedback.objects.filter(org=org, subject=user_id).count()
    subject_forgotten.send(
        sender=None, org_id=org.pk, user_id=user_id, complete=reach is None, deleted=counts
    )
    return {"deleted": counts, "left": {name: n for name, n in left.items() if n}}


# ---- import ---------------------------------------------------------------------------------------


class ImportFormatError(Exception):
    """The file is not an export this server can read."""


def _dt(value):
    if not value:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise ImportFormatError(f"not a date-time: {str(value)[:40]!r}")
    return parsed


def _list(data: dict, key: str) -> list[dict]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ImportFormatError(f"'{key}' must be a list of objects")
    return value


def _project_resolver(actor: Actor, org):
    by_id = {p.id: p for p in readable_projects(actor)}
    by_slug = {p.slug: p for p in by_id.values()}

    def resolve(data: dict) -> Project | None:
        # Exports name the project's id `project` (older ones `project_id`); the slug wins when present.
        return by_slug.get(data.get("project_slug") or "") or (
            by_id.get(_project_ref(data)) if not data.get("project_slug") else None
        )

    return resolve


def _project_ref(data: dict):
    return data.get("project", data.get("project_id"))


def _restore_times(model, objs: list, originals: list[dict], names: list[str]) -> None:
    """bulk_create stamps auto_now_add fields with now; put the exported times back."""
    for obj, data in zip(objs, originals, strict=True):
        for name in names:
            if data.get(name):
                setattr(obj, name, _dt(data[name]))
    if objs:
        model.objects.bulk_update(objs, names, batch_size=500)


def _choice(value, choices, default):
    return value if value in {c for c, _ in choices} else default


def _archived_payload(encoded) -> bytes:
    """An exported archive payload (base64 of zlib JSON), stored again without secrets."""
    try:
        payload = archive_json(base64.b64decode(encoded or "", validate=True))
    except (ValueError, TypeError, zlib.error) as exc:
        raise ImportFormatError(f"an archived checkpoint's payload cannot be read: {exc}") from exc
    if not isinstance(payload, dict):
        raise ImportFormatError("an archived checkpoint's payload is not an object")
    _check_payload(payload, "an archived checkpoint")
    return compress_payload(redacted_payload(payload))


def _check_payload(payload: dict, which: str) -> None:
    """Refuse a checkpoint payload checkpoint_save would refuse (approving its tool calls would fail later)."""
    try:
        validate_payload(payload)
    except ValidationError as exc:
        raise ImportFormatError(f"{which}: {' '.join(exc.messages)}") from exc


@transaction.atomic
def subject_import(*, actor: Actor, org, user_id: str, data: dict) -> dict:
    """Load an export for user_id (ids remapped, memories through the gate); a report of what was taken."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ImportFormatError(f"not an {EXPORT_FORMAT} file")
    if data.get("version") != EXPORT_VERSION:
        raise ImportFormatError(f"unsupported export version {data.get('version')!r}")
    project_of = _project_resolver(actor, org)
    taken: dict[str, int] = {}
    refused: list[dict] = []
    memory_map: dict[int, int] = {}

    def take(kind: str, n: int = 1) -> None:
        taken[kind] = taken.get(kind, 0) + n

    # memories, through the gate
    later: list[tuple[MemoryItem, dict]] = []
    for entry in _list(data, "memories"):
        old_id = entry.get("id")
        scope = _choice(entry.get("scope"), Scope.choices, Scope.USER)
        project = project_of(entry) if scope == Scope.PROJECT else None
        if scope == Scope.PROJECT and project is None:
            refused.append(
                {"kind": "memory", "id": old_id, "code": "no_project", "reason": "its project is not here"}
            )
            continue
        try:
            with transaction.atomic():
                draft = MemoryDraft(
                    content=str(entry.get("content") or ""),
                    memory_type=_choice(entry.get("memory_type"), MemoryType.choices, MemoryType.FACT),
                    scope=scope,
                    user_id=user_id,
                    project=project,
                    session_id=str(entry.get("session_id") or ""),
                    agent_id=str(entry.get("agent_id") or ""),
                    skill=str(entry.get("skill") or ""),
                    source=_choice(entry.get("source"), Source.choices, Source.IMPORT),
                    source_id=str(entry.get("source_id") or ""),
                    confidence=float(entry.get("confidence", 1.0)),
                    visibility=_choice(entry.get("visibility"), Visibility.choices, Visibility.MEMBERS),
                    pinned=bool(entry.get("pinned")),
                    tags=entry.get("tags") if isinstance(entry.get("tags"), list) else [],
                    metadata=entry.get("metadata") if isinstance(entry.get("metadata"), dict) else {},
                    occurred_at=_dt(entry.get("occurred_at")),
                    valid_from=_dt(entry.get("valid_from")),
                    valid_until=_dt(entry.get("valid_until")),
                    expires_at=_dt(entry.get("expires_at")),
                )
                # The subject's own data coming back: stored even while memory is paused.
                result = memory_create(
                    actor=actor,
                    org=org,
                    draft=draft,
                    reason=f"imported (was #{old_id})",
                    dedup="hash",
                    honour_pause=False,
                )
        except gate.GateRejection as exc:
            refused.append({"kind": "memory", "id": old_id, "code": exc.code, "reason": exc.message})
            continue
        except (PermissionDenied, Http404) as exc:
            refused.append({"kind": "memory", "id": old_id, "code": "permission_denied", "reason": str(exc)})
            continue
        except (TypeError, ValueError, ValidationError) as exc:
            refused.append({"kind": "memory", "id": old_id, "code": "invalid", "reason": str(exc)[:200]})
            continue
        if isinstance(old_id, int):
            memory_map[old_id] = result.item.pk
        take("memories" if result.created else "memories_merged")
        if result.created and entry.get("status") in (Status.ARCHIVED, Status.SUPERSEDED):
            later.append((result.item, entry))
    for item, entry in later:
        successor = memory_map.get(entry.get("superseded_by_id"))
        if entry["status"] == Status.SUPERSEDED and successor:
            memory_supersede(
                actor=actor, old=item, new=MemoryItem.objects.get(pk=successor), reason="imported"
            )
        else:
            memory_archive(actor=actor, item=item, reason="imported as archived")

    # the profile and its history
    profile_data = data.get("profile")
    if isinstance(profile_data, dict):
        values = {name: profile_data[name] for name in USER_FIELDS if name in profile_data}
        from profiles.api.serializers import UserProfileInputSerializer

        checked = UserProfileInputSerializer(data=values)
        if checked.is_valid():
            edited = [f for f in profile_data.get("edited_fields") or [] if f in USER_FIELDS]
            profile, _ = UserProfile.objects.select_for_update().get_or_create(org=org, user_id=user_id)
            for name, value in profile_values_redacted(profile, checked.validated_data).items():
                setattr(profile, name, value)
            profile.edited_fields = edited
            profile.save()
            ProfileRevision.objects.create(
                org=org, user_id=user_id, actor=actor.label, changes={"imported": [None, sorted(values)]}
            )
            take("profile")
        else:
            refused.append(
                {"kind": "profile", "id": None, "code": "invalid", "reason": str(checked.errors)[:300]}
            )
    history = _list(data, "profile_revisions")
    revisions = [
        ProfileRevision(
            org=org,
            user_id=user_id,
            actor=str(h.get("actor") or "")[:255],
            changes=redact_json(h.get("changes")) if isinstance(h.get("changes"), dict) else {},
        )
        for h in history
        if not _project_ref(h)
    ]
    ProfileRevision.objects.bulk_create(revisions)
    _restore_times(ProfileRevision, revisions, [h for h in history if not _project_ref(h)], ["created_at"])
    if revisions:
        take("profile_revisions", len(revisions))

    # sessions with messages and checkpoints
    for entry in _list(data, "sessions"):
        session_id = str(entry.get("session_id") or "")
        if not session_id or Session.objects.filter(org=org, session_id=session_id).exists():
            refused.append(
                {
                    "kind": "session",
                    "id": entry.get("id"),
                    "code": "exists",
                    "reason": "this session id is taken",
                }
            )
            continue
        session = Session.objects.create(
            org=org,
            session_id=session_id[:255],
            user_id=user_id,
            project=project_of(entry),
            agent_id=redact(str(entry.get("agent_id") or ""))[:255],
            summary=redact(str(entry.get("summary") or "")),
            summarized_count=int(entry.get("summarized_count") or 0),
            status=str(entry.get("status") or "active")[:12],
        )
        _restore_times(Session, [session], [entry], ["created_at", "last_activity_at"])
        take("sessions")
        messages_data = _list(entry, "messages")
        messages = [
            Message(
                org=org,
                session=session,
                user_id=user_id,
                role=str(m.get("role") or "human")[:12],
                content=redact(str(m.get("content") or "")),
                message_id=str(m.get("message_id") or "")[:255],
            )
            for m in messages_data
        ]
        Message.objects.bulk_create(messages, batch_size=500)
        _restore_times(Message, messages, messages_data, ["created_at"])
        take("messages", len(messages))
        checkpoint_map: dict[int, int] = {}
        checkpoints_data = _list(entry, "checkpoints")
        created = []
        for c in checkpoints_data:
            payload = {name: c.get(name) or empty for name, empty in PAYLOAD_DEFAULTS.items()}
            _check_payload(payload, f"checkpoint {str(c.get('id'))[:20]}")
            checkpoint = Checkpoint.objects.create(
                org=org,
                session=session,
                user_id=user_id,
                parent_id=checkpoint_map.get(c.get("parent_id")),
                **redacted_payload(payload),
            )
            checkpoint_map[c.get("id")] = checkpoint.pk
            created.append(checkpoint)
        _restore_times(Checkpoint, created, checkpoints_data, ["created_at"])
        take("checkpoints", len(created))
        archives_data = _list(entry, "archived_checkpoints")
        archives = [
            CheckpointArchive(
                org=org,
                session=session,
                user_id=user_id,
                original_id=int(a.get("original_id") or 0),
                parent_id_ref=checkpoint_map.get(a.get("parent_id_ref"), a.get("parent_id_ref")),
                payload=_archived_payload(a.get("payload")),
                created_at=_dt(a.get("created_at")) or timezone.now(),
            )
            for a in archives_data
        ]
        CheckpointArchive.objects.bulk_create(archives)
        _restore_times(CheckpointArchive, archives, archives_data, ["archived_at"])
        take("archived_checkpoints", len(archives))

    # what was injected when, and the extraction history
    logs_data = _list(data, "injection_logs")
    logs = [
        injection_log_row(
            org=org,
            user_id=user_id,
            project=project_of(i),
            session_id=str(i.get("session_id") or "")[:255],
            kind=str(i.get("kind") or "context")[:12],
            query=str(i.get("query") or ""),
            caller=str(i.get("caller") or "")[:255],
            memory_ids=[memory_map[m] for m in i.get("memory_ids") or [] if m in memory_map],
        )
        for i in logs_data
    ]
    InjectionLog.objects.bulk_create(logs, batch_size=500)
    _restore_times(InjectionLog, logs, logs_data, ["created_at"])
    if logs:
        take("injection_logs", len(logs))
    jobs_data = _list(data, "extraction_jobs")
    jobs = []
    for j in jobs_data:
        status = _choice(j.get("status"), JobStatus.choices, JobStatus.DONE)
        pending = status in (JobStatus.PENDING, JobStatus.PROCESSING)
        jobs.append(
            ExtractionJob(
                org=org,
                user_id=user_id,
                project=project_of(j),
                session_id=str(j.get("session_id") or "")[:255],
                agent_id=redact(str(j.get("agent_id") or ""))[:255],
                messages=redact_json(j.get("messages") or []),
                # An imported queue entry is history: it is not run again.
                status=JobStatus.FAILED if pending else status,
                attempts=int(j.get("attempts") or 0),
                error="imported before it ran; not re-run" if pending else redact(str(j.get("error") or "")),
                method=str(j.get("method") or "")[:12],
                result=redact_json(j.get("result") or {}),
                started_at=_dt(j.get("started_at")),
                finished_at=_dt(j.get("finished_at")),
            )
        )
    ExtractionJob.objects.bulk_create(jobs, batch_size=500)
    _restore_times(ExtractionJob, jobs, jobs_data, ["created_at"])
    if jobs:
        take("extraction_jobs", len(jobs))
    return {
        "user_id": user_id,
        "taken": taken,
        "refused": refused,
        "memory_ids": {str(k): v for k, v in memory_map.items()},
    }
