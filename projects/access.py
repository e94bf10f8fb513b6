"""The one place that decides who may read, create, change and delete what.

An actor is an account acting in one org (through its OrgMembership) or an org API key.
Selectors, services and views ask this module; none re-implements its rules.

Rules (seed 000's role table):
- Project roles: Owner and Admin do everything; Editor reads all, creates, and edits or deletes
  only what it created; Viewer reads. Org owners and admins act as project Admin everywhere.
  A read-write API key acts as Admin on the projects it may reach, a read-only key as Viewer.
- Memory visibility (project scope): public — every member of the org; members — the project's
  members; owner_only — only its creator.
- User and session scope: only the subject (the account whose membership user_id matches), or an
  org API key acting for that subject. The same subject rule covers sessions, their messages and
  checkpoints (a project-restricted key also needs the session's project), injection logs and user
  profiles; extraction jobs too, except that org owners and admins see the org's.
- Project profiles and memberships follow their project; API keys are for org owners and admins.
- Outsiders get 404 (Http404), members with too low a role get 403 (PermissionDenied).

Each kind has a `*_read_q(actor, prefix="")` filter (plain Q objects: this module imports no model of
the apps above it) that the kind's selectors build their querysets from, and `can_*` / `require_*`
checks for writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.signals import m2m_changed
from django.http import Http404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from guardian.core import ObjectPermissionChecker

from .models import ApiKey, Organization, OrgMembership, Project, ProjectMembership, ProjectRole

ROLE_NAMES = {
    ProjectRole.OWNER: gettext_lazy("Owner"),
    ProjectRole.ADMIN: gettext_lazy("Admin"),
    ProjectRole.EDITOR: gettext_lazy("Editor"),
    ProjectRole.VIEWER: gettext_lazy("Viewer"),
}
ROLE_RANK = {ProjectRole.VIEWER: 1, ProjectRole.EDITOR: 2, ProjectRole.ADMIN: 3, ProjectRole.OWNER: 4}

# Guardian permissions granted per project role; the membership service is their only writer.
ROLE_PERMS = {
    ProjectRole.VIEWER: {"read_memories"},
    ProjectRole.EDITOR: {"read_memories", "create_memories"},
    ProjectRole.ADMIN: {"read_memories", "create_memories", "change_any_memory", "manage_members"},
    ProjectRole.OWNER: {"read_memories", "create_memories", "change_any_memory", "manage_members"},
}


@dataclass
class Actor:
    """Who is asking: an account with its org membership, an API key, or the system (system_actor)."""

    org: Organization
    account: object | None = None
    membership: OrgMembership | None = None
    api_key: ApiKey | None = None
    is_system: bool = False
    # The system acting for someone (an extraction job's sender) reads only what they may read; with
    # shared_only, no memory private to anyone (owner_only). Either way it writes as the system.
    reads_as: Actor | None = None
    shared_only: bool = False
    ip: str = ""  # where the request came from (projects.origin), for the audit log; "" outside a request
    user_agent: str = ""
    _checker: ObjectPermissionChecker | None = field(default=None, repr=False)

    @property
    def is_key(self) -> bool:
        return self.api_key is not None

    @property
    def user_id(self) -> str | None:
        """The memory subject this actor is (None for keys: they act for any subject)."""
        return self.membership.user_id if self.membership else None

    @property
    def is_org_admin(self) -> bool:
        return self.is_system or bool(self.membership and self.membership.is_org_admin)

    @property
    def can_write(self) -> bool:
        return not (self.api_key and self.api_key.read_only)

    @property
    def label(self) -> str:
        if self.is_system:
            return "system"
        if self.api_key:
            return f"key:{self.api_key.prefix}"
        return f"account:{getattr(self.account, 'username', '?')}"

    def checker(self) -> ObjectPermissionChecker:
        if self._checker is None:
            self._checker = ObjectPermissionChecker(self.account)
        return self._checker


def actor_for_account(account, org: Organization) -> Actor | None:
    membership = OrgMembership.objects.filter(org=org, account=account).select_related("org").first()
    if membership is None:
        return None
    return Actor(org=org, account=account, membership=membership)


def actor_for_key(key: ApiKey) -> Actor:
    return Actor(org=key.org, api_key=key)


def account_memberships(account) -> QuerySet[OrgMembership]:
    """The account's org memberships, oldest first: the orgs it may act in (no other org exists for it)."""
    return OrgMembership.objects.filter(account=account).select_related("org").order_by("id")


