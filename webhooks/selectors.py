"""Reads of webhook endpoints and their deliveries, through projects.access's rules."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from projects.access import Actor, can_use_webhooks, project_role, require_manage_webhooks, webhook_read_q

from .models import WebhookDelivery, WebhookEndpoint


def webhook_endpoints(actor: Actor) -> QuerySet[WebhookEndpoint]:
    """The endpoints the actor manages, newest first; 403 for an actor who may manage none."""
    if not can_use_webhooks(actor):
        require_manage_webhooks(actor)  # raises the reason (API key, or not an admin)
        raise PermissionDenied  # pragma: no cover - require_manage_webhooks raised
    return (
        WebhookEndpoint.objects.filter(webhook_read_q(actor))
        .select_related("project")
        .order_by("-created_at", "-id")
    )


def webhook_endpoint(actor: Actor, pk) -> WebhookEndpoint:
    """One endpoint of the actor's org: 404 when it is another org's or of a project the actor cannot
    see, 403 when the actor may not manage it."""
    endpoint = WebhookEndpoint.objects.filter(org=actor.org, pk=pk).select_related("project").first()
    if endpoint is None or (endpoint.project is not None and project_role(actor, endpoint.project) is None):
        raise Http404("No such webhook endpoint.")
    require_manage_webhooks(actor, endpoint.project)
    return endpoint


def webhook_deliveries(endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    """An endpoint's delivery log (the caller got the endpoint through webhook_endpoint)."""
    return WebhookDelivery.objects.filter(org=endpoint.org_id, endpoint=endpoint)
