"""Reads that span the layers: where a memory came from (its extraction job and the message it was said
in). Who may see it is projects.access.can_see_origin's decision."""

from __future__ import annotations

from checkpoints.selectors import messages_for
from memory.selectors import extraction_jobs_for
from projects.access import Actor, can_see_origin


def memory_origin(*, actor: Actor, item) -> tuple[object | None, object | None]:
    """(extraction job, message) of a readable memory, each None when unknown or not the actor's to see.

    The message is a Message row, or, once its session is gone, a dict taken from the job's messages.
    """
    job, message = None, None
    if not can_see_origin(actor, item):
        return job, message
    # The extraction pipeline records its job as source_id "extraction-job:<id>".
    job_id = (
        item.source_id.removeprefix("extraction-job:") if item.source_id.startswith("extraction-job:") else ""
    )
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
