"""My memories: list with hybrid search and filters, add, pin, edit in place, delete with undo, detail."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Max
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from projects.access import can_change_memory, projects_to_add_to, require_change_memory, visibility_hides
from projects.models import Project
from projects.views import project_for_page
from projects.web import org_page, paginate, render_page

from . import pause, services
from .drafts import MemoryDraft
from .filters import MemoryFilterSet
from .forms import (
    MemoryAddForm,
    MemoryEditForm,
    MemoryFilterForm,
    VisibilityForm,
    item_visibility_choices,
    suggested_type,
)
from .gate import GateRejection
from .models import Scope, Status
from .selectors import memory_revisions, project_memories, readable_memories

SEARCH_PROJECTS = 10  # a search on the page covers the subject and at most this many projects

TEMPLATE = "memory/list.html"


TABS = ("mine", "projects")  # the subject's own memories (user and session scope); project memories


def _tab(request) -> str:
    tab = request.GET.get("tab", "")
    if tab not in TABS:  # a link filtering on project scope opens the project tab
        tab = "projects" if request.GET.get("scope") == Scope.PROJECT else "mine"
    return tab


def _filtered(actor, form: MemoryFilterForm, tab: str):
    qs = readable_memories(actor).select_related("project", "created_by")
    qs = qs.filter(scope=Scope.PROJECT) if tab == "projects" else qs.exclude(scope=Scope.PROJECT)
    return MemoryFilterSet.apply_values(qs, form.filter_values())


def _search(actor, form: MemoryFilterForm, qs, tab: str):
    """The real hybrid search (memory.search): the subject's own memories and each readable project's,
    merged best first and limited to the rows the filters allow."""
    from .search import memory_search
    from .selectors import MemoryFilters

    data = form.cleaned_data
    values = form.filter_values()
    skills = (
        [values["skill"]]
        if values["skill"]
        else sorted(set(qs.exclude(skill="").values_list("skill", flat=True)))
    )
    common = {
        "skills": skills,
        "memory_types": values["memory_type"] or [],
        "statuses": values["status"],
        "tags": values["tags"] or [],
        "include_expired": True,
    }
    subjects = []
    if tab == "mine":
        subjects.append(MemoryFilters(user_id=actor.user_id, **common))
    else:
        project_ids = qs.filter(scope=Scope.PROJECT).values_list("project_id", flat=True).distinct()
        for project in Project.objects.filter(pk__in=project_ids[:SEARCH_PROJECTS]):
            subjects.append(MemoryFilters(project=project, **common))
    hits = []
    for filters in subjects:
        result = memory_search(
            actor=actor, query=data["q"], filters=filters, top_k=50, max_tokens=100_000, record_access=False
        )
        hits.extend(result.hits)
    hits.sort(key=lambda h: h.score, reverse=True)
    by_id = qs.in_bulk([h.id for h in hits])
    return [by_id[h.id] for h in hits if h.id in by_id]


def _rows(actor, items):
    return [(item, can_change_memory(actor, item)) for item in items]


@org_page
def memory_list(request):
    actor = request.actor
    tab = _tab(request)
    form = MemoryFilterForm(request.GET or None)
    if tab == "mine":  # the scopes of one's own memories
        form.fields["scope"].choices = [c for c in form.fields["scope"].choices if c[0] != Scope.PROJECT]
    form.is_valid()
    if not form.is_bound:
        form.cleaned_data = {"status": ""}
    qs = _filtered(actor, form, tab)
    query = form.cleaned_data.get("q", "")
    items = _search(actor, form, qs, tab) if query else qs.order_by("-pinned", "-updated_at")
    page, querystring = paginate(request, items)
    readable = readable_memories(actor).filter(status=Status.ACTIVE)
    context = {
        "tab": tab,
        "tab_counts": {
            "mine": readable.exclude(scope=Scope.PROJECT).count(),
            "projects": readable.filter(scope=Scope.PROJECT).count(),
        },
        "form": form,
        "page": page,
        "rows": _rows(actor, page.object_list),
        "querystring": querystring,
        "query": query,
        "add_form": MemoryAddForm(projects=projects_to_add_to(actor), org=actor.org),
    }
    return render_page(request, TEMPLATE, context, partial="results")


@org_page
def memory_suggest_type(request):
    """The add form's hint: the type the extraction rules read from the text typed so far."""
    content = request.GET.get("content", "")[:20000]
    context = {"suggested": suggested_type(content) if content.strip() else None}
    return render(request, "memory/add.html#type-hint", context)


