"""Which provider embeds for a subject: the user's own setting, then the org's, then the server default."""

import threading

from cachetools import TTLCache
from django.conf import settings
from django.core.signals import setting_changed
from django.db import DEFAULT_DB_ALIAS
from django.db.models.signals import post_delete, post_save

from core import shared

from .local import LocalE5Provider

_local = LocalE5Provider()

# Searches resolve the provider on every call; caching saves a query each time. The cache holds an org's
# configurations (one query for all of its subjects) with the version of them (core.shared) it was read
# under; every use compares that with the current version (one Redis GET) and reads again when a change,
# through any process, replaced it. PROVIDER_CACHE_SECONDS only bounds how long a change is missed when
# Redis could not be told of it; with Redis unreachable nothing is cached.
PROVIDER_CACHE_SECONDS = 300.0
PROVIDER_CACHE_MAX_CONFIGS = 1000  # an org with more subject overrides than this is not cached
_cache: TTLCache = TTLCache(maxsize=10_000, ttl=PROVIDER_CACHE_SECONDS)
_cache_lock = threading.Lock()


def _version_name(org_id) -> str:
    return f"embedding-config:{org_id}"


def cached_provider_for(org, user_id: str = ""):
    """provider_for, with the org's configurations remembered in this process until they change."""
    from memory.models import EmbeddingConfig

    current = shared.version(_version_name(org.pk))  # read before the rows: they are at least this new
    if current is None:
        return provider_for(org, user_id)
    with _cache_lock:
        entry = _cache.get(org.pk)
    if entry is None or entry["version"] != current:
        # From the primary even where reads go to a replica: rows older than the version would be kept
        # under it until the next change.
        rows = list(
            EmbeddingConfig.objects.using(DEFAULT_DB_ALIAS).filter(org=org)[: PROVIDER_CACHE_MAX_CONFIGS + 1]
        )
        if len(rows) > PROVIDER_CACHE_MAX_CONFIGS:
            return provider_for(org, user_id)
        entry = {"version": current, "configs": {c.user_id: c for c in rows}, "providers": {}}
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


def _config_changed(sender, instance, **kwargs) -> None:
    """A configuration was saved or deleted: every process reads the org's again (core.shared.bump)."""
    shared.bump(_version_name(instance.org_id))
    with _cache_lock:
        _cache.pop(instance.org_id, None)


post_save.connect(_config_changed, sender="memory.EmbeddingConfig", dispatch_uid="engram-provider-cache-save")
post_delete.connect(
    _config_changed, sender="memory.EmbeddingConfig", dispatch_uid="engram-provider-cache-delete"
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
