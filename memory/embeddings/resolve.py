"""Which provider embeds for a subject: the user's own setting, then the org's, then the server default."""

import threading

from cachetools import TTLCache
from django.conf import settings
from django.core.signals import setting_changed
from django.db.models.signals import post_delete, post_save

from .local import LocalE5Provider

_local = LocalE5Provider()

# Searches resolve the provider on every call; a few seconds of caching saves a query each time. The cache
# holds an org's configurations (one query for all of its subjects). A change of configuration clears this
# process's cache at once (signals below); other processes see it within PROVIDER_CACHE_SECONDS, and a
# change of model needs a re-embedding anyway.
PROVIDER_CACHE_SECONDS = 5.0
PROVIDER_CACHE_MAX_CONFIGS = 1000  # an org with more subject overrides than this is not cached
_cache: TTLCache = TTLCache(maxsize=10_000, ttl=PROVIDER_CACHE_SECONDS)
_cache_lock = threading.Lock()


def cached_provider_for(org, user_id: str = ""):
    """provider_for, with the org's configurations remembered for PROVIDER_CACHE_SECONDS in this process."""
    from memory.models import EmbeddingConfig

    with _cache_lock:
        entry = _cache.get(org.pk)
    if entry is None:
        rows = list(EmbeddingConfig.objects.filter(org=org)[: PROVIDER_CACHE_MAX_CONFIGS + 1])
        if len(rows) > PROVIDER_CACHE_MAX_CONFIGS:
            return provider_for(org, user_id)
        entry = {"configs": {c.user_id: c for c in rows}, "providers": {}}
        with _cache_lock:
            _cache[org.pk] = entry
    configs = entry["configs"]
    config = (configs.get(user_id) if user_id else None) or configs.get("")
    key = config.pk if config is not None else None
    if key not in entry["providers"]:
        entry["providers"][key] = _provider(config)
    return entry["providers"][key]


def clear_provider_cache(**kwargs) -> None:
    with _cache_lock:
        _cache.clear()


post_save.connect(
    clear_provider_cache, sender="memory.EmbeddingConfig", dispatch_uid="engram-provider-cache-save"
)
post_delete.connect(
    clear_provider_cache, sender="memory.EmbeddingConfig", dispatch_uid="engram-provider-cache-delete"
)
setting_changed.connect(clear_provider_cache, dispatch_uid="engram-provider-cache-settings")


def provider_for(org, user_id: str = ""):
    from memory.models import EmbeddingConfig

    configs = {c.user_id: c for c in EmbeddingConfig.objects.filter(org=org, user_id__in=["", user_id or ""])}
    config = configs.get(user_id or "") if user_id else None
    return _provider(config or configs.get(""))


def _provider(config):
    """The provider a configuration row (None: none for the subject or the org) describes."""
    if config is None:
        if settings.ENGRAM_EMBEDDING_PROVIDER == "openai" and settings.ENGRAM_EMBEDDING_BASE_URL:
            from .remote import OpenAICompatibleProvider

            return OpenAICompatibleProvider(
                base_url=settings.ENGRAM_EMBEDDING_BASE_URL,
                model=settings.ENGRAM_EMBEDDING_MODEL,
                api_key=settings.ENGRAM_EMBEDDING_API_KEY,
                dimensions=settings.ENGRAM_EMBEDDING_DIM,
                trusted=True,  # the operator's endpoint, not a tenant's
            )
        return _local
    if config.provider == "local":
        return _local
    from core.crypto import DecryptionError, decrypt

    from .remote import OpenAICompatibleProvider

    try:
        api_key = decrypt(config.api_key_encrypted)
    except DecryptionError:
        api_key = ""  # logged by decrypt; the provider answers 401 (an EmbeddingError) until it is set again
    return OpenAICompatibleProvider(
        base_url=config.base_url, model=config.model, api_key=api_key, dimensions=config.dimensions
    )
