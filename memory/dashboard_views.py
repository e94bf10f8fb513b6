"""Queue (extraction jobs, re-embedding progress) and usage charts. Counts only; no other person's content."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from projects.access import is_subject, require_change_extraction_job
from projects.web import org_page, paginate, render_page

from .models import JobStatus, MemoryType, Source
from .selectors import extraction_jobs_for, reembed_jobs_for, usage_injections, usage_memories

DAYS = 30
PALETTE = [
    "#3556d8",
    "#1e8e3e",
    "#e37400",
    "#9334e6",
    "#d93025",
    "#12b5cb",
    "#f9ab00",
    "#5f6368",
    "#a142f4",
    "#24c1e0",
    "#ff6d01",
]


# Fixed colours where the meaning is fixed (a failed job is red everywhere).
KEY_COLORS = {
    "pending": "#98a2b3",
    "processing": "#e37400",
    "done": "#1e8e3e",
    "failed": "#d93025",
    "search": "#3556d8",
    "injection": "#1e8e3e",
}


def _color(keys, key):
    return KEY_COLORS.get(key) or PALETTE[keys.index(key) % len(PALETTE)]


def queue_health(jobs) -> dict:
    now = timezone.now()
    counts = {s.value: 0 for s in JobStatus}
    counts.update(dict(jobs.values_list("status").annotate(n=Count("id")).values_list("status", "n")))
    oldest = (
        jobs.filter(status=JobStatus.PENDING)
        .order_by("created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    return {
        "counts": counts,
        "oldest_pending_minutes": int((now - oldest).total_seconds() // 60) if oldest else None,
        "failed_24h": jobs.filter(status=JobStatus.FAILED, created_at__gte=now - timedelta(hours=24)).count(),
    }


def job_counts(job) -> dict:
    """What a job added / merged / superseded / rejected, from its result row."""
    result = job.result or {}
    out = {}
    for key in ("added", "merged", "updated", "superseded", "withdrawn", "skipped", "rejected", "deferred"):
        value = result.get(key)
        if value is not None and (value or key not in ("deferred", "withdrawn")):
            out[key] = len(value) if isinstance(value, list | dict) else value
    return out


def deferred_waiting(actor, jobs) -> list[dict]:
    """Candidates held back (the session's cap, or wording the rules were not sure of: code "unsure") that nobody
    accepted yet, of jobs about the actor themself (another person's conversation text is not shown)."""
    from .extraction.services import deferred_open

    out = []
    for job in jobs:
        if not is_subject(actor, job.user_id):
            continue
        for index, entry in enumerate((job.result or {}).get("deferred") or []):
            if deferred_open(entry):
                out.append({**entry, "job": job, "index": index})
    return out


@org_page
def queue(request):
    actor = request.actor
    jobs = extraction_jobs_for(actor)
    status = request.GET.get("status", "")
    listed = jobs.filter(status=status) if status in JobStatus.values else jobs
    page, querystring = paginate(request, listed.order_by("-created_at", "-id"))
    reembeds = list(reembed_jobs_for(actor)[:5])
    context = {
        "page": page,
        "rows": [(job, job_counts(job)) for job in page.object_list],
        "deferred": deferred_waiting(actor, page.object_list),
        "querystring": querystring,
        "status": status,
        "statuses": JobStatus.values,
        "health": queue_health(jobs),
        "reembeds": reembeds,
        "reembed_running": any(r.status in (JobStatus.PENDING, JobStatus.PROCESSING) for r in reembeds),
    }
    partial = "reembed" if request.GET.get("part") == "reembed" else "jobs"
    return render_page(request, "memory/queue.html", context, partial=partial)


@org_page
def queue_job(request, pk):
    job = get_object_or_404(extraction_jobs_for(request.actor), pk=pk)
    own = is_subject(request.actor, job.user_id)  # the messages are shown to the job's subject only
    deferred = [
        {"index": i, **entry} for i, entry in enumerate((job.result or {}).get("deferred") or []) if own
    ]
    context = {"job": job, "counts": job_counts(job), "own": own, "deferred": deferred}
    return render_page(request, "memory/job.html", context)


@org_page
@require_POST
def queue_retry(request, pk):
    job = get_object_or_404(extraction_jobs_for(request.actor), pk=pk)
    require_change_extraction_job(request.actor, job)
    if job.status != JobStatus.FAILED:
        messages.info(request, _("Only failed jobs can be retried."))
        return redirect("queue")
    from .extraction.services import extraction_job_retry

    extraction_job_retry(job=job)
    messages.success(request, _("Job #%(id)s is queued again.") % {"id": job.pk})
    return redirect(request.POST.get("next") or "queue")


@org_page
@require_POST
def queue_deferred_accept(request, pk):
    """One click: write a candidate the session's cap deferred."""
    job = get_object_or_404(extraction_jobs_for(request.actor), pk=pk)
    require_change_extraction_job(request.actor, job)
    from .extraction.services import DeferredError, extraction_job_accept_deferred

    try:
        index = int(request.POST.get("index", ""))
    except ValueError:
        index = -1
    try:
        _job, accepted = extraction_job_accept_deferred(job=job, index=index, actor=request.actor)
    except DeferredError as exc:
        messages.info(
            request,
            _("No such deferred candidate.")
            if exc.status == 404
            else _("This candidate was taken back later in the conversation.")
            if exc.withdrawn
            else _("This candidate was already accepted."),
        )
    else:
        if accepted["kind"] == "rejected":
            messages.info(
                request, _("The gate refused it: %(reason)s") % {"reason": accepted.get("reason", "")}
            )
        else:
            messages.success(request, _("Accepted: memory #%(id)s.") % {"id": accepted["id"]})
    return redirect(request.POST.get("next") or "queue")


# ---- usage ------------------------------------------------------------------------------------------


def _days(today, n=DAYS):
    return [today - timedelta(days=i) for i in range(n - 1, -1, -1)]


def stacked_chart(rows, keys, days, *, width=600, height=160):
    """Hand-made SVG bars: rows are (day, key, count); returns bars with stacked segments and a legend."""
    table = {(day, key): n for day, key, n in rows}
    totals = [sum(table.get((d, k), 0) for k in keys) for d in days]
    peak = max(totals + [1])
    step = width / len(days)
    bars = []
    for i, day in enumerate(days):
        y = height
        segments = []
        for key in keys:
            n = table.get((day, key), 0)
            if not n:
                continue
            h = n / peak * (height - 10)
            y -= h
            segments.append(
                {"y": round(y, 1), "h": round(h, 1), "color": _color(keys, key), "key": key, "n": n}
            )
        bars.append(
            {
                "x": round(i * step + 1, 1),
                "w": round(max(step - 2, 1), 1),
                "day": day,
                "total": totals[i],
                "segments": segments,
            }
        )
    used = [k for k in keys if any(table.get((d, k)) for d in days)]
    legend = [
        {
            "key": k,
            "color": _color(keys, k),
            "n": sum(table.get((d, k), 0) for d in days),
        }
        for k in used
    ]
    return {
        "bars": bars,
        "legend": legend,
        "peak": peak,
        "width": width,
        "height": height,
        "total": sum(totals),
        "first": days[0],
        "last": days[-1],
    }


@org_page
def usage(request):
    actor = request.actor
    today = timezone.localdate()
    days = _days(today)
    since = timezone.now() - timedelta(days=DAYS)
    # Org owners and admins see the organization's figures; others what they may read themselves.
    memories = usage_memories(actor)
    recent = memories.filter(created_at__gte=since).annotate(day=TruncDate("created_at"))
    by_type = recent.values_list("day", "memory_type").annotate(n=Count("id")).order_by()
    by_source = recent.values_list("day", "source").annotate(n=Count("id")).order_by()
    logs = usage_injections(actor).filter(created_at__gte=since)
    by_kind = (
        logs.annotate(day=TruncDate("created_at"))
        .values_list("day", "kind")
        .annotate(n=Count("id"))
        .order_by()
    )
    calls = [(day, "search" if kind == "search" else "injection", n) for day, kind, n in by_kind]
    merged = {}
    for day, key, n in calls:
        merged[(day, key)] = merged.get((day, key), 0) + n
    jobs = extraction_jobs_for(actor)
    context = {
        "by_type": stacked_chart(list(by_type), [t.value for t in MemoryType], days),
        "by_source": stacked_chart(list(by_source), [s.value for s in Source], days),
        "calls": stacked_chart([(d, k, n) for (d, k), n in merged.items()], ["search", "injection"], days),
        "jobs_chart": stacked_chart(
            list(
                jobs.filter(created_at__gte=since)
                .annotate(day=TruncDate("created_at"))
                .values_list("day", "status")
                .annotate(n=Count("id"))
                .order_by()
            ),
            JobStatus.values,
            days,
        ),
        "health": queue_health(jobs),
        "totals": {
            "active": memories.filter(status="active").count(),
            "pinned": memories.filter(status="active", pinned=True).count(),
            "all": memories.count(),
        },
        "org_wide": actor.is_org_admin,
        "days": DAYS,
    }
    return render_page(request, "memory/usage.html", context)
