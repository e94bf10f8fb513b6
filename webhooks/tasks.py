"""Celery interface of webhook deliveries: tasks take ids; the work is in webhooks.delivery."""

from celery import shared_task

from .delivery import deliveries_sweep, delivery_attempt


@shared_task(acks_late=True)
def webhook_deliver(delivery_id: int) -> str:
    """One attempt of a delivery (the row says whether it is due; the next one is scheduled from there)."""
    return delivery_attempt(delivery_id=delivery_id)


@shared_task(acks_late=True)
def webhooks_sweep() -> dict:
    """Beat: enqueue due deliveries nobody is sending."""
    return deliveries_sweep()
