"""Embedding providers: the local multilingual model by default, any OpenAI-compatible endpoint by setting."""

from .base import EmbeddingError, EmbeddingProvider
from .resolve import cached_provider_for, provider_for

__all__ = ["EmbeddingError", "EmbeddingProvider", "cached_provider_for", "provider_for"]
