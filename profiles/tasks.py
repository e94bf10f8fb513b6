"""Debounced profile rebuilds: a burst of memory changes leads to one rebuild per subject.

profile_rebuild_schedule() sets a Redis key with cache.add(); only the caller that created the key
enqueues the task (with a countdown). The task deletes the key before it reads the memories, so a
change made while it runs schedules the next rebuild and nothing is missed. If a task is lost, the
key expires and the next change schedules again.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

log = logging.getLogger(__name__)


def debounce_seconds() -> int:
    return int(getattr(settings, "PROFILE_REBUILD_DEBOUNCE_SECONDS", 30))


def _key(org_id: int, user_id: str | None, project_id: int | None) -> str:
    return f"engram:profile-rebuild:{org_id}:" + (f"p:{project_id}" if project_id else f"u:{user_id}")


def profile_rebuild_schedule(
    *, org_id: int, user_id: str | None = None, project_id: int | None = None
) -> bool:
    """Enqueue one rebuild unless one is already waiting; True when this call enqueued it."""
    if not user_id and not project_id:
        return False
    delay = debounce_seconds()
    try:
        if not cache.add(_key(org_id, user_id, project_id), "1", timeout=delay + 300):
            return False
        profile_rebuild.apply_async(
            kwargs={"org_id": org_id, "user_id": user_id or "", "project_id": project_id}, countdown=delay
        )
    except Exception as exc:  # noqa: BLE001 - a broker hiccup must not fail a memory write
        log.warning("could not schedule a profile rebuild: %s", type(exc).__name__)
        return False
    return True


def profiles_follow_memories(sender, *, org_id: int, items=(), user_id: str = "", **kwargs) -> None:
    """Receiver of memory.signals.memories_changed: schedule the affected profiles' rebuilds after commit."""
    if user_id:
        profile_rebuild_for_subject(org_id=org_id, user_id=user_id)
    profile_rebuild_for_items(items)


def profile_rebuild_on_commit(item) -> None:
    """Rebuild the profile a changed memory belongs to, after commit."""
    if item.scope == "project" and item.project_id:
        kwargs = {"org_id": item.org_id, "project_id": item.project_id}
    elif item.scope == "user" and item.user_id and not item.skill:
        kwargs = {"org_id": item.org_id, "user_id": item.user_id}
    else:
        return
    transaction.on_commit(lambda: profile_rebuild_schedule(**kwargs))


def profile_rebuild_for_items(items) -> None:
    """The same for many items written at once (batch create): one scheduling per subject."""
    seen = set()
    for item in items:
        key = (item.scope, item.user_id, item.project_id, bool(item.skill))
        if key not in seen:
            seen.add(key)
            profile_rebuild_on_commit(item)


def profile_rebuild_for_subject(*, org_id: int, user_id: str) -> None:
    """After a subject's memories were removed in bulk (delete-all)."""
    transaction.on_commit(lambda: profile_rebuild_schedule(org_id=org_id, user_id=user_id))


@shared_task(acks_late=True)
def profile_rebuild(*, org_id: int, user_id: str = "", project_id: int | None = None) -> dict | None:
    """Rebuild one profile; exits quietly if the org or project is gone."""
    from projects.models import Organization, Project

    from .aggregation import project_profile_rebuild, user_profile_rebuild

    cache.delete(_key(org_id, user_id, project_id))
    if project_id:
        project = Project.objects.filter(pk=project_id, org_id=org_id).select_related("org").first()
        if project is None:
            return None
        _, changes = project_profile_rebuild(project=project)
    else:
        org = Organization.objects.filter(pk=org_id).first()
        if org is None or not user_id:
            return None
        _, changes = user_profile_rebuild(org=org, user_id=user_id)
    return {"changed": sorted(changes)}
