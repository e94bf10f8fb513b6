"""Pages that span the layers: the project page (members, memories, profile) and a memory's page (its
revisions, where it came from: extraction job and message, and the agent calls that used it)."""

from django.shortcuts import get_object_or_404

from memory.feedback import latest_given
from memory.models import Status
from memory.revisions import changed_fields, content_diff, restore_changes_anything
from memory.selectors import (
    injection_count_for_memory,
    injections_for_memory,
    memory_revisions,
    readable_memories,
)
from memory.views import project_memory_context
from profiles.views import project_profile_context
from projects.access import can_change_memory, project_role
from projects.views import members_context, project_for_page
from projects.web import org_page, paginate, render_page

from .selectors import memory_origin


@org_page
def project_detail(request, slug):
    actor = request.actor
    project = project_for_page(request, slug)
    context = {
        **members_context(request, project),
        "role": project_role(actor, project),
        **project_memory_context(request, project),
        **project_profile_context(actor, project),
    }
    return render_page(request, "projects/detail.html", context, partial="memories")


@org_page
def memory_detail(request, pk):
    item = get_object_or_404(readable_memories(request.actor).select_related("project", "created_by"), pk=pk)
    can_change = can_change_memory(request.actor, item)
    revisions = [
        {
            "rev": rev,
            "diff": content_diff(rev.before["content"], rev.after["content"])
            if rev.before and rev.after and rev.before.get("content") != rev.after.get("content")
            else None,
            "fields": changed_fields(rev),
            "restorable": can_change and restore_changes_anything(item, rev),
        }
        for rev in memory_revisions(item=item).order_by("-number")
    ]
    # Only the reader's own agent calls: another person's queries are theirs.
    injections = injections_for_memory(actor=request.actor, item=item).order_by("-created_at")
    job, message = memory_origin(actor=request.actor, item=item)
    inj_page, inj_qs = paginate(request, injections)
    chosen = latest_given(actor=request.actor, memory_ids=[item.pk], injection_ids=[i.pk for i in inj_page])
    context = {
        # The reader's own useful / wrong / outdated on each hand-over (memory.feedback).
        "injection_rows": [(log, chosen.get((item.pk, log.pk))) for log in inj_page],
        "item": item,
        "can_change": can_change,
        "revisions": revisions,
        "injected_total": injection_count_for_memory(actor=request.actor, item=item),
        "job": job,
        "message": message,
        "injections": inj_page,
        "querystring": inj_qs,
        "is_archived": item.status == Status.ARCHIVED,
    }
    return render_page(request, "memory/detail.html", context, partial="injections")
