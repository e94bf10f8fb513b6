"""An OpenAI-compatible chat model client: one call, one reply, errors sorted into transient or not."""

from __future__ import annotations

from dataclasses import dataclass

from .net import UnsafeURL, check_url, guarded_http_client


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
    trusted: bool = False  # the operator's own endpoint (ENGRAM_LLM_*): core.net does not check its address

    def _client(self):
        from openai import OpenAI

        return OpenAI(
            base_url=self.base_url,
            api_key=self.api_key or "none",
            timeout=self.timeout,
            max_retries=0,
            http_client=guarded_http_client(timeout=self.timeout, trusted=self.trusted),
        )

    def chat(self, messages: list[dict], *, json_mode: bool = False, temperature: float = 0.0) -> str:
        """One chat completion; the reply's text. Raises LLMError (never the client's own exceptions)."""
        import openai

        kwargs = {"model": self.model, "messages": messages, "temperature": temperature}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if not self.trusted:
            try:
                check_url(self.base_url)  # again at send time (DNS may have changed); connect() pins it
            except UnsafeURL as exc:
                raise LLMError(f"refused: {exc}", transient=False) from exc
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
