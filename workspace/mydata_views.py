"""The signed-in person's control over what Engram keeps about them: the My data page (export, forget
everything, pause memory for themself or one conversation), what agents were given (the context page),
and feedback on a memory an agent was given (useful / wrong / outdated, with edit, delete or supersede)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from audit import services as audit
from core.times import rfc3339
from memory import services
from memory.drafts import MemoryDraft
from memory.feedback import FeedbackRefused, feedback_record, latest_given
from memory.gate import GateRejection
from memory.models import FeedbackValue, Status
from memory.pause import MemoryPaused, pause_clear, pause_set, pause_state
from memory.selectors import readable_memories
from projects.access import can_change_memory, require_change_memory, require_forget_subject, require_subject
from projects.web import org_page, paginate, render_page

from .selectors import given_to_agents, my_data_summary, my_sessions
from .subjects import subject_export, subject_forget

# The kinds a forget counts (workspace.subjects), as a person reads them.
KIND_LABELS = {
    "MemoryItem": gettext_lazy("Memories"),
    "MemoryRevision": gettext_lazy("Memory revisions"),
    "MemoryFeedback": gettext_lazy("Feedback you gave"),
    "Session": gettext_lazy("Conversations"),
    "Message": gettext_lazy("Messages"),
    "Checkpoint": gettext_lazy("Checkpoints"),
    "CheckpointArchive": gettext_lazy("Archived checkpoints"),
    "InjectionLog": gettext_lazy("Records of what agents were given"),
    "ExtractionJob": gettext_lazy("Extraction jobs"),
    "UserProfile": gettext_lazy("Profile"),
    "ProfileRevision": gettext_lazy("Profile changes"),
    "EmbeddingConfig": gettext_lazy("Embedding setting"),
}
RECEIPT = "engram_forget_receipt"


def _back(request, fallback: str) -> str:
    """The page to return to (a `next` on this site), else the fallback."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return fallback


# ---- My data ------------------------------------------------------------------------------------------


@org_page
def my_data(request):
    actor = request.actor
    user_id = actor.user_id or ""
    state = pause_state(actor=actor, org=actor.org, user_id=user_id)
    off = {s["session_id"]: s["paused_at"] for s in state["sessions"]}
    page, querystring = paginate(request, my_sessions(actor=actor), per_page=10)
    known = {s.session_id for s in page.object_list}
    context = {
        "summary": my_data_summary(actor=actor),
        "pause": state,
        "sessions": [(s, s.session_id in off) for s in page.object_list],
        # Conversations switched off before they began (no session yet).
        "upcoming": [sid for sid in off if sid not in known and page.number == 1],
        "page": page,
        "querystring": querystring,
        "user_id": user_id,
        "forget_error": None,
    }
    return render_page(request, "workspace/my_data.html", context)


@org_page
def my_data_export(request):
    """Everything the person may read about themself, as a JSON download (the export service)."""
    actor = request.actor
    require_subject(actor, actor.user_id or "")
    with transaction.atomic():
        data = subject_export(actor=actor, org=actor.org, user_id=actor.user_id)
        audit.record(actor, audit.Action.SUBJECT_EXPORT, subject=actor.user_id, details=audit.sizes(data))
    response = HttpResponse(
        json.dumps(data, ensure_ascii=False, indent=2), content_type="application/json; charset=utf-8"
    )
    stamp = timezone.now().strftime("%Y%m%d")
    response["Content-Disposition"] = (
        f'attachment; filename="engram-{actor.org.slug}-{actor.user_id}-{stamp}.json"'
    )
    return response


@org_page
@require_POST
def my_data_pause(request):
    """Pause memory for the person (or turn it back on); `session_id` does the same for one conversation."""
    actor = request.actor
    user_id = actor.user_id or ""
    session_id = request.POST.get("session_id", "").strip()[:255]
    if request.POST.get("paused") == "1":
        pause_set(actor=actor, org=actor.org, user_id=user_id, session_id=session_id)
        if session_id:
            messages.success(
                request, _("Memory is off for this conversation: nothing said in it is remembered.")
            )
        else:
            messages.success(
                request,
                _("Memory is paused: agents can still use what they know, but nothing new is stored."),
            )
    else:
        pause_clear(actor=actor, org=actor.org, user_id=user_id, session_id=session_id)
        if session_id:
            messages.success(request, _("Memory is on again for this conversation."))
        else:
            messages.success(request, _("Memory is on again."))
    return redirect(_back(request, "/my-data/"))


@org_page
@require_POST
def my_data_forget(request):
    """Forget everything about the person, after they typed their name (the forget service)."""
    actor = request.actor
    user_id = actor.user_id or ""
    if request.POST.get("confirm", "").strip() != user_id:
        messages.error(
            request,
            _("Nothing was deleted: type %(name)s exactly to confirm.") % {"name": user_id},
        )
        return redirect("/my-data/#forget")
    require_forget_subject(actor, user_id)
    with transaction.atomic():
        result = subject_forget(actor=actor, org=actor.org, user_id=user_id)
        audit.subject_forgotten(actor, user_id, details={"deleted": result["deleted"]})
    request.session[RECEIPT] = {
        "user_id": user_id,
        "deleted": result["deleted"],
        "left": result["left"],
        "at": rfc3339(timezone.now()),
    }
    return redirect("my-data-forgotten")


