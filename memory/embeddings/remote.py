"""Any OpenAI-compatible embeddings endpoint (OpenAI, DashScope, vLLM, Ollama, ...)."""

from django.conf import settings

from core.net import UnsafeURL, check_url, guarded_http_client

from .base import EmbeddingError


class OpenAICompatibleProvider:
    def __init__(
        self, *, base_url: str, model: str, api_key: str = "", dimensions: int = 384, trusted: bool = False
    ):
        self.base_url = base_url
        self.model_name = model
        self.api_key = api_key or "none"
        self.dim = dimensions
        self.trusted = trusted  # the operator's endpoint (ENGRAM_EMBEDDING_*): core.net does not check it

    def _client(self):
        from openai import OpenAI

        timeout = settings.ENGRAM_EMBEDDING_TIMEOUT
        return OpenAI(
            base_url=self.base_url,
            api_key=self.api_key,
            timeout=timeout,
            max_retries=0,
            http_client=guarded_http_client(timeout=timeout, trusted=self.trusted),
        )

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if not self.trusted:
            try:
                check_url(self.base_url)  # again at send time (DNS may have changed); connect() pins it
            except UnsafeURL as exc:
                raise EmbeddingError(f"refused: {exc}") from exc
        try:
            response = self._client().embeddings.create(
                model=self.model_name, input=texts, dimensions=self.dim
            )
        except Exception as exc:  # the client raises many kinds; all mean "not now"
            raise EmbeddingError(f"{type(exc).__name__}: embedding endpoint failed") from exc
        vectors = [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
        if len(vectors) != len(texts) or any(len(v) != self.dim for v in vectors):
            raise EmbeddingError(
                f"endpoint returned {len(vectors)} vectors, expected {len(texts)} of {self.dim} dims"
            )
        return vectors

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._embed(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text])[0]
