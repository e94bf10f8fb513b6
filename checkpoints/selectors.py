"""Reads of sessions, their messages and checkpoints. A session belongs to its subject: an account sees
its own, an org API key every subject's (projects.access.session_read_q and friends decide)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from projects.access import Actor, checkpoint_read_q, message_read_q, org_q, session_read_q

from .models import Checkpoint, CheckpointArchive, Message, Session


def sessions_for(actor: Actor, *, user_id: str | None = None, status: str | None = None) -> QuerySet[Session]:
    """Sessions the actor may read, newest first."""
    qs = Session.objects.filter(session_read_q(actor))
    if user_id:
        qs = qs.filter(user_id=user_id)
    if status:
        qs = qs.filter(status=status)
    return qs.select_related("project")


def session_get(actor: Actor, session_id: str) -> Session:
    """One session that the actor may read; 404 otherwise."""
    session = sessions_for(actor).filter(session_id=session_id).first()
    if session is None:
        raise Http404("No such session.")
    return session


def session_find(actor: Actor, session_id: str) -> Session | None:
    """Like session_get, but None when the session does not exist yet (404 when it is someone else's)."""
    sessions = Session.objects.filter(org_q(actor), session_id=session_id)
    session = sessions.filter(session_read_q(actor)).first()
    if session is None and sessions.exists():
        raise Http404("No such session.")
    return session


def messages_for(actor: Actor) -> QuerySet[Message]:
    """Messages of the sessions the actor may read."""
    return Message.objects.filter(message_read_q(actor))


def checkpoint_latest(session: Session) -> Checkpoint | CheckpointArchive | None:
    """The newest live checkpoint, else (an expired session's) newest archived one."""
    latest = Checkpoint.objects.filter(session=session).order_by("-id").first()
    if latest is not None:
        return latest
    return CheckpointArchive.objects.filter(session=session).order_by("-original_id").first()


def checkpoint_get(actor: Actor, pk: int) -> Checkpoint | CheckpointArchive:
    """A live checkpoint by id, or the archived one that had this id; 404 when not the actor's."""
    row = Checkpoint.objects.filter(checkpoint_read_q(actor), pk=pk).select_related("session").first()
    if row is None:
        archived = CheckpointArchive.objects.filter(checkpoint_read_q(actor), original_id=pk)
        row = archived.select_related("session").first()
    if row is None:
        raise Http404("No such checkpoint.")
    return row
