"""Tenancy: organizations, memberships, projects and API keys."""

import hashlib
import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from config.env import RATE_PATTERN


class Organization(models.Model):
    """A tenant: every tenant-owned row points at one."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Requests per API key (and per account on a session), e.g. "600/min"; blank: the server's ENGRAM_API_RATE.
    api_rate = models.CharField(
        max_length=32,
        blank=True,
        default="",
        validators=[RegexValidator(RATE_PATTERN, "A rate like 600/min (per s, min, hour or day).")],
        help_text="API requests allowed per key and per signed-in account, e.g. 600/min; blank: server default.",
    )
    # Whether members (Editor or higher in some project) may send their own memories to an embedding
    # endpoint of their choosing (projects.access.can_set_own_embedding); owners and admins always may.
    members_set_embedding = models.BooleanField(
        default=False, help_text="Members who can write may choose their own embedding provider."
    )

    def __str__(self) -> str:
        return self.slug


class OrgRole(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"


class OrgMembership(models.Model):
    """An account's place in an org; user_id names the account's memory subject there."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="org_memberships"
    )
    role = models.CharField(max_length=16, choices=OrgRole.choices, default=OrgRole.MEMBER)
    user_id = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "account"], name="uniq_org_account"),
            models.UniqueConstraint(fields=["org", "user_id"], name="uniq_org_user_id"),
            models.UniqueConstraint(fields=["id", "org"], name="projects_orgmembership_id_org"),
        ]

    def __str__(self) -> str:
        return f"{self.account} in {self.org} ({self.role})"

    @property
    def is_org_admin(self) -> bool:
        return self.role in (OrgRole.OWNER, OrgRole.ADMIN)


class Project(models.Model):
    """A shared space inside an org with its own members and project-scope memories."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "slug"], name="uniq_project_slug"),
            models.UniqueConstraint(fields=["id", "org"], name="projects_project_id_org"),
        ]
        permissions = [
            ("read_memories", "Read the project's memories"),
            ("create_memories", "Create project memories"),
            ("change_any_memory", "Edit or delete any project memory"),
            ("manage_members", "Manage project members"),
        ]

    def __str__(self) -> str:
        return f"{self.org.slug}/{self.slug}"


class ProjectRole(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    EDITOR = "editor", "Editor"
    VIEWER = "viewer", "Viewer"


class ProjectMembership(models.Model):
    """An account's role in a project (seed 000's Owner/Admin/Editor/Viewer)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="memberships", db_constraint=False
    )
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_memberships"
    )
    role = models.CharField(max_length=16, choices=ProjectRole.choices, default=ProjectRole.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "account"], name="uniq_project_account"),
            models.UniqueConstraint(fields=["id", "org"], name="projects_projectmembership_id_org"),
        ]

    def __str__(self) -> str:
        return f"{self.account} in {self.project} ({self.role})"


KEY_PREFIX = "eng_"


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKey(models.Model):
    """An org API key for agent services; only a SHA-256 of the secret is stored."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    hashed_secret = models.CharField(max_length=64, unique=True)
    read_only = models.BooleanField(default=False)
    projects = models.ManyToManyField(Project, blank=True, related_name="api_keys", through="ApiKeyProject")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="projects_apikey_id_org")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def generate(cls) -> tuple[str, str]:
        """Return (prefix, secret); the secret is the full token shown once."""
        prefix = KEY_PREFIX + secrets.token_hex(4)
        return prefix, f"{prefix}.{secrets.token_urlsafe(32)}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def is_project_restricted(self) -> bool:
        return self.projects.exists()

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])


class ApiKeyProject(models.Model):
    """A project a restricted key may reach (ApiKey.projects): the key's org, which is the project's too."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    apikey = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_constraint=False)

    class Meta:
        db_table = "projects_apikey_projects"  # the table Django made for the key's project list
        unique_together = [("apikey", "project")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="projects_apikey_projects_id_org")]

    def __str__(self) -> str:
        return f"key {self.apikey_id} reaches project {self.project_id}"


class IdempotencyKey(models.Model):
    """A write's Idempotency-Key and the first answer to it, replayed for 24 hours (projects.idempotency)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    principal = models.CharField(max_length=64)  # whose key: "key:<api key id>" or "account:<account id>"
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # SHA-256 of method, path and canonical body
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)  # null: the first is in flight
    body = models.TextField(blank=True, default="")  # the answer as the API rendered it (JSON)
    headers = models.JSONField(default=dict, blank=True)
    # The subjects (user_id) the request and its answer name: forgetting one removes the stored answer.
    subjects = ArrayField(models.CharField(max_length=255), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "principal", "key"], name="uniq_idempotency_key"),
            models.UniqueConstraint(fields=["id", "org"], name="projects_idempotencykey_id_org"),
        ]

    def __str__(self) -> str:
        return f"{self.principal} {self.key}"
