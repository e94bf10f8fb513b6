"""Webhook endpoints of an org (or one of its projects) and the deliveries of events to them."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from projects.models import Organization, Project


class Event(models.TextChoices):
    MEMORY_CREATED = "memory.created", _("A memory was added")
    MEMORY_UPDATED = "memory.updated", _("A memory was edited, archived or restored")
    MEMORY_MERGED = "memory.merged", _("A duplicate was merged into a memory")
    MEMORY_SUPERSEDED = "memory.superseded", _("A memory was superseded by a newer one")
    MEMORY_DELETED = "memory.deleted", _("A memory was deleted")
    EXTRACTION_COMPLETED = "extraction.completed", _("An extraction job finished")
    EXTRACTION_FAILED = "extraction.failed", _("An extraction job failed")
    SUBJECT_FORGOTTEN = "subject.forgotten", _("A subject was forgotten")
    WEBHOOK_TEST = "webhook.test", _("A test event")


# What an endpoint may subscribe to (webhook.test goes to the one endpoint it is sent for).
SUBSCRIBABLE = [e.value for e in Event if e != Event.WEBHOOK_TEST]


class WebhookEndpoint(models.Model):
    """A URL that receives the org's (or one project's) events, signed with its own secret."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    url = models.URLField(max_length=500)
    description = models.CharField(max_length=200, blank=True, default="")
    events = models.JSONField(default=list, blank=True)  # event names; empty: every event
    include_content = models.BooleanField(default=False)
    secret_encrypted = models.TextField()  # core.crypto; the secret is shown once, on create and rotate
    is_active = models.BooleanField(default=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=200, blank=True, default="")
    failure_count = models.PositiveIntegerField(default=0)  # consecutive deliveries that were abandoned
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["org", "is_active"], name="webhook_org_active")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="webhooks_webhookendpoint_id_org")]

    def __str__(self) -> str:
        return self.url

    def subscribes(self, event: str) -> bool:
        return event == Event.WEBHOOK_TEST or not self.events or event in self.events


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("pending")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed, will retry")
    ABANDONED = "abandoned", _("abandoned")


class WebhookDelivery(models.Model):
    """One event for one endpoint: its payload, and how its attempts went (no secrets in the error)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries", db_constraint=False
    )
    event = models.CharField(max_length=40, choices=Event.choices)
    message_id = models.CharField(max_length=40, unique=True)  # msg_...: the webhook-id header
    # The subject the event is about: a forget of that subject removes the delivery with the rest.
    user_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    payload = models.JSONField()
    status = models.CharField(max_length=12, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["endpoint", "-created_at", "-id"], name="webhook_delivery_log"),
            models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due"),
        ]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="webhooks_webhookdelivery_id_org")]

    def __str__(self) -> str:
        return f"{self.event} {self.message_id}"