def account_membership(account, org_id: int) -> OrgMembership | None:
    """The account's membership in the org with this id, or None when it is not a member."""
    return account_memberships(account).filter(org_id=org_id).first()


def account_membership_by_ref(account, ref: str) -> OrgMembership | None:
    """The account's membership in the org an API caller names by slug or id, or None."""
    return account_memberships(account).filter(org__slug=ref).first() or (
        account_membership(account, int(ref)) if ref.isdigit() else None
    )


def org_q(actor: Actor, prefix: str = "") -> Q:
    """Rows of the actor's org: what exists for it at all (a row of another org is simply not there)."""
    return Q(**{f"{prefix}org": actor.org})


# ---- projects -----------------------------------------------------------------------------------


def key_project_ids(key: ApiKey) -> list[int] | None:
    """The projects a key is restricted to, or None when it may reach all of its org's.

    Remembered on the key object (one per request) until its projects change (m2m_changed below)."""
    if "_engram_project_ids" not in key.__dict__:
        key.__dict__["_engram_project_ids"] = list(key.projects.values_list("id", flat=True))
    return list(key.__dict__["_engram_project_ids"]) or None


def restricted_project_ids(actor: Actor) -> list[int] | None:
    """The projects an API key actor is restricted to; None for a key that reaches all and for everyone else."""
    return key_project_ids(actor.api_key) if actor.is_key else None


def _forget_key_projects(sender, instance, **kwargs) -> None:
    instance.__dict__.pop("_engram_project_ids", None)


m2m_changed.connect(_forget_key_projects, sender=ApiKey.projects.through, dispatch_uid="engram-key-projects")


def readable_projects(actor: Actor) -> QuerySet[Project]:
    """Projects the actor can see at all (anything else is a 404 to them)."""
    qs = Project.objects.filter(org=actor.org)
    if actor.is_key:
        ids = key_project_ids(actor.api_key)
        return qs if ids is None else qs.filter(id__in=ids)
    if actor.is_org_admin:
        return qs
    # The membership's own org too: every table the filter reads is limited to the org (docs/scaling.md).
    return qs.filter(memberships__account=actor.account, memberships__org=actor.org)


def project_by_ref(actor: Actor, ref: str | None) -> Project | None:
    """The project an API caller names by id or slug (None when not named); 404 when out of reach."""
    if not ref:
        return None
    qs = readable_projects(actor)
    project = qs.filter(pk=int(ref)).first() if str(ref).isdigit() else qs.filter(slug=ref).first()
    if project is None:
        raise Http404("No such project.")
    return project


def project_role(actor: Actor, project: Project) -> str | None:
    """The actor's effective role in the project, or None for an outsider."""
    if project.org_id != actor.org.id:
        return None
    if actor.is_key:
        ids = key_project_ids(actor.api_key)
        if ids is not None and project.id not in ids:
            return None
        return ProjectRole.VIEWER if actor.api_key.read_only else ProjectRole.ADMIN
    row = (
        ProjectMembership.objects.filter(project=project, account=actor.account)
        .values_list("role", flat=True)
        .first()
    )
    if actor.is_org_admin:
        return row if row == ProjectRole.OWNER else ProjectRole.ADMIN
    return row


def has_project_perm(actor: Actor, project: Project, perm: str) -> bool:
    """Per-object check: guardian for accounts (kept in sync by the membership service)."""
    role = project_role(actor, project)
    if role is None:
        return False
    if perm not in ROLE_PERMS[role]:
        return False  # also stops guardian's "a superuser has every permission" from outranking the role
    if actor.is_key or actor.is_org_admin:
        return True
    return actor.checker().has_perm(perm, project)


def require_project(actor: Actor, project: Project | None, perm: str = "read_memories") -> str:
    """Return the actor's role, or raise 404 (outsider) / 403 (role too low)."""
    if project is None:
        raise Http404("No such project.")
    role = project_role(actor, project)
    if role is None:
        raise Http404("No such project.")
    if perm != "read_memories":
        if not actor.can_write:
            raise PermissionDenied(_("This API key is read-only."))
        if not has_project_perm(actor, project, perm):
            raise PermissionDenied(
                _("Your role (%(role)s) may not do this in project %(project)s.")
                % {"role": ROLE_NAMES.get(role, role), "project": project.slug}
            )
    return role