@org_page
def my_data_forgotten(request):
    """The receipt of a forget: what was deleted, per kind."""
    receipt = request.session.get(RECEIPT)
    if not receipt or receipt.get("user_id") != request.actor.user_id:
        return redirect("my-data")
    rows = sorted(
        ((str(KIND_LABELS.get(kind, kind)), n) for kind, n in receipt["deleted"].items() if n),
        key=lambda row: -row[1],
    )
    context = {
        "receipt": receipt,
        "forgotten_at": parse_datetime(receipt["at"]),
        "rows": rows,
        "total": sum(n for _, n in rows),
        "left": [(str(KIND_LABELS.get(kind, kind)), n) for kind, n in receipt.get("left", {}).items() if n],
        "pause": pause_state(actor=request.actor, org=request.actor.org, user_id=request.actor.user_id or ""),
    }
    return render_page(request, "workspace/forgotten.html", context)


# ---- what agents were given, and feedback -------------------------------------------------------------


def feedback_context(actor, pairs: list[tuple[object, int | None]]) -> dict:
    """The actor's latest feedback per (memory, injection) for the pages' buttons."""
    memory_ids = {m.pk for m, _ in pairs}
    injection_ids = {i for _, i in pairs if i is not None}
    return latest_given(actor=actor, memory_ids=memory_ids, injection_ids=injection_ids)


@org_page
def given(request):
    """The context page: each hand-over to an agent about the person, with the memories it carried and
    useful / wrong / outdated on each."""
    actor = request.actor
    page, querystring = paginate(request, given_to_agents(actor=actor), per_page=10)
    ids = {pk for log in page.object_list for pk in (log.memory_ids or [])}
    memories = {
        m.pk: m for m in readable_memories(actor).filter(pk__in=ids).defer("embedding", "search_tokens")
    }
    chosen = latest_given(actor=actor, memory_ids=ids, injection_ids=[log.pk for log in page.object_list])
    entries = []
    for log in page.object_list:
        rows = []
        for pk in log.memory_ids or []:
            item = memories.get(pk)
            rows.append(
                {
                    "pk": pk,
                    "item": item,
                    "current": chosen.get((pk, log.pk)) if item else None,
                    "can_change": bool(item) and can_change_memory(actor, item),
                }
            )
        entries.append((log, rows))
    context = {"page": page, "entries": entries, "querystring": querystring}
    return render_page(request, "workspace/given.html", context)


def _feedback_fragment(request, item, injection_id, current, note=""):
    context = {
        "memory": item,
        "injection_id": injection_id,
        "current": current,
        "can_change": can_change_memory(request.actor, item),
        "next": _back(request, f"/memories/{item.pk}/"),
        "note": note,
    }
    return render_page(request, "workspace/_feedback.html", context, partial="feedback")


@org_page
@require_POST
def memory_feedback(request, pk):
    """Useful / wrong / outdated on a memory (optionally on one hand-over of it)."""
    actor = request.actor
    item = get_object_or_404(readable_memories(actor).defer("embedding", "search_tokens"), pk=pk)
    value = request.POST.get("value", "")
    raw = request.POST.get("injection", "")
    injection_id = int(raw) if raw.isdigit() else None
    try:
        feedback_record(actor=actor, item=item, value=value, injection_id=injection_id)
    except FeedbackRefused as exc:
        if request.htmx:
            return HttpResponse(str(exc), status=400)
        messages.error(request, str(exc))
        return redirect(_back(request, f"/memories/{pk}/"))
    thanks = {
        FeedbackValue.USEFUL: _("Thanks: agents will prefer it a little."),
        FeedbackValue.WRONG: _("Thanks: agents will lean on it less. Fix it or delete it now?"),
        FeedbackValue.OUTDATED: _(
            "Thanks: what is true now? Replace it and the old one is kept as superseded."
        ),
    }[value]
    if request.htmx:
        return _feedback_fragment(request, item, injection_id, value, note=thanks)
    messages.success(request, thanks)
    return redirect(_back(request, f"/memories/{pk}/"))


@org_page
@require_POST
def memory_supersede(request, pk):
    """An outdated memory replaced by what is true now: a new memory of the same kind, the old one
    superseded (kept, restorable)."""
    actor = request.actor
    old = get_object_or_404(readable_memories(actor).select_related("project"), pk=pk)
    require_change_memory(actor, old)
    content = request.POST.get("content", "").strip()
    back = _back(request, f"/memories/{pk}/")
    if not content:
        messages.error(request, _("Write what is true now to replace it."))
        return redirect(back)
    draft = MemoryDraft(
        content=content,
        memory_type=old.memory_type,
        scope=old.scope,
        user_id=old.user_id,
        project=old.project,
        session_id=old.session_id,
        agent_id=old.agent_id,
        skill=old.skill,
        visibility=old.visibility,
        tags=list(old.tags or []),
        source="user",
    )
    try:
        with transaction.atomic():
            result = services.memory_create(
                actor=actor, org=actor.org, draft=draft, reason="replaces an outdated memory"
            )
            new = result.item
            if new.pk == old.pk:
                messages.info(request, _("That is what the memory says already."))
                return redirect(back)
            old.refresh_from_db(fields=["status", "superseded_by"])
            if old.status == Status.ACTIVE:
                services.memory_supersede(
                    actor=actor, old=old, new=new, reason=f"outdated; replaced by #{new.pk}"
                )
    except GateRejection as exc:
        messages.error(request, exc.message)
        return redirect(back)
    except MemoryPaused as exc:
        messages.error(request, exc.message)
        return redirect(back)
    messages.success(
        request, _("Replaced: #%(old)s is kept as superseded by #%(new)s.") % {"old": old.pk, "new": new.pk}
    )
    return redirect("memory-detail", pk=new.pk)