@org_page
@require_POST
def memory_add(request):
    actor = request.actor
    form = MemoryAddForm(request.POST, projects=projects_to_add_to(actor), org=actor.org)
    if form.is_valid():
        data = form.cleaned_data
        project = data["project"]
        try:
            draft = MemoryDraft(
                content=data["content"],
                memory_type=data["memory_type"],
                scope=Scope.PROJECT if project else Scope.USER,
                user_id="" if project else actor.user_id,
                project=project,
                visibility=data["visibility"] if project else "members",
                tags=data["tags"],
                skill=data["skill"].strip(),
                source="user",
            )
            result = services.memory_create(
                actor=actor, org=actor.org, draft=draft, reason="added on the web page"
            )
        except GateRejection as exc:
            form.add_error("content", exc.message)
        except pause.MemoryPaused as exc:
            form.add_error("content", exc.message)
        else:
            if result.supersedes is not None:
                messages.success(
                    request,
                    _("Memory added; it replaces #%(id)s (kept as superseded, restorable).")
                    % {"id": result.supersedes},
                )
            elif result.created:
                messages.success(request, _("Memory added."))
            else:
                messages.info(
                    request,
                    _("This was already remembered (#%(id)s); merged into it.") % {"id": result.item.pk},
                )
            landing = "/memories/?tab=projects" if project else "/memories/"
            if request.htmx:
                response = HttpResponse(status=204)
                response["HX-Redirect"] = landing
                return response
            return redirect(landing)
    return render_page(
        request,
        "memory/add.html",
        {"add_form": form},
        partial="add-form",
        status=200 if request.htmx else 400,
    )


def _readable(request, pk):
    return get_object_or_404(readable_memories(request.actor).select_related("project", "created_by"), pk=pk)


def _row_response(request, item, **extra):
    # On the memory's own page the row carries no link to that page.
    on_detail = (
        request.headers.get("HX-Current-URL", "").split("?")[0].rstrip("/").endswith(f"/memories/{item.pk}")
    )
    context = {
        "item": item,
        "can_change": can_change_memory(request.actor, item),
        "on_detail": on_detail,
        **extra,
    }
    if request.htmx:
        return render_page(request, TEMPLATE, context, partial="row")
    return redirect("memory-detail", pk=item.pk)


@org_page
@require_POST
def memory_pin(request, pk):
    item = _readable(request, pk)
    require_change_memory(request.actor, item)
    item = services.memory_update(
        actor=request.actor, item=item, pinned=not item.pinned, reason="unpinned" if item.pinned else "pinned"
    )
    return _row_response(request, item)


@org_page
def memory_edit(request, pk):
    item = _readable(request, pk)
    require_change_memory(request.actor, item)
    if request.method != "POST":
        form = MemoryEditForm.for_item(item, actor=request.actor)
        return render_page(request, "memory/edit.html", {"item": item, "form": form}, partial="edit")
    form = MemoryEditForm.for_item(item, data=request.POST, actor=request.actor)
    stale = None
    ask_hide = False
    if form.is_valid():
        visibility = form.cleaned_data.get("visibility")
        if (
            visibility
            and visibility != item.visibility
            and visibility_hides(request.actor, item, visibility)
            and not form.cleaned_data["confirm_hide"]
        ):
            ask_hide = True
            form.add_error(
                "visibility",
                _("This hides the memory from you: only its author will see it. Tick the box to confirm."),
            )
    if form.is_valid():
        try:
            item = services.memory_update(
                actor=request.actor,
                item=item,
                expected_version=form.cleaned_data["version"],
                reason="edited on the web page",
                **form.changes(),
            )
        except services.StaleVersion as exc:
            # Show both versions; the next save is against the current version.
            stale = exc.current
            form = MemoryEditForm.for_item(stale, data=request.POST.copy(), actor=request.actor)
            form.data["version"] = stale.version
            form.is_valid()
        except GateRejection as exc:
            form.add_error("content", exc.message)
        else:
            if not request.htmx:
                messages.success(request, _("Saved."))
            return _row_response(request, item)
    status = 200 if request.htmx else 409 if stale else 400
    context = {
        "item": stale or item,
        "form": form,
        "stale": stale,
        "mine": request.POST.get("content", ""),
        "ask_hide": ask_hide,
    }
    return render_page(request, "memory/edit.html", context, partial="edit", status=status)


