"""Figures for the staff statistics page: counts only, never the content of anyone's memories."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Min, Q
from django.utils import timezone

from memory.feedback import feedback_counts
from memory.models import (
    ExtractionJob,
    InjectionLog,
    JobStatus,
    MemoryFeedback,
    MemoryItem,
    MemoryPause,
    ReembedJob,
)
from projects.models import ApiKey, Organization, OrgMembership


def _grouped(qs, field: str) -> list[tuple[str, int]]:
    return list(qs.values_list(field).annotate(n=Count("id")).order_by("-n", field))


def statistics() -> dict:
    now = timezone.now()
    memories = MemoryItem.objects.all()
    jobs = ExtractionJob.objects.all()
    per_org = {
        row["org__slug"]: row
        for row in memories.values("org__slug").annotate(
            memories=Count("id"), subjects=Count("user_id", distinct=True, filter=~Q(user_id=""))
        )
    }
    orgs = []
    for org in Organization.objects.annotate(members=Count("memberships", distinct=True)).order_by("slug"):
        row = per_org.get(org.slug, {})
        org_jobs = jobs.filter(org=org)
        orgs.append(
            {
                "slug": org.slug,
                "members": org.members,
                "memories": row.get("memories", 0),
                "subjects": row.get("subjects", 0),
                "pending": org_jobs.filter(status=JobStatus.PENDING).count(),
                "failed": org_jobs.filter(status=JobStatus.FAILED).count(),
            }
        )
    oldest = jobs.filter(status=JobStatus.PENDING).aggregate(t=Min("created_at"))["t"]
    return {
        "totals": {
            "memories": memories.count(),
            "accounts": get_user_model().objects.count(),
            "memberships": OrgMembership.objects.count(),
            "subjects": memories.exclude(user_id="").values("org", "user_id").distinct().count(),
            "organizations": Organization.objects.count(),
            "active_keys": ApiKey.objects.filter(revoked_at=None).count(),
        },
        "by_type": _grouped(memories, "memory_type"),
        "by_source": _grouped(memories, "source"),
        "by_status": _grouped(memories, "status"),
        "by_scope": _grouped(memories, "scope"),
        "orgs": orgs,
        "queue": {
            "by_status": _grouped(jobs, "status"),
            "oldest_pending_minutes": int((now - oldest).total_seconds() // 60) if oldest else None,
            "failed_24h": jobs.filter(
                status=JobStatus.FAILED, created_at__gte=now - timedelta(hours=24)
            ).count(),
            "done_24h": jobs.filter(
                status=JobStatus.DONE, finished_at__gte=now - timedelta(hours=24)
            ).count(),
        },
        "reembeds": list(ReembedJob.objects.exclude(status=JobStatus.DONE).order_by("-created_at")[:10]),
        "calls_7d": _grouped(InjectionLog.objects.filter(created_at__gte=now - timedelta(days=7)), "kind"),
        # Useful / wrong / outdated from the people memories are about: counts only, never which or whose.
        "feedback": list(feedback_counts().items()),
        "feedback_7d": _grouped(
            MemoryFeedback.objects.filter(created_at__gte=now - timedelta(days=7)), "value"
        ),
        "pauses": {
            "subjects paused": MemoryPause.objects.filter(session_id="").count(),
            "conversations not remembered": MemoryPause.objects.exclude(session_id="").count(),
        },
    }