def can_act_as_owner(actor: Actor, role: str | None) -> bool:
    """Owner-only acts (delete the project; grant, take or remove the Owner role), given the actor's role
    in the project: its Owner, or an org owner or admin."""
    return role == ProjectRole.OWNER or actor.is_org_admin


def require_org_admin(actor: Actor) -> None:
    """Org-level administration (API keys, org settings)."""
    if actor.is_key:
        raise PermissionDenied(_("API keys cannot administer the organization."))
    if not actor.is_org_admin:
        raise PermissionDenied(_("Only organization owners and admins may do this."))


def embedding_config_subject(actor: Actor, level: str, *, write: bool = False) -> str:
    """Whose embedding settings the actor may read and change: the org's (user_id "", level "org": owners
    and admins) or its own subject's (level "user"). Keys may do neither (403). Setting a provider for
    oneself (write=True) sends one's memories to an endpoint of one's choosing: org owners and admins may;
    a member only when the org allows it (Organization.members_set_embedding) and it holds Editor or
    higher in some project; a Viewer never. Removing one's own setting is always allowed."""
    if actor.is_key:
        raise PermissionDenied(_("API keys cannot change embedding settings."))
    if level == "org":
        require_org_admin(actor)
        return ""
    if write and not can_set_own_embedding(actor):
        raise PermissionDenied(
            _(
                "Only organization owners and admins may choose their own embedding provider"
                " (or editors, when the organization allows it)."
            )
        )
    return actor.user_id


def can_set_own_embedding(actor: Actor) -> bool:
    if actor.is_key:
        return False
    if actor.is_org_admin:
        return True
    if not actor.org.members_set_embedding:
        return False
    writer_roles = [r for r, perms in ROLE_PERMS.items() if "create_memories" in perms]
    return ProjectMembership.objects.filter(
        org=actor.org, account=actor.account, role__in=writer_roles
    ).exists()


def projects_to_add_to(actor: Actor) -> list[Project]:
    """Projects the actor may add memories to, by name (the choices of the add form)."""
    return [
        p for p in readable_projects(actor).order_by("name") if has_project_perm(actor, p, "create_memories")
    ]


def membership_read_q(actor: Actor, prefix: str = "") -> Q:
    """Project memberships the actor may list: those of every project it can see."""
    return org_q(actor, prefix) & Q(**{f"{prefix}project__in": readable_projects(actor).values("id")})


def readable_memberships(actor: Actor) -> QuerySet[ProjectMembership]:
    return ProjectMembership.objects.filter(membership_read_q(actor))


def api_key_read_q(actor: Actor, prefix: str = "") -> Q:
    """The org's API keys. They exist for its members (another org's key is a 404), but only org owners
    and admins may list, read or revoke them: the views call require_org_admin (403) as well."""
    return org_q(actor, prefix)


def readable_api_keys(actor: Actor) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(api_key_read_q(actor))


def audit_read_q(actor: Actor, prefix: str = "") -> Q:
    """Audit events: the org's, for its owners and admins only (require_audit_reader: 403 for the rest)."""
    return org_q(actor, prefix)


def require_audit_reader(actor: Actor) -> None:
    """The audit log is read by org owners and admins (accounts); members and API keys get 403."""
    require_org_admin(actor)


# ---- webhooks -----------------------------------------------------------------------------------
# An endpoint sends events to a URL of its manager's choosing: org owners and admins manage the org's
# (org-wide and per project), a project's Admins and Owners those of their project. API keys never (as
# with embedding settings, a key could otherwise send the org's events anywhere).

WEBHOOK_ROLES = (ProjectRole.ADMIN, ProjectRole.OWNER)


def webhook_read_q(actor: Actor, prefix: str = "") -> Q:
    """Webhook endpoints the actor may see and manage (require_manage_webhooks still says 403 or 404)."""
    if actor.is_key:
        return Q(pk__in=[])
    if actor.is_org_admin:
        return org_q(actor, prefix)
    administered = ProjectMembership.objects.filter(
        org=actor.org, account=actor.account, role__in=WEBHOOK_ROLES
    ).values("project_id")
    return org_q(actor, prefix) & Q(**{f"{prefix}project__in": administered})


