"""AuditEvent: one append-only row per change, export, forget or reconfiguration.

What an event may hold: who (actor kind, account / key, and a label kept when they are deleted), what
(action, target type and id, project), about whom (subject), when, from where (ip, user agent) and a
small `details` dict of field names, counts, roles and config field names. Never memory content,
profile text, messages or secrets (audit.services.record refuses long strings).

Forgetting a subject blanks `subject_id` on the org's events about them; `subject_hash` (an HMAC of the
org and the id under a key derived from SECRET_KEY) stays, so an admin who is given the id again can
find when and by whom it was forgotten, while the log itself no longer names the subject.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class AppendOnly(Exception):
    """Audit events are never changed or deleted by the application."""


class Action(models.TextChoices):
    MEMORY_CREATE = "memory.create", _("Memory added")
    MEMORY_UPDATE = "memory.update", _("Memory edited")
    MEMORY_PIN = "memory.pin", _("Memory pinned or unpinned")
    MEMORY_ARCHIVE = "memory.archive", _("Memory archived")
    MEMORY_RESTORE = "memory.restore", _("Memory restored")
    MEMORY_DELETE = "memory.delete", _("Memory deleted")
    MEMORY_MERGE = "memory.merge", _("Duplicate merged into a memory")
    MEMORY_SUPERSEDE = "memory.supersede", _("Memory superseded")
    MEMORY_SPLIT = "memory.split", _("Merged memory split back out")
    MEMORY_BATCH = "memory.batch", _("Memories added in a batch")
    MEMORY_DELETE_ALL = "memory.delete_all", _("All of a subject's memories deleted")
    SUBJECT_EXPORT = "subject.export", _("Subject exported")
    SUBJECT_IMPORT = "subject.import", _("Subject imported")
    SUBJECT_FORGET = "subject.forget", _("Subject forgotten")
    CONFIG_EMBEDDING = "config.embedding", _("Embedding settings changed")
    CONFIG_LLM = "config.llm", _("Chat model settings changed")
    PROJECT_CREATE = "project.create", _("Project created")
    PROJECT_UPDATE = "project.update", _("Project changed")
    PROJECT_DELETE = "project.delete", _("Project deleted")
    MEMBERSHIP_ADD = "membership.add", _("Member added")
    MEMBERSHIP_CHANGE = "membership.change", _("Member's role changed")
    MEMBERSHIP_REMOVE = "membership.remove", _("Member removed")
    KEY_CREATE = "key.create", _("API key created")
    KEY_REVOKE = "key.revoke", _("API key revoked")
    PROFILE_UPDATE = "profile.update", _("Profile edited")
    SESSION_DELETE = "session.delete", _("Session deleted")
    ORG_SETTINGS = "org.settings", _("Organization settings changed")
    WEBHOOK_CREATE = "webhook.create", _("Webhook endpoint created")
    WEBHOOK_UPDATE = "webhook.update", _("Webhook endpoint changed")
    WEBHOOK_ROTATE = "webhook.rotate", _("Webhook secret rotated")
    WEBHOOK_DELETE = "webhook.delete", _("Webhook endpoint deleted")
    WEBHOOK_DISABLE = "webhook.disable", _("Webhook endpoint disabled after failures")


class TargetType(models.TextChoices):
    """What an event is about, by model (audit.services.record maps a row to one of these)."""

    MEMORY = "memory", _("memory")
    PROJECT = "project", _("project")
    MEMBERSHIP = "membership", _("membership")
    API_KEY = "api_key", _("API key")
    USER_PROFILE = "user_profile", _("user profile")
    PROJECT_PROFILE = "project_profile", _("project profile")
    SESSION = "session", _("session")
    WEBHOOK = "webhook", _("webhook endpoint")


class ActorKind(models.TextChoices):
    ACCOUNT = "account", _("Account")
    KEY = "key", _("API key")
    SYSTEM = "system", _("System")


class AuditEventQuerySet(models.QuerySet):
    """No update() or delete(): the one change allowed is forgetting a subject's id."""

    def update(self, **kwargs):
        raise AppendOnly("Audit events are append-only.")

    def delete(self):
        raise AppendOnly("Audit events are append-only.")

    def forget_subject(self, *, org, user_id: str) -> int:
        """Blank the subject's id on the org's events about them (the hash stays)."""
        return models.QuerySet.update(self.filter(org=org, subject_id=user_id), subject_id="")


class AuditEvent(models.Model):
    """Who did what to which row of an org, when and from where; ids and names of fields, no content."""

    org = models.ForeignKey("projects.Organization", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    actor_kind = models.CharField(max_length=16, choices=ActorKind.choices)
    actor_account = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_key = models.ForeignKey(
        "projects.ApiKey",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    actor_label = models.CharField(max_length=200)  # username or "prefix (name)": kept after a deletion
    action = models.CharField(max_length=32, choices=Action.choices)
    target_type = models.CharField(max_length=32, blank=True, default="", choices=TargetType.choices)
    target_id = models.CharField(max_length=64, blank=True, default="")
    project = models.ForeignKey(
        "projects.Project",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    subject_id = models.CharField(max_length=255, blank=True, default="")
    subject_hash = models.CharField(max_length=64, blank=True, default="", db_index=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=255, blank=True, default="")
    details = models.JSONField(default=dict, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["org", "-created_at", "-id"], name="audit_org_created"),
            models.Index(fields=["org", "action", "-created_at"], name="audit_org_action"),
        ]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="audit_auditevent_id_org")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_label} {self.action}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("Audit events are append-only.")
