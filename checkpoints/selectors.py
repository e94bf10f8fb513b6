"""Reads of sessions and checkpoints. A session belongs to its subject: an account sees its own, an org
API key sees every subject's (projects.access.require_subject decides)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from projects.access import Actor, readable_projects, require_subject

from .models import Checkpoint, CheckpointArchive, Session


def _visible(actor: Actor, session: Session) -> bool:
    try:
        require_subject(actor, session.user_id)
    except Http404:
        return False
    if actor.is_key and session.project_id is not None:
        return readable_projects(actor).filter(pk=session.project_id).exists()
    return True


def sessions_for(actor: Actor, *, user_id: str | None = None, status: str | None = None) -> QuerySet[Session]:
    """Sessions the actor may read, newest first."""
    qs = Session.objects.filter(org=actor.org)
    if not actor.is_key:
        qs = qs.filter(user_id=actor.user_id)
    else:
        restricted = readable_projects(actor).values("id")
        if actor.api_key.projects.exists():
            qs = qs.filter(project__isnull=True) | qs.filter(project__in=restricted)
    if user_id:
        qs = qs.filter(user_id=user_id)
    if status:
        qs = qs.filter(status=status)
    return qs.select_related("project")


def session_get(actor: Actor, session_id: str) -> Session:
    """One session of the actor's org that the actor may read; 404 otherwise."""
    session = Session.objects.filter(org=actor.org, session_id=session_id).select_related("project").first()
    if session is None or not _visible(actor, session):
        raise Http404("No such session.")
    return session


def session_find(actor: Actor, session_id: str) -> Session | None:
    """Like session_get, but None when the session does not exist yet (404 when it is someone else's)."""
    session = Session.objects.filter(org=actor.org, session_id=session_id).first()
    if session is not None and not _visible(actor, session):
        raise Http404("No such session.")
    return session


def checkpoint_latest(session: Session) -> Checkpoint | CheckpointArchive | None:
    """The newest live checkpoint, else (an expired session's) newest archived one."""
    latest = Checkpoint.objects.filter(session=session).order_by("-id").first()
    if latest is not None:
        return latest
    return CheckpointArchive.objects.filter(session=session).order_by("-original_id").first()


def checkpoint_get(actor: Actor, pk: int) -> Checkpoint | CheckpointArchive:
    """A live checkpoint by id, or the archived one that had this id; 404 when not the actor's."""
    row = Checkpoint.objects.filter(org=actor.org, pk=pk).select_related("session").first()
    if row is None:
        row = (
            CheckpointArchive.objects.filter(org=actor.org, original_id=pk).select_related("session").first()
        )
    if row is None or not _visible(actor, row.session):
        raise Http404("No such checkpoint.")
    return row
