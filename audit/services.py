"""audit.record: the one writer of the audit log, called by the services (and by the few views whose
service takes no actor) inside their transaction, so an event exists exactly when the change does."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac

from django.conf import settings
from django.db import transaction

from projects.access import Actor, system_actor

from .models import Action, ActorKind, AuditEvent, TargetType

__all__ = [
    "Action",
    "count_by",
    "field_names",
    "quiet",
    "record",
    "sizes",
    "subject_forgotten",
    "subject_hash",
]

DETAIL_TEXT_MAX = 64  # a field name, a role, a provider: anything longer is content and has no place here

_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("engram_audit_quiet", default=False)


@contextlib.contextmanager
def quiet():
    """Per-memory events are left out inside (an import records one event with counts instead)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


def subject_hash(org_id: int, user_id: str) -> str:
    """A keyed hash of (org, subject id): finds a forgotten subject's events without naming them."""
    if not user_id:
        return ""
    key = hashlib.sha256(("engram-audit-subject:" + settings.SECRET_KEY).encode()).digest()
    return hmac.new(key, f"{org_id}:{user_id}".encode(), hashlib.sha256).hexdigest()


def count_by(rows, attribute: str) -> dict[str, int]:
    """How many rows have each value of an attribute (a batch's created / duplicate / rejected)."""
    counts: dict[str, int] = {}
    for row in rows:
        value = str(getattr(row, attribute))
        counts[value] = counts.get(value, 0) + 1
    return counts


def sizes(data: dict) -> dict[str, int]:
    """The number of rows of each list in a dict (an export's memories, sessions...), not the rows."""
    return {str(key): len(value) for key, value in data.items() if isinstance(value, list)}


def field_names(data: dict, **extra) -> dict:
    """A configuration change as the names of the fields given (never their values), plus flags."""
    return {"fields": sorted(str(key) for key in data), **extra}


def _check_value(value, where: str):
    if isinstance(value, str):
        if len(value) > DETAIL_TEXT_MAX:
            raise ValueError(f"audit details[{where}]: text over {DETAIL_TEXT_MAX} characters is not allowed")
    elif isinstance(value, list | tuple):
        for part in value:
            if isinstance(part, list | tuple | dict):
                raise ValueError(f"audit details[{where}]: only flat lists")
            _check_value(part, where)
    elif isinstance(value, dict):
        for key, part in value.items():
            _check_value(str(key), where)
            _check_value(part, f"{where}.{key}")
    elif value is not None and not isinstance(value, int | float | bool):
        raise ValueError(f"audit details[{where}]: {type(value).__name__} is not allowed")


TARGET_TYPES = {
    "memory.memoryitem": TargetType.MEMORY,
    "projects.project": TargetType.PROJECT,
    "projects.projectmembership": TargetType.MEMBERSHIP,
    "projects.apikey": TargetType.API_KEY,
    "profiles.userprofile": TargetType.USER_PROFILE,
    "profiles.projectprofile": TargetType.PROJECT_PROFILE,
    "checkpoints.session": TargetType.SESSION,
    "webhooks.webhookendpoint": TargetType.WEBHOOK,
}


def _target(target) -> tuple[str, str]:
    if target is None:
        return "", ""
    return TARGET_TYPES[target._meta.label_lower], str(target.pk)


def _actor_fields(actor: Actor) -> dict:
    if actor.api_key is not None:
        key = actor.api_key
        return {
            "actor_kind": ActorKind.KEY,
            "actor_key": key,
            "actor_label": f"{key.prefix} ({key.name})"[:200],
        }
    if actor.account is not None:
        return {
            "actor_kind": ActorKind.ACCOUNT,
            "actor_account": actor.account,
            "actor_label": actor.account.get_username(),
        }
    return {"actor_kind": ActorKind.SYSTEM, "actor_label": "system"}


def record(
    actor: Actor | None,
    action: str,
    *,
    org=None,
    target=None,
    project=None,
    subject: str = "",
    details: dict | None = None,
) -> AuditEvent | None:
    """Append one event. actor None is the system acting for `org` (commands). target: a model instance
    or a (type, id) pair; project: a Project or its id; details: names, counts and flags only."""
    action = Action(action)
    if _quiet.get() and action.value.startswith("memory.") and action != Action.MEMORY_BATCH:
        return None
    actor = actor if actor is not None else system_actor(org)
    details = dict(details or {})
    _check_value(details, "details")
    target_type, target_id = _target(target)
    return AuditEvent.objects.create(
        org=actor.org,
        action=action,
        target_type=target_type,
        target_id=target_id[:64],
        project_id=getattr(project, "pk", project),
        subject_id=subject or "",
        subject_hash=subject_hash(actor.org.pk, subject),
        ip=actor.ip or None,
        user_agent=actor.user_agent,
        details=details,
        **_actor_fields(actor),
    )


@transaction.atomic
def subject_forgotten(actor: Actor, user_id: str, *, details: dict | None = None) -> AuditEvent | None:
    """Record a forget and take the subject's id out of the org's earlier events (their hash stays)."""
    event = record(actor, Action.SUBJECT_FORGET, subject=user_id, details=details)
    AuditEvent.objects.forget_subject(org=actor.org, user_id=user_id)
    return event