def can_manage_webhooks(actor: Actor, project: Project | None = None) -> bool:
    """The org's endpoints (project None) for org owners and admins; a project's also for its Admins."""
    if actor.is_key:
        return False
    if project is None:
        return actor.is_org_admin
    return project_role(actor, project) in WEBHOOK_ROLES


def can_use_webhooks(actor: Actor) -> bool:
    """Whether the webhooks page and list are the actor's at all: an org admin or some project's Admin."""
    if actor.is_key:
        return False
    return (
        actor.is_org_admin
        or ProjectMembership.objects.filter(
            org=actor.org, account=actor.account, role__in=WEBHOOK_ROLES
        ).exists()
    )


def require_manage_webhooks(actor: Actor, project: Project | None = None) -> None:
    """403 unless the actor may manage endpoints of the org (project None) or of this project."""
    if actor.is_key:
        raise PermissionDenied(_("API keys cannot manage webhooks."))
    if not can_manage_webhooks(actor, project):
        if project is None:
            raise PermissionDenied(
                _("Only organization owners and admins may manage the organization's webhooks.")
            )
        raise PermissionDenied(_("Only the project's admins may manage its webhooks."))


def webhook_receives(endpoint_project_id: int | None, *, project_id: int | None, shared: bool) -> bool:
    """Whether an endpoint gets an event: an org-wide one every event of its org; a project's endpoint
    only events of its project that its managers could read there (shared: a project-scope memory not
    private to its creator, or a job of the project), never a subject's private ones."""
    if endpoint_project_id is None:
        return True
    return shared and project_id == endpoint_project_id


# ---- subjects: sessions, messages, checkpoints, jobs, injection logs, profiles --------------------


def subject_rows_q(actor: Actor, prefix: str = "") -> Q:
    """Rows about one subject (a user_id column) the actor may read: an account its own subject's, an
    org API key every subject's of its org."""
    if actor.is_key:
        return org_q(actor, prefix)
    return org_q(actor, prefix) & Q(**{f"{prefix}user_id": actor.user_id})


def is_subject(actor: Actor, user_id: str) -> bool:
    """The actor is this subject itself (an account whose user_id it is; a key never is)."""
    return bool(user_id) and user_id == actor.user_id


def key_reach_q(actor: Actor, prefix: str = "") -> Q:
    """Rows that may belong to a project (a `project` column): a key restricted to some projects reaches
    only those of no project or of one of its projects; every other actor is not narrowed here (Q())."""
    ids = restricted_project_ids(actor)
    if ids is None:
        return Q()
    return Q(**{f"{prefix}project__isnull": True}) | Q(**{f"{prefix}project__in": ids})


def is_project_restricted(actor: Actor) -> bool:
    """The actor is an API key restricted to some of its org's projects."""
    return restricted_project_ids(actor) is not None


def session_read_q(actor: Actor, prefix: str = "") -> Q:
    """Sessions the actor may read: its subject's; a key's every subject's, except that a key restricted
    to some projects reaches only sessions of no project or of one of those."""
    return subject_rows_q(actor, prefix) & key_reach_q(actor, prefix)


def message_read_q(actor: Actor, prefix: str = "") -> Q:
    """Messages of the sessions the actor may read."""
    return org_q(actor, prefix) & session_read_q(actor, f"{prefix}session__")


def checkpoint_read_q(actor: Actor, prefix: str = "") -> Q:
    """Checkpoints, live or archived, of the sessions the actor may read."""
    return org_q(actor, prefix) & session_read_q(actor, f"{prefix}session__")


def require_change_session(actor: Actor, session) -> None:
    """Deleting a readable session or deciding / restoring its checkpoints: its subject, or a read-write key."""
    require_subject(actor, session.user_id, write=True)


def extraction_job_read_q(actor: Actor, prefix: str = "") -> Q:
    """Extraction jobs the actor may see: those about itself; the org's for its owners and admins and
    for keys (a project-restricted key: those of no project or of its projects)."""
    if actor.is_key or actor.is_org_admin:
        return org_q(actor, prefix) & key_reach_q(actor, prefix)
    return subject_rows_q(actor, prefix)


def require_change_extraction_job(actor: Actor, job) -> None:
    """Retrying a job the actor can see: anyone but a read-only key."""
    if not actor.can_write:
        raise PermissionDenied(_("This API key is read-only."))


def reembed_job_read_q(actor: Actor, prefix: str = "") -> Q:
    """Re-embed jobs (progress counts only): every member and key of the org sees the org's."""
    return org_q(actor, prefix)


