"""Pages: home, org switch, projects and their members and roles, API keys.

The project page itself (members, memories, profile) is composed in workspace.views."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from . import services
from .access import (
    account_membership,
    account_memberships,
    can_act_as_owner,
    has_project_perm,
    project_role,
    readable_api_keys,
    readable_memberships,
    readable_projects,
    require_org_admin,
    require_project,
    role_table,
)
from .api.errors import is_api_path
from .forms import ApiKeyForm, MemberAddForm, ProjectForm, RoleForm
from .models import ProjectRole
from .web import org_page, paginate, render_page

# The rows of the roles panel, in order (the keys of access.role_table's rows).
ROLE_ABILITIES = [
    ("read", gettext_lazy("Read memories")),
    ("create", gettext_lazy("Add memories")),
    ("change_own", gettext_lazy("Edit and delete their own")),
    ("change_any", gettext_lazy("Edit and delete anyone's")),
    ("manage_members", gettext_lazy("Manage members")),
    ("owner_acts", gettext_lazy("Grant Owner, delete the project")),
]


def roles_panel() -> dict:
    """What each role may do, read off access.role_table: one row per ability, one column per role."""
    table = role_table()
    return {
        "panel_roles": [role for role, _abilities in table],
        "panel_rows": [
            (label, [(role, abilities[key]) for role, abilities in table]) for key, label in ROLE_ABILITIES
        ],
    }


@login_required
def home(request):
    memberships = account_memberships(request.user)
    return render(request, "home.html", {"memberships": memberships})


@login_required
@require_POST
def switch_org(request):
    org_id = request.POST.get("org", "")
    if org_id.isdigit() and account_membership(request.user, int(org_id)) is not None:
        request.session["org_id"] = int(org_id)
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}
    ) or not target.startswith("/"):
        return redirect("home")
    # One org's memory or project is not in the other: land on the section's list page.
    section = target.strip("/").split("/")[0]
    return redirect(f"/{section}/" if section else "/")


def _wants_json(request) -> bool:
    return is_api_path(request.path)


def not_found(request, exception=None):
    if _wants_json(request):
        return JsonResponse({"error": {"code": "not_found", "message": "Not found."}}, status=404)
    return render(request, "404.html", status=404)


def forbidden(request, exception=None):
    if _wants_json(request):
        message = str(exception) if exception and str(exception) else "Forbidden."
        return JsonResponse({"error": {"code": "forbidden", "message": message}}, status=403)
    return render(request, "403.html", {"reason": str(exception or "")}, status=403)


def server_error(request):
    if _wants_json(request):
        return JsonResponse({"error": {"code": "server_error", "message": "Internal error."}}, status=500)
    return render(request, "500.html", status=500)


# ---- projects -----------------------------------------------------------------------------------


@org_page
def project_list(request):
    actor = request.actor
    projects = readable_projects(actor).order_by("name")
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(actor=actor, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error("slug", exc.message_dict.get("slug", exc.messages))
        else:
            messages.success(request, _("Project created."))
            return redirect("project-detail", slug=project.slug)
    page, querystring = paginate(request, projects)
    rows = [(p, project_role(actor, p)) for p in page.object_list]
    return render(
        request, "projects/list.html", {"page": page, "rows": rows, "querystring": querystring, "form": form}
    )


def project_for_page(request, slug):
    """The project of a page: 404 for one the actor cannot see."""
    project = get_object_or_404(readable_projects(request.actor), slug=slug)
    require_project(request.actor, project)
    return project


def members_context(request, project, form=None, errors=None):
    actor = request.actor
    role = project_role(actor, project)
    members = list(
        readable_memberships(actor)
        .filter(project=project)
        .select_related("account")
        .order_by("account__username")
    )
    owners = [m.pk for m in members if m.role == ProjectRole.OWNER]
    return {
        "project": project,
        "members": members,
        "can_manage": has_project_perm(actor, project, "manage_members"),
        "may_grant_owner": can_act_as_owner(actor, role),
        "member_form": form or MemberAddForm(),
        "role_form": RoleForm(),
        "member_errors": errors or {},
        **roles_panel(),
        # The sole Owner gets no Remove button (the service refuses it anyway).
        "sole_owner_id": owners[0] if len(owners) == 1 else None,
    }


def _members_response(request, project, form=None, errors=None, status=200):
    context = members_context(request, project, form=form, errors=errors)
    if request.htmx:
        return render_page(request, "projects/detail.html", context, partial="members", status=status)
    if errors or (form and form.errors):
        for message in [
            *(errors or {}).values(),
            *[e for errs in (form.errors.values() if form else []) for e in errs],
        ]:
            messages.error(request, message)
    return redirect("project-detail", slug=project.slug)


@org_page
@require_POST
def member_add(request, slug):
    project = project_for_page(request, slug)
    require_project(request.actor, project, "manage_members")
    form = MemberAddForm(request.POST)
    if form.is_valid():
        account = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
        try:
            if account is None:
                raise ValidationError({"account": _("No such account in this organization.")})
            services.project_member_add(
                actor=request.actor, project=project, account=account, role=form.cleaned_data["role"]
            )
        except ValidationError as exc:
            for message in exc.messages:
                form.add_error("username", message)
        else:
            form = None
    return _members_response(request, project, form=form)


def _membership(request, slug, pk):
    project = project_for_page(request, slug)
    require_project(request.actor, project, "manage_members")
    return project, get_object_or_404(readable_memberships(request.actor), project=project, pk=pk)


@org_page
@require_POST
def member_role(request, slug, pk):
    project, membership = _membership(request, slug, pk)
    form = RoleForm(request.POST)
    errors = {}
    if form.is_valid():
        try:
            services.project_member_change_role(
                actor=request.actor, membership=membership, role=form.cleaned_data["role"]
            )
        except ValidationError as exc:
            errors[membership.pk] = " ".join(exc.messages)
    else:
        errors[membership.pk] = _("Choose a role.")
    return _members_response(request, project, errors=errors)


@org_page
@require_POST
def member_remove(request, slug, pk):
    project, membership = _membership(request, slug, pk)
    errors = {}
    try:
        services.project_member_remove(actor=request.actor, membership=membership)
    except ValidationError as exc:
        errors[membership.pk] = " ".join(exc.messages)
    return _members_response(request, project, errors=errors)


# ---- API keys -----------------------------------------------------------------------------------


@org_page
def key_list(request):
    actor = request.actor
    require_org_admin(actor)
    projects = list(readable_projects(actor).order_by("name"))
    form = ApiKeyForm(request.POST or None, projects=projects)
    secret = None
    if request.method == "POST" and form.is_valid():
        key, secret = services.api_key_create(
            org=actor.org,
            name=form.cleaned_data["name"],
            read_only=form.cleaned_data["read_only"],
            projects=form.cleaned_data["projects"],
            created_by=request.user,
            actor=actor,
        )
        form = ApiKeyForm(projects=projects)
    keys = readable_api_keys(actor).prefetch_related("projects").order_by("revoked_at", "-created_at")
    page, querystring = paginate(request, keys)
    context = {"page": page, "querystring": querystring, "form": form, "secret": secret}
    if secret:  # the quickstart snippets, filled in with this server's address and the new key
        context.update(org=actor.org, base_url=request.build_absolute_uri("/").rstrip("/"))
    response = render(request, "keys/list.html", context)
    if secret:
        response["Cache-Control"] = "no-store"
    return response


@org_page
@require_POST
def key_revoke(request, pk):
    actor = request.actor
    require_org_admin(actor)
    key = get_object_or_404(readable_api_keys(actor), pk=pk)
    services.api_key_revoke(actor=actor, key=key)
    messages.success(request, _("Key %(prefix)s revoked.") % {"prefix": key.prefix})
    return redirect("key-list")
