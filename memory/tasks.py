"""Background work for memories. Tasks take ids and exit quietly if the row is gone."""

import logging

from celery import shared_task

from .embeddings import EmbeddingError, provider_for
from .models import MemoryItem

log = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, max_retries=8)
def memory_embed(self, item_id: int) -> None:
    """Embed an item whose embedding failed earlier; retry with backoff and jitter while the provider is down."""
    item = MemoryItem.objects.filter(pk=item_id).select_related("org").first()
    if item is None:
        return
    provider = provider_for(item.org, item.user_id)
    if item.embedding is not None and item.embedding_model == provider.model_name:
        return
    try:
        vector = provider.embed_passages([item.content])[0]
    except EmbeddingError as exc:
        countdown = min(600, 2**self.request.retries * 5)
        raise self.retry(exc=exc, countdown=countdown + (item_id % 7))
    MemoryItem.objects.filter(pk=item_id).update(embedding=vector, embedding_model=provider.model_name)