def injection_read_q(actor: Actor, prefix: str = "") -> Q:
    """Injection logs (what was handed to agents, with their queries): an account sees those about
    itself, even an org admin (another person's queries are theirs); a key every subject's (a
    project-restricted key: those of no project or of its projects)."""
    return subject_rows_q(actor, prefix) & key_reach_q(actor, prefix)


def can_see_origin(actor: Actor, item) -> bool:
    """Where a memory came from (its extraction job, the message it was said in) is shown only to its
    subject: a project memory may come from another person's conversation."""
    return is_subject(actor, item.user_id)


def user_profile_read_q(actor: Actor, prefix: str = "") -> Q:
    """User profiles: the subject's own; a key every subject's (require_subject says 404 for one)."""
    return subject_rows_q(actor, prefix)


def project_profile_read_q(actor: Actor, prefix: str = "") -> Q:
    """Project profiles of the projects the actor can see."""
    return org_q(actor, prefix) & Q(**{f"{prefix}project__in": readable_projects(actor).values("id")})


def profile_revision_read_q(actor: Actor, prefix: str = "") -> Q:
    """The history of the user profiles and project profiles the actor may read."""
    user = Q(**{f"{prefix}project__isnull": True}) & user_profile_read_q(actor, prefix)
    return user | project_profile_read_q(actor, prefix)


def can_edit_project_profile(actor: Actor, project: Project) -> bool:
    """Editors and up edit a project's profile."""
    return has_project_perm(actor, project, "create_memories")


def require_edit_project_profile(actor: Actor, project: Project | None) -> None:
    """404 for an outsider, 403 below Editor (or for a read-only key)."""
    require_project(actor, project, "create_memories")


# ---- memories -----------------------------------------------------------------------------------


def subject_q(actor: Actor, prefix: str = "") -> Q:
    """Rows about a subject (user or session scope) this actor may read."""
    if actor.is_key or actor.is_system:
        return Q(**{f"{prefix}scope__in": ["user", "session"]})
    return Q(**{f"{prefix}scope__in": ["user", "session"], f"{prefix}user_id": actor.user_id})


# Sessions live in an app above this module (checkpoints): the rule below asks their table in SQL.
_SESSIONS_OF_OTHER_PROJECTS = (
    'SELECT "session_id" FROM "checkpoints_session" '
    'WHERE "org_id" = %s AND "project_id" IS NOT NULL AND NOT ("project_id" = ANY(%s))'
)


def _session_out_of_reach(actor: Actor, session_id: str) -> bool:
    """A project-restricted key and a session of a project it does not reach (what it could not read)."""
    ids = restricted_project_ids(actor)
    if ids is None:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            f'{_SESSIONS_OF_OTHER_PROJECTS} AND "session_id" = %s LIMIT 1', [actor.org.pk, ids, session_id]
        )
        return cursor.fetchone() is not None


def key_session_memories_q(actor: Actor, prefix: str = "") -> Q:
    """A session-scope memory follows its session: a project-restricted key reads none of a session in a
    project it does not reach (session_read_q); Q() for every other actor."""
    ids = restricted_project_ids(actor)
    if ids is None:
        return Q()
    other_sessions = RawSQL(_SESSIONS_OF_OTHER_PROJECTS, (actor.org.pk, ids))
    return ~Q(**{f"{prefix}scope": "session"}) | ~Q(**{f"{prefix}session_id__in": other_sessions})


def memory_read_q(actor: Actor, prefix: str = "") -> Q:
    """The filter of every memory the actor may read; it includes org=actor.org itself."""
    p = prefix
    project_ids = readable_projects(actor).values("id")
    in_org = Q(**{f"{p}org": actor.org})
    if actor.is_system:
        if actor.reads_as is not None:
            return in_org & memory_read_q(actor.reads_as, prefix)
        if actor.shared_only:
            return in_org & ~Q(**{f"{p}scope": "project", f"{p}visibility": "owner_only"})
        return in_org
    if actor.is_key:
        shared = Q(**{f"{p}scope": "project", f"{p}project__in": project_ids}) & Q(
            **{f"{p}visibility__in": ["public", "members"]}
        )
        own = Q(
            **{
                f"{p}scope": "project",
                f"{p}project__in": project_ids,
                f"{p}visibility": "owner_only",
                f"{p}created_by_key": actor.api_key,
            }
        )
        return in_org & key_session_memories_q(actor, p) & (subject_q(actor, p) | shared | own)
    public = Q(**{f"{p}scope": "project", f"{p}visibility": "public"})
    members = Q(**{f"{p}scope": "project", f"{p}visibility": "members", f"{p}project__in": project_ids})
    own = Q(**{f"{p}scope": "project", f"{p}visibility": "owner_only", f"{p}created_by": actor.account})
    return in_org & (subject_q(actor, p) | public | members | own)


