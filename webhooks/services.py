"""Webhook endpoints (create, change, rotate, delete, test) and the deliveries events become."""

from __future__ import annotations

import base64
import secrets

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from audit import services as audit
from config.celery import enqueue_on_commit
from core.crypto import encrypt
from core.net import UnsafeURL, check_url
from projects.access import Actor, require_manage_webhooks, webhook_receives

from .events import Occurrence, payload
from .models import SUBSCRIBABLE, DeliveryStatus, Event, WebhookDelivery, WebhookEndpoint

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """A Standard Webhooks secret: whsec_ and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def new_message_id() -> str:
    return "msg_" + secrets.token_hex(12)


def clean_events(events) -> list[str]:
    """The subscribed event names, in the canonical order; a ValidationError names the valid ones."""
    if events is None:
        return []
    if not isinstance(events, list | tuple) or not all(isinstance(e, str) for e in events):
        raise ValidationError({"events": [_("A list of event names.")]})
    unknown = sorted(set(events) - set(SUBSCRIBABLE))
    if unknown:
        raise ValidationError(
            {
                "events": [
                    _("Unknown event %(names)s. Valid events: %(valid)s.")
                    % {"names": ", ".join(unknown), "valid": ", ".join(SUBSCRIBABLE)}
                ]
            }
        )
    return [e for e in SUBSCRIBABLE if e in set(events)]


def clean_url(url: str) -> str:
    try:
        check_url(url)
    except UnsafeURL as exc:
        raise ValidationError({"url": [str(exc)]}) from exc
    return url


@transaction.atomic
def endpoint_create(
    *,
    actor: Actor,
    url: str,
    project=None,
    description: str = "",
    events=(),
    include_content: bool = False,
) -> tuple[WebhookEndpoint, str]:
    """A new endpoint of the org (or of one project) and its secret, which is shown only now."""
    require_manage_webhooks(actor, project)
    events = clean_events(list(events))
    secret = new_secret()
    endpoint = WebhookEndpoint.objects.create(
        org=actor.org,
        project=project,
        url=clean_url(url),
        description=description,
        events=events,
        include_content=include_content,
        secret_encrypted=encrypt(secret),
        created_by=actor.account,
    )
    audit.record(
        actor,
        audit.Action.WEBHOOK_CREATE,
        target=endpoint,
        project=project,
        details={"events": events, "include_content": include_content},
    )
    return endpoint, secret


UPDATABLE = {"url", "description", "events", "include_content", "is_active"}


@transaction.atomic
def endpoint_update(*, actor: Actor, endpoint: WebhookEndpoint, **changes) -> WebhookEndpoint:
    """Change an endpoint; is_active=True enables a disabled one again (its failure count starts over)."""
    require_manage_webhooks(actor, endpoint.project)
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise TypeError(f"not updatable: {sorted(unknown)}")
    if "url" in changes:
        endpoint.url = clean_url(changes["url"])
    if "events" in changes:
        endpoint.events = clean_events(changes["events"])
    for name in ("description", "include_content"):
        if name in changes:
            setattr(endpoint, name, changes[name])
    if "is_active" in changes and bool(changes["is_active"]) != endpoint.is_active:
        if changes["is_active"]:
            endpoint.is_active, endpoint.disabled_at, endpoint.disabled_reason = True, None, ""
            endpoint.failure_count = 0
        else:
            endpoint.is_active, endpoint.disabled_at = False, timezone.now()
            endpoint.disabled_reason = "disabled by " + actor.label
    endpoint.save()
    audit.record(
        actor,
        audit.Action.WEBHOOK_UPDATE,
        target=endpoint,
        project=endpoint.project_id,
        details=audit.field_names(changes, active=endpoint.is_active),
    )
    return endpoint


@transaction.atomic
def endpoint_rotate_secret(*, actor: Actor, endpoint: WebhookEndpoint) -> str:
    """A new secret for the endpoint (the old one stops signing at once); shown only now."""
    require_manage_webhooks(actor, endpoint.project)
    secret = new_secret()
    endpoint.secret_encrypted = encrypt(secret)
    endpoint.save(update_fields=["secret_encrypted", "updated_at"])
    audit.record(actor, audit.Action.WEBHOOK_ROTATE, target=endpoint, project=endpoint.project_id)
    return secret


@transaction.atomic
def endpoint_delete(*, actor: Actor, endpoint: WebhookEndpoint) -> None:
    """Delete the endpoint with its delivery log; nothing more is sent to it."""
    require_manage_webhooks(actor, endpoint.project)
    audit.record(actor, audit.Action.WEBHOOK_DELETE, target=endpoint, project=endpoint.project_id)
    endpoint.delete()


class EndpointDisabled(Exception):
    """The endpoint is disabled: enable it before sending to it."""


@transaction.atomic
def endpoint_test(*, actor: Actor, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """Send a webhook.test event to this endpoint (whatever it subscribes to)."""
    require_manage_webhooks(actor, endpoint.project)
    if not endpoint.is_active:
        raise EndpointDisabled(_("The endpoint is disabled; enable it before sending a test."))
    data = {"endpoint_id": endpoint.pk, "message": "A test event from Engram.", "sent_by": actor.label}
    [delivery] = deliveries_create(
        org_id=endpoint.org_id, endpoints=[endpoint], occurrences=[Occurrence(Event.WEBHOOK_TEST, data)]
    )
    return delivery


class NotRetryable(Exception):
    """The delivery is queued or delivered already."""


@transaction.atomic
def delivery_retry(*, actor: Actor, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a failed or abandoned delivery again now (one more attempt, the same webhook-id)."""
    endpoint = delivery.endpoint
    require_manage_webhooks(actor, endpoint.project)
    if not endpoint.is_active:
        raise EndpointDisabled(_("The endpoint is disabled; enable it before sending again."))
    if delivery.status not in (DeliveryStatus.FAILED, DeliveryStatus.ABANDONED):
        raise NotRetryable(_("Only a failed or abandoned delivery can be sent again."))
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.PENDING, next_attempt_at=timezone.now()
    )
    _enqueue([delivery.pk])
    delivery.refresh_from_db()
    return delivery


# ---- deliveries -----------------------------------------------------------------------------------


def receiving_endpoints(org_id: int) -> list[WebhookEndpoint]:
    """The org's active endpoints (one query; most orgs have none and the caller stops there)."""
    return list(WebhookEndpoint.objects.filter(org_id=org_id, is_active=True).order_by("id"))


def deliveries_create(
    *, org_id: int, endpoints: list[WebhookEndpoint], occurrences: list[Occurrence]
) -> list[WebhookDelivery]:
    """One delivery per (endpoint, event) the endpoint subscribes to and may receive; sent after commit."""
    now = timezone.now()
    rows = [
        WebhookDelivery(
            org_id=org_id,
            endpoint=endpoint,
            event=occurrence.event,
            message_id=new_message_id(),
            user_id=occurrence.user_id,
            payload=payload(occurrence, include_content=endpoint.include_content),
            next_attempt_at=now,
        )
        for occurrence in occurrences
        for endpoint in endpoints
        if endpoint.subscribes(occurrence.event)
        and (
            occurrence.event == Event.WEBHOOK_TEST
            or webhook_receives(
                endpoint.project_id, project_id=occurrence.project_id, shared=occurrence.shared
            )
        )
    ]
    WebhookDelivery.objects.bulk_create(rows, batch_size=500)
    _enqueue([row.pk for row in rows])
    return rows


def _enqueue(ids: list[int]) -> None:
    from .tasks import webhook_deliver

    for pk in ids:
        enqueue_on_commit(webhook_deliver, pk)
