"""My profile and the project profile: view, edit (through profiles.services), marks of who set each field."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from projects.access import can_edit_project_profile, readable_projects, require_edit_project_profile
from projects.web import org_page, render_page

from . import services
from .forms import LABELS, project_form, user_form
from .selectors import (
    profile_revisions,
    project_profile_dict,
    project_profile_for,
    user_profile_dict,
    user_profile_for,
)


def field_rows(form, profile):
    """(bound field, mark, source ids) where mark is 'edited' (a person set it), 'aggregated' (from
    memories) or '', and source ids are the memories an aggregated field came from."""
    edited = set(profile.edited_fields or []) if profile else set()
    sources = (profile.sources or {}) if profile else {}
    rows = []
    for name in form.names:
        if name in edited:
            mark = "edited"
        elif profile is not None and profile.aggregated_at and form.values[name]:
            mark = "aggregated"
        else:
            mark = ""
        rows.append((form[name], mark, sources.get(name, []) if mark == "aggregated" else []))
    return rows


def _save(request, form, update, profile):
    if not form.is_valid():
        return False
    clear = [n for n in request.POST.getlist("clear") if n in form.names]
    changes = form.changed()
    if not changes and not clear:
        messages.info(request, _("Nothing changed."))
        return True
    try:
        update(values=changes, clear_edited=clear)
    except (ValueError, ValidationError) as exc:
        form.add_error(None, str(exc))
        return False
    messages.success(request, _("Profile saved."))
    return True


@org_page
def my_profile(request):
    actor = request.actor
    profile = user_profile_for(actor=actor, user_id=actor.user_id)
    values = user_profile_dict(profile)
    form = user_form(request.POST or None, values=values)
    if request.method == "POST":

        def update(**kw):
            services.user_profile_update(actor=actor, org=actor.org, user_id=actor.user_id, **kw)

        if _save(request, form, update, profile):
            return redirect("profile")
    context = {
        "form": form,
        "rows": field_rows(form, profile),
        "profile": profile,
        "revisions": [
            (rev, [LABELS.get(name, name) for name in rev.changes if name != "edited_fields"])
            for rev in profile_revisions(actor=actor, user_id=actor.user_id, limit=20)
        ],
    }
    return render_page(request, "profiles/user.html", context, status=400 if form.errors else 200)


@org_page
@require_POST
def project_profile_edit(request, slug):
    actor = request.actor
    project = get_object_or_404(readable_projects(actor), slug=slug)
    require_edit_project_profile(actor, project)
    profile = project_profile_for(actor=actor, project=project)
    form = project_form(request.POST, values=project_profile_dict(profile))

    def update(**kw):
        services.project_profile_update(actor=actor, project=project, **kw)

    if not _save(request, form, update, profile):
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
    return redirect(f"/projects/{project.slug}/#profile")


def project_profile_context(actor, project):
    """Context for templates/profiles/project_profile.html inside the project page."""
    profile = project_profile_for(actor=actor, project=project)
    form = project_form(values=project_profile_dict(profile))
    return {
        "pform": form,
        "prows": field_rows(form, profile),
        "pprofile": profile,
        "can_edit_profile": can_edit_project_profile(actor, project),
    }