def memory_figures_q(actor: Actor, prefix: str = "") -> Q:
    """Memories counted on the usage page: the whole org's for its owners and admins (counts only, no
    content), the readable ones for everyone else."""
    return org_q(actor, prefix) if actor.is_org_admin else memory_read_q(actor, prefix)


def injection_figures_q(actor: Actor, prefix: str = "") -> Q:
    """Injection logs counted on the usage page: the whole org's for its owners and admins."""
    return org_q(actor, prefix) if actor.is_org_admin else injection_read_q(actor, prefix)


def require_subject(actor: Actor, user_id: str, *, write: bool = False) -> None:
    """Reading or writing a subject's own (user/session scope) data."""
    if write and not actor.can_write:
        raise PermissionDenied(_("This API key is read-only."))
    if actor.is_key or actor.is_system:
        return
    if user_id != actor.user_id:
        raise Http404("No such user.")


def require_forget_subject(actor: Actor, user_id: str) -> None:
    """Forgetting a subject (erasing everything about them): the subject, a read-write key, or an org
    owner/admin, who may carry out an erasure request though they may not read (export) the data.
    How much a key restricted to some projects erases is forgets_everything's rule."""
    if actor.is_org_admin:
        return
    require_subject(actor, user_id, write=True)


def forgets_everything(actor: Actor) -> bool:
    """Whether forgetting a subject (after require_forget_subject) erases every row about them.

    Yes for the subject itself, an org owner or admin (an erasure request), the system and an org-wide
    read-write key. A project-restricted key erases only what it may read, and so change: the subject's
    memories it may read (memory_read_q), and its sessions (with messages and checkpoints), injection
    logs and extraction jobs of no project or of the key's projects, its profile and profile history.
    Whatever else is about the subject stays, and the answer says how much of each kind was left."""
    return not is_project_restricted(actor)


def embedding_config_read_q(actor: Actor, prefix: str = "") -> Q:
    """Embedding settings the actor may read: an account its own subject's, and the org's for org owners
    and admins; keys none (embedding_config_subject refuses them)."""
    if actor.is_key:
        return Q(**{f"{prefix}pk__in": []})
    own = Q(**{f"{prefix}user_id": actor.user_id or None})
    if actor.is_org_admin:
        own |= Q(**{f"{prefix}user_id": ""})
    return org_q(actor, prefix) & own


def require_create_memory(
    actor: Actor, *, scope: str, user_id: str | None, project: Project | None, session_id: str = ""
) -> None:
    if not actor.can_write:
        raise PermissionDenied(_("This API key is read-only."))
    if scope == "project":
        require_project(actor, project, "create_memories")
    else:
        if scope == "session" and session_id and _session_out_of_reach(actor, session_id):
            raise PermissionDenied(
                _("This API key does not reach the project of session %(session)s.") % {"session": session_id}
            )
        if actor.is_key or actor.is_system:
            return
        if user_id != actor.user_id:
            raise PermissionDenied(_("You may only add memories about yourself."))


def can_change_memory(actor: Actor, item) -> bool:
    """Edit or delete; the item must already be readable by the actor."""
    if not actor.can_write or item.org_id != actor.org.pk:
        return False
    if item.scope != "project":
        return actor.is_key or actor.is_system or item.user_id == actor.user_id
    if item.project is None:
        return False
    if has_project_perm(actor, item.project, "change_any_memory"):
        return True
    if actor.is_key:
        return False
    return has_project_perm(actor, item.project, "create_memories") and item.created_by_id == actor.account.pk


def visibility_hides(actor: Actor, item, visibility: str) -> bool:
    """Whether giving a project memory this visibility takes it out of the actor's reach (memory_read_q's
    rule for project memories): owner_only hides it from everyone but its author, members from anyone
    who does not reach the project."""
    if actor.is_system or item.scope != "project":
        return False
    if visibility == "owner_only":
        if actor.is_key:
            return item.created_by_key_id != actor.api_key.pk
        return item.created_by_id != actor.account.pk
    if visibility == "members":
        return not readable_projects(actor).filter(pk=item.project_id).exists()
    return False


