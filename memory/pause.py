"""Pausing memory for a subject, or for one of its conversations ("don't remember this").

One check (`check`) sits in the services every memory write goes through: memory.services.memory_create
(a single add: REST, the agent routes, tools, MCP, the pages, the Mem0 and LangGraph surfaces), the
batch (memory.batch, per item) and the extraction job (memory.extraction.services). While a pause
applies they store nothing: a single add raises MemoryPaused, which every API surface answers with 200
and {"status": "paused", ...} (projects.api.errors.Answered); a batch reports each item "paused"; an
extraction job ends "done" with `paused` in its result. Search and context are not affected.

A pause is a setting, not data about the subject: forgetting the subject leaves it in place.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from projects.access import Actor, require_own_org, require_subject
from projects.api.errors import Answered

from .models import MemoryPause

PAUSE_LEVELS = ["subject", "session"]  # paused for the whole subject, or for one conversation
PAUSED_STATUS = ["paused"]  # the "status" of an answer that stored nothing because memory is paused


class MemoryPaused(Answered):
    """Memory is paused for this subject or session: nothing was stored (HTTP 200, status "paused")."""

    status_code = 200

    def __init__(self, user_id: str, session_id: str = "", level: str = "subject"):
        super().__init__(f"memory paused ({level})")
        self.user_id, self.session_id, self.level = user_id, session_id, level

    @property
    def message(self) -> str:
        if self.level == "session":
            return _("Memory is off for this conversation: nothing was stored.")
        return _("Memory is paused for this person: nothing was stored.")

    def body(self) -> dict:
        return {
            "status": "paused",
            "paused": self.level,
            "user_id": self.user_id,
            "session_id": self.session_id or None,
            "stored": 0,
            "message": self.message,
        }


def _pauses_q(user_id: str, session_id: str = "") -> Q:
    q = Q(user_id=user_id, session_id="")
    if session_id:
        q |= Q(user_id=user_id, session_id=session_id)
    return q


def paused(org, user_id: str, session_id: str = "") -> str | None:
    """ "subject" when memory is paused for the subject, "session" when only for this session, else None."""
    if not user_id:
        return None
    levels = set(
        MemoryPause.objects.filter(_pauses_q(user_id, session_id), org=org).values_list(
            "session_id", flat=True
        )
    )
    if "" in levels:
        return "subject"
    return "session" if levels else None


def check(org, user_id: str, session_id: str = "") -> None:
    """Raise MemoryPaused when storing a memory about this subject (in this session) is paused."""
    level = paused(org, user_id, session_id)
    if level:
        raise MemoryPaused(user_id, session_id if level == "session" else "", level)


def paused_keys(org, keys: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """For many (user_id, session_id) pairs at once (a batch): the level of each paused one."""
    users = {u for u, _ in keys if u}
    if not users:
        return {}
    rows = set(MemoryPause.objects.filter(org=org, user_id__in=users).values_list("user_id", "session_id"))
    out = {}
    for user_id, session_id in keys:
        if (user_id, "") in rows:
            out[(user_id, session_id)] = "subject"
        elif session_id and (user_id, session_id) in rows:
            out[(user_id, session_id)] = "session"
    return out


# ---- setting and clearing ---------------------------------------------------------------------------


def pause_state(*, actor: Actor, org, user_id: str) -> dict:
    """The subject's pause and its paused sessions (the subject, or an org API key)."""
    require_own_org(actor, org.pk)
    require_subject(actor, user_id)
    rows = MemoryPause.objects.filter(org=org, user_id=user_id).order_by("session_id")
    subject = next((r for r in rows if not r.session_id), None)
    return {
        "user_id": user_id,
        "paused": subject is not None,
        "paused_at": subject.created_at if subject else None,
        "sessions": [{"session_id": r.session_id, "paused_at": r.created_at} for r in rows if r.session_id],
    }


@transaction.atomic
def pause_set(*, actor: Actor, org, user_id: str, session_id: str = "") -> MemoryPause:
    """Pause memory for the subject (session_id "") or one of its sessions; setting it again changes nothing."""
    require_own_org(actor, org.pk)
    require_subject(actor, user_id, write=True)
    row, _created = MemoryPause.objects.get_or_create(
        org=org, user_id=user_id, session_id=session_id, defaults={"actor": actor.label}
    )
    return row


@transaction.atomic
def pause_clear(*, actor: Actor, org, user_id: str, session_id: str = "") -> bool:
    """Memory on again for the subject (session_id "") or one session; False when it was not paused."""
    require_own_org(actor, org.pk)
    require_subject(actor, user_id, write=True)
    deleted, _counts = MemoryPause.objects.filter(org=org, user_id=user_id, session_id=session_id).delete()
    return bool(deleted)
