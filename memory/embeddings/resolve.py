"""Which provider embeds for a subject: the user's own setting, then the org's, then the server default."""

from django.conf import settings

from .local import LocalE5Provider

_local = LocalE5Provider()


def provider_for(org, user_id: str = ""):
    from memory.models import EmbeddingConfig

    configs = {c.user_id: c for c in EmbeddingConfig.objects.filter(org=org, user_id__in=["", user_id or ""])}
    config = configs.get(user_id or "") if user_id else None
    config = config or configs.get("")
    if config is None:
        if settings.ENGRAM_EMBEDDING_PROVIDER == "openai" and settings.ENGRAM_EMBEDDING_BASE_URL:
            from .remote import OpenAICompatibleProvider

            return OpenAICompatibleProvider(
                base_url=settings.ENGRAM_EMBEDDING_BASE_URL,
                model=settings.ENGRAM_EMBEDDING_MODEL,
                api_key=settings.ENGRAM_EMBEDDING_API_KEY,
                dimensions=settings.ENGRAM_EMBEDDING_DIM,
            )
        return _local
    if config.provider == "local":
        return _local
    from memory.crypto import decrypt

    from .remote import OpenAICompatibleProvider

    return OpenAICompatibleProvider(
        base_url=config.base_url,
        model=config.model,
        api_key=decrypt(config.api_key_encrypted),
        dimensions=config.dimensions,
    )
