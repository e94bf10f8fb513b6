"""Embedding providers: the local multilingual model by default, any OpenAI-compatible endpoint by setting."""

from .base import EmbeddingError, EmbeddingProvider
from .resolve import provider_for

__all__ = ["EmbeddingError", "EmbeddingProvider", "provider_for"]
