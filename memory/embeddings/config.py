"""The stored embedding settings: the org's (user_id "") and a user's own override. Whose settings an
actor may read or change is projects.access.embedding_config_subject's decision; a change of model
queues a re-embedding of the memories it affects."""

from __future__ import annotations

from django.db import transaction

from config.celery import enqueue_on_commit
from core.crypto import encrypt

from .resolve import provider_for


def embedding_config_get(*, org, user_id: str):
    """The org's (user_id "") or a user's embedding settings, or None."""
    from memory.models import EmbeddingConfig

    return EmbeddingConfig.objects.filter(org=org, user_id=user_id).first()


@transaction.atomic
def embedding_config_set(
    *,
    org,
    user_id: str,
    provider: str,
    model: str,
    base_url: str,
    dimensions,
    api_key: str | None = None,
):
    """Create or change the settings; api_key None keeps the stored key. Returns the re-embed job, if any."""
    from memory.models import EmbeddingConfig

    before = provider_for(org, user_id).model_name
    config = EmbeddingConfig.objects.select_for_update().filter(org=org, user_id=user_id).first()
    config = config or EmbeddingConfig(org=org, user_id=user_id)
    config.provider = provider
    config.model = model
    config.base_url = base_url
    config.dimensions = dimensions
    if api_key is not None:
        config.api_key_encrypted = encrypt(api_key)
    if config.provider == "local":
        config.api_key_encrypted = ""
    config.save()
    return _reembed_if_changed(org, before, provider_for(org, user_id).model_name)


@transaction.atomic
def embedding_config_delete(*, org, user_id: str):
    """Remove the settings (the org's, then the server's default applies). Returns the re-embed job, if any."""
    from memory.models import EmbeddingConfig

    before = provider_for(org, user_id).model_name
    EmbeddingConfig.objects.filter(org=org, user_id=user_id).delete()
    return _reembed_if_changed(org, before, provider_for(org, user_id).model_name)


def _reembed_if_changed(org, before: str, after: str):
    if before == after:
        return None
    from memory.models import ReembedJob
    from memory.tasks import reembed_queryset, reembed_run

    job = ReembedJob.objects.create(org=org, model=after)
    job.total = reembed_queryset(job).count()
    job.save(update_fields=["total"])
    enqueue_on_commit(reembed_run, job.pk)
    return job
