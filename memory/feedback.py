"""Feedback from the people a memory is about, after an agent was given it: useful, wrong or outdated.

Every surface (the pages, POST /api/v1/memories/{id}/feedback, Mem0's /v1/feedback/) records it through
feedback_record, into one model (MemoryFeedback). Each subject's latest word on a memory counts once;
together they make MemoryItem.feedback, a number in (-1, 1) (`signal`), which search adds to a memory's
score times SEARCH_FEEDBACK_WEIGHT (memory.search.ranking.final_score): a small, bounded nudge, never
enough on its own to lift an unrelated memory over a relevant one. "Wrong" and "outdated" also invite the
person to edit, delete or supersede the memory; the feedback itself changes nothing else.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Q
from django.utils.translation import gettext as _

from core.secrets import redact
from projects.access import Actor, injection_read_q, require_read_memory, require_subject

from .models import FeedbackValue, InjectionLog, MemoryFeedback, MemoryItem, Scope

# What each word counts for in the signal.
WEIGHTS = {FeedbackValue.USEFUL: 1.0, FeedbackValue.WRONG: -1.0, FeedbackValue.OUTDATED: -1.0}
NOTE_MAX = 1000


class FeedbackRefused(ValueError):
    """The feedback cannot be recorded as given (HTTP 400); the message names the field."""


def signal(values: list[str]) -> float:
    """The subjects' latest words on a memory as one number in (-1, 1): net / (|net| + 1), where useful
    counts +1 and wrong or outdated -1. One person's "useful" is 0.5, two people's 0.67; it never reaches 1."""
    net = sum(WEIGHTS.get(v, 0.0) for v in values)
    return net / (abs(net) + 1.0)


def latest_values(memory_id: int) -> list[str]:
    """Each subject's latest feedback value on the memory."""
    rows = (
        MemoryFeedback.objects.filter(memory_id=memory_id)
        .order_by("subject", "-created_at", "-id")
        .distinct("subject")
        .values_list("value", flat=True)
    )
    return list(rows)


def refresh(memory_ids) -> None:
    """Recompute MemoryItem.feedback of these memories from their rows (after feedback or a forget)."""
    for memory_id in set(memory_ids):
        MemoryItem.objects.filter(pk=memory_id).update(feedback=signal(latest_values(memory_id)))


def feedback_subject(actor: Actor, item: MemoryItem, user_id: str | None) -> str:
    """Whose word it is: an account's own; an API key names the user (it acts for them). For a user or
    session memory only the person it is about may give it."""
    if actor.is_key or actor.is_system:
        if not user_id:
            raise FeedbackRefused(_("user_id: an API key must say whose feedback this is."))
        subject = user_id
    else:
        subject = actor.user_id or ""
        if user_id and user_id != subject:
            raise FeedbackRefused(_("user_id: you may only give your own feedback."))
    require_subject(actor, subject)
    if item.scope != Scope.PROJECT and item.user_id != subject:
        raise FeedbackRefused(_("user_id: only the person this memory is about may give feedback on it."))
    return subject


@transaction.atomic
def feedback_record(
    *,
    actor: Actor,
    item: MemoryItem,
    value: str,
    user_id: str | None = None,
    injection_id: int | None = None,
    note: str = "",
) -> MemoryFeedback:
    """Record one person's feedback on a memory they may read, optionally on one injection log entry
    (a context or search call that handed them the memory). Raises Http404 (the memory or the injection
    is not readable), PermissionDenied (a read-only key) or FeedbackRefused (400)."""
    require_read_memory(actor, item)
    if not actor.can_write:
        from django.core.exceptions import PermissionDenied

        raise PermissionDenied("This API key is read-only.")
    if value not in FeedbackValue.values:
        raise FeedbackRefused(
            _("value: %(value)s is not a valid choice. Valid values: %(valid)s.")
            % {"value": value, "valid": ", ".join(FeedbackValue.values)}
        )
    subject = feedback_subject(actor, item, user_id)
    injection = None
    if injection_id is not None:
        injection = InjectionLog.objects.filter(injection_read_q(actor), pk=injection_id).first()
        if injection is None or injection.user_id != subject or item.pk not in (injection.memory_ids or []):
            raise FeedbackRefused(
                _("injection: %(id)s is not a hand-over of this memory to %(subject)s.")
                % {"id": injection_id, "subject": subject}
            )
    note = redact((note or "").strip())
    if len(note) > NOTE_MAX:
        raise FeedbackRefused(_("note: at most %(n)s characters.") % {"n": NOTE_MAX})
    row = MemoryFeedback.objects.create(
        org=item.org,
        memory=item,
        subject=subject,
        injection=injection,
        value=value,
        note=note,
        actor=actor.label,
    )
    refresh([item.pk])
    return row


def feedback_for_memory(*, actor: Actor, item: MemoryItem):
    """The feedback rows on a memory the actor may see: an account its own; a key every subject's."""
    require_read_memory(actor, item)
    qs = MemoryFeedback.objects.filter(org=actor.org, memory=item)
    if not (actor.is_key or actor.is_system):
        qs = qs.filter(subject=actor.user_id or "")
    return qs.order_by("-created_at", "-id")


def latest_given(*, actor: Actor, memory_ids, injection_ids=None) -> dict[tuple[int, int | None], str]:
    """The actor's own latest feedback value per (memory, injection) pair, and per (memory, None) over all
    of its feedback on the memory: what the pages' buttons show as chosen."""
    if not actor.user_id:
        return {}
    qs = MemoryFeedback.objects.filter(org=actor.org, subject=actor.user_id, memory_id__in=list(memory_ids))
    if injection_ids is not None:
        qs = qs.filter(Q(injection_id__in=list(injection_ids)) | Q(injection__isnull=True))
    out: dict[tuple[int, int | None], str] = {}
    rows = qs.order_by("-created_at", "-id").values_list("memory_id", "injection_id", "value")
    for memory_id, injection_id, value in rows:
        out.setdefault((memory_id, injection_id), value)
        out.setdefault((memory_id, None), value)
    return out


def feedback_counts(org=None) -> dict[str, int]:
    """Counts per value (the staff statistics page: counts only, never which memory or whose)."""
    qs = MemoryFeedback.objects.all() if org is None else MemoryFeedback.objects.filter(org=org)
    counts = dict(qs.order_by().values("value").annotate(n=Count("id")).values_list("value", "n"))
    return {value: counts.get(value, 0) for value in FeedbackValue.values}


def forget_feedback(org, user_id: str, memory_q: Q | None = None) -> int:
    """Delete the feedback a subject gave (on memories matching memory_q, when given) and recompute the
    signal of the memories it was on. Returns how many rows went."""
    qs = MemoryFeedback.objects.filter(org=org, subject=user_id)
    if memory_q is not None:
        qs = qs.filter(memory__in=MemoryItem.objects.filter(memory_q).values("id"))
    memory_ids = list(qs.values_list("memory_id", flat=True))
    deleted, _counts = qs.delete()
    refresh(memory_ids)
    return deleted
