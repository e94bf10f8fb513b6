"""Pages that span the layers: the project page (members, memories, profile) and a memory's page (its
revisions, where it came from: extraction job and message, and the agent calls that used it)."""

from django.shortcuts import get_object_or_404

from checkpoints.models import Message
from memory.models import ExtractionJob, InjectionLog, MemoryRevision, Status
from memory.selectors import project_memories
from profiles.views import project_profile_context
from projects.access import can_change_memory, project_role, readable_memories
from projects.views import members_context, project_for_page
from projects.web import org_page, paginate, render_page


@org_page
def project_detail(request, slug):
    actor = request.actor
    project = project_for_page(request, slug)
    page, querystring = paginate(request, project_memories(actor=actor, project=project))
    context = {
        **members_context(request, project),
        "role": project_role(actor, project),
        "page": page,
        "rows": [(m, can_change_memory(actor, m)) for m in page.object_list],
        "querystring": querystring,
        **project_profile_context(actor, project),
    }
    return render_page(request, "projects/detail.html", context, partial="memories")


def _origin(item, actor):
    """Where the memory came from: its extraction job and the message it was said in, when known.

    Only the subject sees the message: a project memory may come from another person's conversation.
    """
    job, message = None, None
    if item.user_id != actor.user_id or not item.user_id:
        return job, message
    # The extraction pipeline records its job as source_id "extraction-job:<id>".
    job_id = (
        item.source_id.removeprefix("extraction-job:") if item.source_id.startswith("extraction-job:") else ""
    )
    if job_id.isdigit():
        job = ExtractionJob.objects.filter(org=item.org_id, pk=int(job_id), user_id=item.user_id).first()
    if item.source_message_id:
        message = (
            Message.objects.filter(org=item.org_id, message_id=item.source_message_id, user_id=item.user_id)
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


@org_page
def memory_detail(request, pk):
    item = get_object_or_404(readable_memories(request.actor).select_related("project", "created_by"), pk=pk)
    revisions = MemoryRevision.objects.filter(org=item.org_id, item_ref=item.pk).order_by("-number")
    # Only the reader's own agent calls: another person's queries are theirs.
    injections = InjectionLog.objects.filter(
        org=item.org_id, memory_ids__contains=[item.pk], user_id=request.actor.user_id
    ).order_by("-created_at")
    job, message = _origin(item, request.actor)
    inj_page, inj_qs = paginate(request, injections)
    context = {
        "item": item,
        "can_change": can_change_memory(request.actor, item),
        "revisions": revisions,
        "job": job,
        "message": message,
        "injections": inj_page,
        "querystring": inj_qs,
        "is_archived": item.status == Status.ARCHIVED,
    }
    return render_page(request, "memory/detail.html", context, partial="injections")
