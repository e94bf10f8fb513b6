"""Which chat model an org uses for extraction, reconciliation and summaries.

Resolution: the org's LLMConfig, else the server's ENGRAM_LLM_* settings, else None (rule-based paths run).
API keys are stored encrypted (core.crypto) and never returned or logged.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from core.crypto import DecryptionError, decrypt, encrypt
from core.llm import LLMClient

from .models import LLMConfig


def llm_config_get(*, org) -> LLMConfig | None:
    """The org's own chat model configuration, or None."""
    return LLMConfig.objects.filter(org=org).first()


def llm_for(org) -> LLMClient | None:
    """The chat model for an org: its own configuration, then the server's, else None."""
    config = llm_config_get(org=org) if org is not None else None
    if config is not None and config.base_url and config.model:
        try:
            api_key = decrypt(config.api_key_encrypted)
        except DecryptionError:
            return None  # logged by decrypt; the rule-based paths run until the key is set again
        return LLMClient(
            base_url=config.base_url, model=config.model, api_key=api_key, timeout=settings.ENGRAM_LLM_TIMEOUT
        )
    if settings.ENGRAM_LLM_BASE_URL and settings.ENGRAM_LLM_MODEL:
        return LLMClient(
            base_url=settings.ENGRAM_LLM_BASE_URL,
            model=settings.ENGRAM_LLM_MODEL,
            api_key=settings.ENGRAM_LLM_API_KEY,
            timeout=settings.ENGRAM_LLM_TIMEOUT,
            trusted=True,  # the operator's endpoint, not a tenant's
        )
    return None


@transaction.atomic
def llm_config_set(*, org, base_url: str, model: str, api_key: str | None = None) -> LLMConfig:
    """Create or change an org's chat model; api_key None keeps the stored key, "" clears it."""
    config = LLMConfig.objects.select_for_update().filter(org=org).first() or LLMConfig(org=org)
    config.base_url = base_url.strip()
    config.model = model.strip()
    if api_key is not None:
        config.api_key_encrypted = encrypt(api_key)
    config.save()
    return config


@transaction.atomic
def llm_config_delete(*, org) -> int:
    """Remove the org's chat model (the server's default, if any, applies again)."""
    deleted, _ = LLMConfig.objects.filter(org=org).delete()
    return deleted
