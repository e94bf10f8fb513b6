"""Reads that span the layers: where a memory came from (its extraction job and the message it was said
in). Who may see it is projects.access.can_see_origin's decision."""

from __future__ import annotations

from checkpoints.selectors import messages_for, sessions_for
from memory.extraction.reconcile import JOB_SOURCE
from memory.selectors import extraction_jobs_for, feedback_given, injections_for_user, readable_memories
from projects.access import Actor, can_see_origin


def memory_origin(*, actor: Actor, item) -> tuple[object | None, object | None]:
    """(extraction job, message) of a readable memory, each None when unknown or not the actor's to see.

    The message is a Message row, or, once its session is gone, a dict taken from the job's messages.
    """
    job, message = None, None
    if not can_see_origin(actor, item):
        return job, message
    # The extraction pipeline records its job as source_id JOB_SOURCE + "<id>".
    job_id = item.source_id.removeprefix(JOB_SOURCE) if item.source_id.startswith(JOB_SOURCE) else ""
    if job_id.isdigit():
        job = extraction_jobs_for(actor).filter(pk=int(job_id), user_id=item.user_id).first()
    if item.source_message_id:
        message = (
            messages_for(actor)
            .filter(message_id=item.source_message_id, user_id=item.user_id)
            .select_related("session")
            .first()
        )
        if message is None and job is not None:
            said = [
                m
                for m in job.messages or []
                if isinstance(m, dict) and m.get("message_id") == item.source_message_id
            ]
            if said:
                message = {
                    "content": said[0].get("content", ""),
                    "role": said[0].get("role", ""),
                    "session": None,
                }
    return job, message


def my_data_summary(*, actor: Actor) -> dict:
    """What Engram keeps about the signed-in person (their own subject), as counts for the My data page."""
    user_id = actor.user_id or ""
    return {
        "memories": readable_memories(actor).filter(user_id=user_id).count(),
        "sessions": sessions_for(actor, user_id=user_id).count(),
        "injections": injections_for_user(actor=actor, user_id=user_id).count(),
        "feedback": feedback_given(actor=actor).count(),
    }


def my_sessions(*, actor: Actor):
    """The signed-in person's conversations, most recently active first."""
    return sessions_for(actor, user_id=actor.user_id or "").order_by("-last_activity_at", "-id")


def given_to_agents(*, actor: Actor):
    """What agents were handed about the signed-in person (context, search and tool calls), newest first."""
    return injections_for_user(actor=actor, user_id=actor.user_id or "").order_by("-created_at", "-id")
