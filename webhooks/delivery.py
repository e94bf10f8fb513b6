"""Sending a delivery: sign it (Standard Webhooks), POST it through the outbound-URL guard, record how it
went, schedule the next attempt or give up, and disable an endpoint that keeps failing.

Attempt n (1-based) is due settings.WEBHOOK_RETRY_SCHEDULE[n-1] seconds after the previous one failed
(the first at once); after the last, the delivery is abandoned. An endpoint whose deliveries were
abandoned WEBHOOK_DISABLE_AFTER times in a row is disabled (audit log, notice on the page); a 2xx resets
the count. Each attempt is claimed with a conditional UPDATE that also leases it, so a redelivered task
or the sweep never sends it twice at once.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from standardwebhooks import Webhook

from audit import services as audit
from core.crypto import DecryptionError, decrypt
from core.net import guarded_http_client
from core.secrets import redact

from .models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

log = logging.getLogger(__name__)

DUE = (DeliveryStatus.PENDING, DeliveryStatus.FAILED)


def signed_request(delivery: WebhookDelivery, secret: str, now=None) -> tuple[bytes, dict[str, str]]:
    """(body, headers) of a delivery: webhook-id, webhook-timestamp, webhook-signature v1,<base64 HMAC>."""
    now = now or timezone.now()
    body = json.dumps(delivery.payload, ensure_ascii=False, separators=(",", ":"))
    headers = {
        "webhook-id": delivery.message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(delivery.message_id, now, body),
        "content-type": "application/json",
        "user-agent": "Engram-Webhooks/1",
    }
    return body.encode(), headers


def _post(endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> tuple[int | None, str]:
    """(HTTP status or None, error text without secrets)."""
    try:
        secret = decrypt(endpoint.secret_encrypted)
    except DecryptionError:
        return None, "the endpoint's secret cannot be decrypted; rotate it"
    body, headers = signed_request(delivery, secret)
    try:
        with guarded_http_client(timeout=settings.WEBHOOK_TIMEOUT) as client:
            response = client.post(endpoint.url, content=body, headers=headers)
    except Exception as exc:  # noqa: BLE001 - refused address, DNS, connect, timeout, TLS: all one failure
        return None, redact(f"{type(exc).__name__}: {exc}")[:500]
    code = response.status_code
    if 200 <= code < 300:
        return code, ""
    if 300 <= code < 400:
        return code, f"HTTP {code}: redirects are not followed"
    return code, f"HTTP {code}"


def _claim(delivery_id: int) -> WebhookDelivery | None:
    now = timezone.now()
    lease = now + timedelta(seconds=settings.WEBHOOK_TIMEOUT + 60)
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, status__in=DUE, next_attempt_at__lte=now + timedelta(seconds=1)
    ).update(attempts=F("attempts") + 1, next_attempt_at=lease)
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)


def delivery_attempt(*, delivery_id: int) -> str:
    """One attempt of a due delivery; its new status ("skipped" when it is not due or is taken)."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return "skipped"
    endpoint = delivery.endpoint
    if not endpoint.is_active:
        _update(delivery, status=DeliveryStatus.ABANDONED, error="the endpoint is disabled")
        return DeliveryStatus.ABANDONED
    code, error = _post(endpoint, delivery)
    if not error:
        _update(delivery, status=DeliveryStatus.SUCCEEDED, code=code, delivered_at=timezone.now())
        WebhookEndpoint.objects.filter(pk=endpoint.pk).exclude(failure_count=0).update(failure_count=0)
        return DeliveryStatus.SUCCEEDED
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    if delivery.attempts < len(schedule):
        delay = schedule[delivery.attempts]
        _update(delivery, status=DeliveryStatus.FAILED, code=code, error=error, after=delay)
        send_later(delivery.pk, delay)
        return DeliveryStatus.FAILED
    _update(delivery, status=DeliveryStatus.ABANDONED, code=code, error=error)
    _count_failure(endpoint)
    return DeliveryStatus.ABANDONED


def _update(delivery, *, status, code=None, error="", after=None, delivered_at=None) -> None:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status,
        last_status_code=code,
        last_error=error[:500],
        next_attempt_at=timezone.now() + timedelta(seconds=after) if after is not None else None,
        delivered_at=delivered_at,
        updated_at=timezone.now(),
    )


@transaction.atomic
def _count_failure(endpoint: WebhookEndpoint) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failure_count=F("failure_count") + 1)
    endpoint = WebhookEndpoint.objects.select_for_update().select_related("org").get(pk=endpoint.pk)
    if endpoint.is_active and endpoint.failure_count >= settings.WEBHOOK_DISABLE_AFTER:
        endpoint_disable(endpoint)


def endpoint_disable(endpoint: WebhookEndpoint) -> None:
    """Disable an endpoint that keeps failing: its queued deliveries are abandoned, the audit log says so."""
    failures = endpoint.failure_count
    endpoint.is_active, endpoint.disabled_at = False, timezone.now()
    endpoint.disabled_reason = f"{failures} deliveries in a row failed"
    endpoint.save(update_fields=["is_active", "disabled_at", "disabled_reason", "updated_at"])
    endpoint.deliveries.filter(status__in=DUE).update(
        status=DeliveryStatus.ABANDONED, next_attempt_at=None, last_error="the endpoint was disabled"
    )
    audit.record(
        None,
        audit.Action.WEBHOOK_DISABLE,
        org=endpoint.org,
        target=endpoint,
        project=endpoint.project_id,
        details={"failures": failures},
    )
    log.warning("webhook endpoint %s disabled after %s failed deliveries", endpoint.pk, failures)


def send_later(delivery_id: int, delay: float) -> None:
    """Enqueue the next attempt; a broker that is down is left to the sweep."""
    from .tasks import webhook_deliver

    try:
        webhook_deliver.apply_async(args=[delivery_id], countdown=delay, retry_policy={"max_retries": 2})
    except Exception as exc:  # noqa: BLE001 - as config.celery.enqueue_on_commit
        log.warning("could not enqueue webhook delivery %s (%s); the sweep sends it", delivery_id, exc)


def deliveries_sweep() -> dict:
    """Due deliveries whose task was lost (broker down, worker died mid-attempt) are enqueued again."""
    late = timezone.now() - timedelta(seconds=30)
    ids = list(
        WebhookDelivery.objects.filter(status__in=DUE, next_attempt_at__lt=late)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:1000]
    )
    for pk in ids:
        send_later(pk, 0)
    return {"enqueued": len(ids)}