@org_page
def memory_row(request, pk):
    """One row (used by Cancel in the in-place editor)."""
    item = _readable(request, pk)
    if not request.htmx:
        return redirect("memory-detail", pk=pk)
    return _row_response(request, item)


@org_page
@require_POST
def memory_delete(request, pk):
    """Delete = archive (kept with its revisions so Undo can restore it); purge deletes for good."""
    item = _readable(request, pk)
    item = services.memory_archive(actor=request.actor, item=item, reason="deleted on the web page")
    if request.htmx:
        return render_page(request, TEMPLATE, {"item": item}, partial="deleted")
    messages.success(request, _("Memory deleted. You can undo this from its page."))
    return redirect("memory-detail", pk=item.pk)


@org_page
@require_POST
def memory_undo(request, pk):
    item = _readable(request, pk)
    if item.status == Status.ARCHIVED:
        last = memory_revisions(item=item).aggregate(n=Max("number"))["n"]
        item = services.memory_restore(actor=request.actor, item=item, number=last, reason="undo delete")
    else:
        require_change_memory(request.actor, item)
    return _row_response(request, item)


@org_page
@require_POST
def memory_restore(request, pk, number):
    item = _readable(request, pk)
    get_object_or_404(memory_revisions(item=item), number=number)
    try:
        services.memory_restore(actor=request.actor, item=item, number=number)
    except GateRejection as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Restored revision %(n)s.") % {"n": number})
    return redirect("memory-detail", pk=pk)


@org_page
@require_POST
def memory_split(request, pk, number):
    """Split what a merge revision recorded back into its own memory; on to the new memory's page."""
    item = _readable(request, pk)
    get_object_or_404(memory_revisions(item=item), number=number)
    try:
        new = services.memory_split(actor=request.actor, item=item, revision_number=number)
    except (services.SplitRefused, GateRejection) as exc:
        messages.error(request, exc.message)
        return redirect("memory-detail", pk=pk)
    messages.success(
        request,
        _("Split revision %(n)s of memory #%(from)s into its own memory.") % {"n": number, "from": pk},
    )
    return redirect("memory-detail", pk=new.pk)


@org_page
@require_POST
def memory_purge(request, pk):
    item = _readable(request, pk)
    services.memory_delete(actor=request.actor, item=item, reason="deleted for good on the web page")
    messages.success(request, _("Memory #%(id)s deleted for good.") % {"id": pk})
    return redirect("memory-list")


def project_memory_context(request, project) -> dict:
    """The project page's memory table: a page of the project's memories, each with whether the actor may
    change it and its visibility choices named for who would see it."""
    actor = request.actor
    page, querystring = paginate(request, project_memories(actor=actor, project=project))
    rows = [(m, can_change_memory(actor, m), item_visibility_choices(actor, m)) for m in page.object_list]
    return {"project": project, "page": page, "rows": rows, "querystring": querystring}


@org_page
@require_POST
def memory_visibility(request, slug, pk):
    """Change a project memory's visibility from the project page. A change that would hide the memory from
    the person making it (owner_only on someone else's memory) is asked again and done only when confirmed.
    Afterwards the whole table is sent back, so the row moves to its new group (or leaves the page)."""
    actor = request.actor
    project = project_for_page(request, slug)
    item = get_object_or_404(
        readable_memories(actor).select_related("project", "created_by", "created_by_key"),
        project=project,
        pk=pk,
    )
    form = VisibilityForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Unknown visibility."))
    visibility = form.cleaned_data["visibility"]
    require_change_memory(actor, item)
    if (
        visibility != item.visibility
        and visibility_hides(actor, item, visibility)
        and not form.cleaned_data["confirm"]
    ):
        choices = dict(item_visibility_choices(actor, item))
        context = {"m": item, "project": project, "visibility": visibility, "new_label": choices[visibility]}
        if request.htmx:
            response = render_page(request, "projects/detail.html", context, partial="confirm-visibility")
            response["HX-Retarget"] = f"#pm-{item.pk}"
            response["HX-Reswap"] = "outerHTML"
            return response
        return render(request, "projects/confirm_visibility.html", context)
    if visibility != item.visibility:
        services.memory_update(actor=actor, item=item, visibility=visibility, reason="visibility changed")
    if request.htmx:
        return render_page(
            request, "projects/detail.html", project_memory_context(request, project), partial="memories"
        )
    messages.success(request, _("Visibility changed."))
    return redirect("project-detail", slug=slug)
