"""The OpenAI-compatible chat model used for extraction, reconciliation and summaries.

Resolution: the org's LLMConfig, else the server's ENGRAM_LLM_* settings, else None (rule-based paths run).
API keys are stored encrypted (memory.crypto) and never returned or logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from .crypto import decrypt, encrypt
from .models import LLMConfig

log = logging.getLogger(__name__)


class LLMError(Exception):
    """The model did not answer usefully. transient=True: worth retrying later (timeout, 5xx, connection)."""

    def __init__(self, message: str, *, transient: bool):
        super().__init__(message)
        self.transient = transient


@dataclass
class LLMClient:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 30.0

    def _client(self):
        from openai import OpenAI

        return OpenAI(
            base_url=self.base_url, api_key=self.api_key or "none", timeout=self.timeout, max_retries=0
        )

    def chat(self, messages: list[dict], *, json_mode: bool = False, temperature: float = 0.0) -> str:
        """One chat completion; the reply's text. Raises LLMError (never the client's own exceptions)."""
        import openai

        kwargs = {"model": self.model, "messages": messages, "temperature": temperature}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        client = self._client()
        try:
            try:
                response = client.chat.completions.create(**kwargs)
            except openai.BadRequestError:
                if not json_mode:
                    raise
                # Some servers do not know response_format; the prompt asks for JSON anyway.
                kwargs.pop("response_format")
                response = client.chat.completions.create(**kwargs)
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise LLMError(f"{type(exc).__name__}: the chat model did not answer", transient=True) from exc
        except openai.APIStatusError as exc:
            # 5xx and 429 are worth another try later; 4xx (bad key, unknown model) are not.
            transient = exc.status_code >= 500 or exc.status_code == 429
            raise LLMError(f"HTTP {exc.status_code} from the chat model", transient=transient) from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"{type(exc).__name__}: chat model error", transient=False) from exc
        choices = getattr(response, "choices", None) or []
        content = choices[0].message.content if choices else None
        if not content:
            raise LLMError("the chat model returned an empty reply", transient=False)
        return content


def llm_for(org) -> LLMClient | None:
    """The chat model for an org: its own configuration, then the server's, else None."""
    config = LLMConfig.objects.filter(org=org).first() if org is not None else None
    if config is not None and config.base_url and config.model:
        return LLMClient(
            base_url=config.base_url,
            model=config.model,
            api_key=decrypt(config.api_key_encrypted),
            timeout=settings.ENGRAM_LLM_TIMEOUT,
        )
    if settings.ENGRAM_LLM_BASE_URL and settings.ENGRAM_LLM_MODEL:
        return LLMClient(
            base_url=settings.ENGRAM_LLM_BASE_URL,
            model=settings.ENGRAM_LLM_MODEL,
            api_key=settings.ENGRAM_LLM_API_KEY,
            timeout=settings.ENGRAM_LLM_TIMEOUT,
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