def role_table() -> list[tuple[str, dict[str, bool]]]:
    """What each project role may do, highest role first, read off ROLE_PERMS and the rules above
    (can_change_memory: a role that creates edits and deletes its own; can_act_as_owner)."""
    roles = sorted(ROLE_PERMS, key=lambda role: ROLE_RANK[role], reverse=True)
    return [
        (
            role,
            {
                "read": "read_memories" in ROLE_PERMS[role],
                "create": "create_memories" in ROLE_PERMS[role],
                "change_own": "create_memories" in ROLE_PERMS[role],
                "change_any": "change_any_memory" in ROLE_PERMS[role],
                "manage_members": "manage_members" in ROLE_PERMS[role],
                "owner_acts": role == ProjectRole.OWNER,
            },
        )
        for role in roles
    ]


def require_read_memory(actor: Actor, item) -> None:
    """404 when the actor may not read the item."""
    readable = type(item)._default_manager.filter(memory_read_q(actor), pk=item.pk)
    if item.org_id != actor.org.pk or not readable.exists():
        raise Http404("No such memory.")


def require_change_memory(actor: Actor, item) -> None:
    """404 when the actor may not even read the item, 403 when it may read but not change it."""
    require_read_memory(actor, item)
    if not can_change_memory(actor, item):
        raise PermissionDenied(_("Your role may not change this memory."))


# ---- the system actor ---------------------------------------------------------------------------


def system_actor(org: Organization) -> Actor:
    """Tasks and commands act as the system, named at each call: it reads and changes every memory of
    its own org (as an org admin acting for every subject) and nothing of another org (404)."""
    return Actor(org=org, is_system=True)


def system_actor_for_job(job) -> Actor:
    """The system running a subject's extraction job: it writes as the system, but reconciles only with
    memories the job's sender may read: the API key that sent the messages, else the subject's own
    account; with neither (the key was deleted, the subject has no account), none private to anyone."""
    org = job.org
    if job.created_by_key_id is not None:
        key = ApiKey.objects.filter(pk=job.created_by_key_id, org=org).first()
        if key is not None:
            return Actor(org=org, is_system=True, reads_as=actor_for_key(key))
    membership = (
        OrgMembership.objects.filter(org=org, user_id=job.user_id).select_related("account", "org").first()
        if job.user_id
        else None
    )
    if membership is not None:
        reader = Actor(org=org, account=membership.account, membership=membership)
        return Actor(org=org, is_system=True, reads_as=reader)
    return Actor(org=org, is_system=True, shared_only=True)


# ---- the LangGraph store ------------------------------------------------------------------------


def store_read_q(actor: Actor, prefix: str = "") -> Q:
    """Items of the LangGraph store (the org's agents' own data): the org's, for whoever may use the store
    (require_store); nothing for anyone else."""
    if not can_use_store(actor):
        return Q(**{f"{prefix}pk__in": []})
    return org_q(actor, prefix)


def can_use_store(actor: Actor) -> bool:
    """The store is the org's, not a project's nor a subject's: an org-wide API key, the system, and org
    owners and admins use it; a key restricted to some projects and other members do not."""
    if actor.is_key:
        return not is_project_restricted(actor)
    return actor.is_org_admin


def require_store(actor: Actor, *, write: bool = False) -> None:
    if not can_use_store(actor):
        if actor.is_key:
            raise PermissionDenied(
                _("The store belongs to the whole organization: a key restricted to projects may not use it.")
            )
        raise PermissionDenied(
            _("Only organization owners and admins, and the org's API keys, may use the store.")
        )
    if write and not actor.can_write:
        raise PermissionDenied(_("This API key is read-only."))


def require_actor(actor) -> Actor:
    """Writes always have someone acting; there is no "no actor, no checks"."""
    if not isinstance(actor, Actor):
        raise TypeError(f"an Actor is required, not {actor!r}: tasks and commands pass system_actor(org)")
    return actor


def require_own_org(actor: Actor, org_id: int) -> None:
    """Whatever belongs to another org does not exist for the actor (404)."""
    require_actor(actor)
    if org_id != actor.org.pk:
        raise Http404("No such memory.")
