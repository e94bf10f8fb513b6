"""Writes for tenancy: orgs, memberships (the one writer of guardian grants), projects, API keys."""

import re

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils.text import slugify
from django.utils.translation import gettext as _
from guardian.models import UserObjectPermission
from guardian.shortcuts import assign_perm, remove_perm

from .access import ROLE_PERMS, Actor, can_act_as_owner, require_org_admin, require_project
from .models import (
    ApiKey,
    Organization,
    OrgMembership,
    OrgRole,
    Project,
    ProjectMembership,
    ProjectRole,
    hash_secret,
)
from .signals import audit

SLUG_RE = re.compile(r"^[-a-zA-Z0-9_]+\Z")
PERM_NAMES = sorted({p for perms in ROLE_PERMS.values() for p in perms})


@transaction.atomic
def org_create(*, slug: str, name: str = "") -> Organization:
    """Create an organization."""
    if not slug or not SLUG_RE.match(slug) or len(slug) > 64:
        raise ValidationError(f"{slug!r} is not a valid slug (letters, digits, '-' and '_', at most 64).")
    if Organization.objects.filter(slug=slug).exists():
        raise ValidationError(f"Organization {slug!r} already exists.")
    return Organization.objects.create(slug=slug, name=name or slug)


@transaction.atomic
def org_membership_set(
    *, org: Organization, account, role: str = OrgRole.MEMBER, user_id: str = ""
) -> OrgMembership:
    """Add an account to an org (or change its role); user_id defaults to the username."""
    existing = OrgMembership.objects.filter(org=org, account=account).first()
    user_id = user_id or (existing.user_id if existing else account.get_username())
    if OrgMembership.objects.filter(org=org, user_id=user_id).exclude(account=account).exists():
        raise ValidationError({"user_id": f"Another account of {org.slug} already has user_id {user_id!r}."})
    membership, _ = OrgMembership.objects.update_or_create(
        org=org, account=account, defaults={"role": role, "user_id": user_id}
    )
    return membership


def _sync_guardian(membership: ProjectMembership | None, *, project: Project, account) -> None:
    """Grant exactly the permissions of the account's role in the project (none when removed)."""
    wanted = ROLE_PERMS[membership.role] if membership else set()
    for perm in PERM_NAMES:
        if perm in wanted:
            assign_perm(perm, account, project)
        else:
            remove_perm(perm, account, project)


def _owner_count(project: Project) -> int:
    return ProjectMembership.objects.filter(project=project, role=ProjectRole.OWNER).count()


def _lock_project(project_id: int) -> Project:
    """Serialize membership changes of one project (the last-Owner rule reads, then writes)."""
    return Project.objects.select_for_update().get(pk=project_id)


def _validate_slug(*, org: Organization, slug: str, exclude_pk: int | None = None) -> str:
    if not slug or not SLUG_RE.match(slug) or len(slug) > 64:
        raise ValidationError(
            {
                "slug": _("%(slug)s is not a valid short name (letters, digits, '-' and '_').")
                % {"slug": repr(slug)}
            }
        )
    clash = Project.objects.filter(org=org, slug=slug)
    if exclude_pk is not None:
        clash = clash.exclude(pk=exclude_pk)
    if clash.exists():
        raise ValidationError(
            {"slug": _("A project with the short name %(slug)s already exists.") % {"slug": repr(slug)}}
        )
    return slug


@transaction.atomic
def project_create(*, actor: Actor, name: str, slug: str = "", description: str = "") -> Project:
    """Create a project; its creator becomes its Owner: the account, or for an API key the account that
    made the key (while it is still in the org). A key nobody made (create_api_key) leaves the project
    to the org's owners and admins, who act as its Admins."""
    if not actor.can_write:
        raise PermissionDenied(_("This API key is read-only."))
    if actor.is_key and actor.api_key.projects.exists():
        raise PermissionDenied(_("A project-restricted API key cannot create projects."))
    slug = _validate_slug(org=actor.org, slug=slug or slugify(name)[:64] or "project")
    try:
        with transaction.atomic():  # a concurrent create of the same slug loses here, as a 400
            project = Project.objects.create(org=actor.org, name=name, slug=slug, description=description)
    except IntegrityError:
        raise ValidationError(
            {"slug": _("A project with the short name %(slug)s already exists.") % {"slug": repr(slug)}}
        )
    owner = actor.account
    if owner is None and actor.is_key and actor.api_key.created_by_id is not None:
        creator = actor.api_key.created_by
        if OrgMembership.objects.filter(org=actor.org, account=creator).exists():
            owner = creator
    if owner is not None:
        membership = ProjectMembership.objects.create(
            org=actor.org, project=project, account=owner, role=ProjectRole.OWNER
        )
        _sync_guardian(membership, project=project, account=owner)
    audit(actor, "project.create", target=project, project=project)
    return project


