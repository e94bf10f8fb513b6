"""Reads of the audit log: the events an org owner or admin may see, newest first."""

from __future__ import annotations

from django.db.models import QuerySet

from projects.access import Actor, audit_read_q, require_audit_reader

from .models import AuditEvent


def audit_events(actor: Actor) -> QuerySet[AuditEvent]:
    """The org's events (403 for anyone but its owners and admins)."""
    require_audit_reader(actor)
    return (
        AuditEvent.objects.filter(audit_read_q(actor))
        .select_related("project")
        .order_by("-created_at", "-id")
    )
