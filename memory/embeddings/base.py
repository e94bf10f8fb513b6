from typing import Protocol


class EmbeddingError(Exception):
    """The provider could not embed (down, timeout, bad answer); the caller keeps the item and retries later."""


class EmbeddingProvider(Protocol):
    model_name: str  # recorded on each item; search compares only vectors of one model
    dim: int

    def embed_passages(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...