@transaction.atomic
def project_update(*, actor: Actor, project: Project, **fields) -> Project:
    """Rename or describe a project (Owner/Admin)."""
    require_project(actor, project, "manage_members")
    unknown = set(fields) - {"name", "slug", "description"}
    if unknown:
        raise ValidationError(f"Not editable: {', '.join(sorted(unknown))}.")
    if "slug" in fields and fields["slug"] != project.slug:
        project.slug = _validate_slug(org=project.org, slug=fields["slug"], exclude_pk=project.pk)
    for name in ("name", "description"):
        if name in fields:
            setattr(project, name, fields[name])
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError:
        raise ValidationError(
            {
                "slug": _("A project with the short name %(slug)s already exists.")
                % {"slug": repr(project.slug)}
            }
        )
    audit(actor, "project.update", target=project, project=project, details={"fields": sorted(fields)})
    return project


@transaction.atomic
def project_delete(*, actor: Actor, project: Project) -> None:
    """Delete a project with its memories; only its Owner or an org owner/admin may."""
    role = require_project(actor, project, "manage_members")
    if not can_act_as_owner(actor, role):
        raise PermissionDenied(_("Only the project's Owner may delete it."))
    content_type = ContentType.objects.get_for_model(Project)
    UserObjectPermission.objects.filter(content_type=content_type, object_pk=str(project.pk)).delete()
    # A key restricted to this project alone would reach every project once it is gone (no restriction
    # left reads as none): it is revoked instead. Keys with other projects keep those.
    restricted_here = ApiKey.objects.filter(org=project.org_id, revoked_at=None, projects=project)
    # Counted apart from that filter's join, which holds this project only.
    orphaned = list(
        ApiKey.objects.filter(pk__in=restricted_here.values("pk"))
        .annotate(reach=Count("projects"))
        .filter(reach=1)
    )
    audit(actor, "project.delete", target=project, details={"slug": project.slug})
    project.delete()
    for key in orphaned:
        key.revoke()
        audit(actor, "key.revoke", target=key, details={"project_deleted": project.slug})


def member_account(org: Organization, account_id: int | None = None, username: str | None = None):
    """The account to add to a project, which must already belong to the org."""
    User = get_user_model()
    account = None
    if account_id is not None:
        account = User.objects.filter(pk=account_id).first()
    elif username:
        account = User.objects.filter(username=username).first()
    if account is None or not OrgMembership.objects.filter(org=org, account=account).exists():
        raise ValidationError({"account": _("No such account in this organization.")})
    return account


_member_account = member_account  # older name


@transaction.atomic
def project_member_set(*, project: Project, account, role: str) -> ProjectMembership:
    """System write (seed data, imports): make the account a member with this role, grants in step."""
    if role not in ProjectRole.values:
        raise ValidationError({"role": _("Unknown role %(role)s.") % {"role": repr(role)}})
    if not OrgMembership.objects.filter(org=project.org, account=account).exists():
        raise ValidationError({"account": _("No such account in this organization.")})
    membership, _created = ProjectMembership.objects.update_or_create(
        org=project.org, project=project, account=account, defaults={"role": role}
    )
    _sync_guardian(membership, project=project, account=account)
    return membership


@transaction.atomic
def project_member_add(*, actor: Actor, project: Project, account, role: str) -> ProjectMembership:
    """Add a member; only Owner/Admin may, and only an Owner may create another Owner."""
    actor_role = require_project(actor, project, "manage_members")
    if role not in ProjectRole.values:
        raise ValidationError({"role": _("Unknown role %(role)s.") % {"role": repr(role)}})
    if role == ProjectRole.OWNER and not can_act_as_owner(actor, actor_role):
        raise PermissionDenied(_("Only an Owner may make another Owner."))
    project = _lock_project(project.pk)
    if not OrgMembership.objects.filter(org=project.org, account=account).exists():
        raise ValidationError({"account": _("No such account in this organization.")})
    if ProjectMembership.objects.filter(project=project, account=account).exists():
        raise ValidationError({"account": _("Already a member of this project.")})
    membership = ProjectMembership.objects.create(
        org=project.org, project=project, account=account, role=role
    )
    _sync_guardian(membership, project=project, account=account)
    audit(
        actor,
        "membership.add",
        target=membership,
        project=project,
        details={"account": account.pk, "role": role},
    )
    return membership


@transaction.atomic
def project_member_change_role(
    *, actor: Actor, membership: ProjectMembership, role: str
) -> ProjectMembership:
    """Change a member's role; a project never loses its last Owner."""
    actor_role = require_project(actor, membership.project, "manage_members")
    if role not in ProjectRole.values:
        raise ValidationError({"role": _("Unknown role %(role)s.") % {"role": repr(role)}})
    project = _lock_project(membership.project_id)
    membership = ProjectMembership.objects.select_related("account").get(pk=membership.pk)
    if ProjectRole.OWNER in (role, membership.role) and not can_act_as_owner(actor, actor_role):
        raise PermissionDenied(_("Only an Owner may grant or take the Owner role."))
    if membership.role == ProjectRole.OWNER and role != ProjectRole.OWNER and _owner_count(project) <= 1:
        raise ValidationError({"role": _("A project must keep at least one Owner.")})
    if membership.role != role:
        details = {"account": membership.account_id, "old_role": membership.role, "new_role": role}
        audit(actor, "membership.change", target=membership, project=project, details=details)
        membership.role = role
        membership.save(update_fields=["role"])
    _sync_guardian(membership, project=project, account=membership.account)
    return membership


@transaction.atomic
def project_member_remove(*, actor: Actor, membership: ProjectMembership) -> None:
    """Remove a member and its grants; a project never loses its last Owner."""
    actor_role = require_project(actor, membership.project, "manage_members")
    project = _lock_project(membership.project_id)
    membership = ProjectMembership.objects.select_related("account").get(pk=membership.pk)
    if membership.role == ProjectRole.OWNER:
        if not can_act_as_owner(actor, actor_role):
            raise PermissionDenied(_("Only an Owner may remove an Owner."))
        if _owner_count(project) <= 1:
            raise ValidationError({"role": _("A project must keep at least one Owner.")})
    account = membership.account
    audit(
        actor,
        "membership.remove",
        target=membership,
        project=project,
        details={"account": account.pk, "role": membership.role},
    )
    membership.delete()
    _sync_guardian(None, project=project, account=account)


@transaction.atomic
def api_key_create(
    *,
    org: Organization,
    name: str,
    read_only: bool = False,
    projects=(),
    created_by=None,
    actor: Actor | None = None,
) -> tuple[ApiKey, str]:
    """Create a key; returns (key, secret). The secret is never stored, only its hash."""
    if actor is not None:
        require_org_admin(actor)
        if actor.org.pk != org.pk:
            raise PermissionDenied(_("You may only create keys for your own organization."))
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": _("A key needs a name.")})
    projects = list(projects)
    for project in projects:
        if project.org_id != org.id:
            raise ValidationError({"projects": "Projects must belong to the key's organization."})
    prefix, secret = ApiKey.generate()
    key = ApiKey.objects.create(
        org=org,
        name=name,
        prefix=prefix,
        hashed_secret=hash_secret(secret),
        read_only=read_only,
        created_by=created_by,
    )
    if projects:
        key.projects.set(projects, through_defaults={"org": org})
    audit(
        actor,
        "key.create",
        org=org,
        target=key,
        details={"read_only": read_only, "projects": [p.pk for p in projects]},
    )
    return key, secret


@transaction.atomic
def api_key_revoke(*, actor: Actor, key: ApiKey) -> ApiKey:
    """Revoke a key at once; requests with it get 401 from then on."""
    require_org_admin(actor)
    if key.org_id != actor.org.pk:
        raise PermissionDenied(_("Not a key of your organization."))
    key.revoke()
    audit(actor, "key.revoke", target=key)
    return key
