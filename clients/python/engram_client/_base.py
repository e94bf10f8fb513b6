"""What the sync and async clients share: configuration, retries (429/503 with Retry-After), errors,
cursor pages. The clients differ only in how they send and wait (engram_client.client)."""

from __future__ import annotations

import email.utils
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from .errors import ConnectionError, JobTimeout, error_for

RETRY_STATUSES = frozenset({429, 503})
USER_AGENT = "engram-client-python/0.1.0"


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429 and 503 answers (and of connections that failed before the request was sent).

    `max_retries` retries at most; the wait before retry n (0-based) is the server's Retry-After when it
    sends one, else `backoff · 2**n` with full jitter, never more than `max_backoff`. A Retry-After
    above `max_retry_after` is not waited for: the error is raised at once, carrying `retry_after`."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retrying after failed attempt `attempt` (0-based), or None: give up."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        return random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def api_root(base_url: str | None) -> str:
    """The API's root from the site's URL ("http://host:8000") or the API's ("…/api/v1")."""
    url = (base_url or os.environ.get("ENGRAM_URL") or "http://127.0.0.1:8000").rstrip("/")
    return url if url.endswith("/api/v1") else url + "/api/v1"


def clean(values: dict[str, Any]) -> dict[str, Any]:
    """Drop the arguments left at None: the server applies its own defaults."""
    return {k: v for k, v in values.items() if v is not None}


def query(values: dict[str, Any]) -> dict[str, Any]:
    """Query parameters: None dropped, lists as comma lists, booleans as true/false."""
    out = {}
    for key, value in clean(values).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple, set)):
            value = ",".join(str(v) for v in value)
        out[key] = value
    return out


def idempotency(key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": key} if key else {}


def next_cursor(body: Any) -> str | None:
    """The cursor of the next page of a cursor-paginated answer ({"next": url, "results": [...]})."""
    if not isinstance(body, dict) or not body.get("next"):
        return None
    values = parse_qs(urlsplit(body["next"]).query).get("cursor")
    return values[0] if values else None


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] | None = None
    parse: Callable[[Any], Any] | None = None
    none_if_missing: bool = False  # a 404 answers None instead of raising NotFound


class BaseClient:
    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        org: str | None = None,
        timeout: float | httpx.Timeout = 30.0,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        headers: dict[str, str] | None = None,
    ):
        self.base_url = api_root(base_url)
        api_key = api_key or os.environ.get("ENGRAM_API_KEY")
        self.retry = retry or RetryPolicy()
        if max_retries is not None:
            self.retry = RetryPolicy(
                max_retries=max_retries,
                backoff=self.retry.backoff,
                max_backoff=self.retry.max_backoff,
                max_retry_after=self.retry.max_retry_after,
            )
        self.timeout = timeout
        self.headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **(headers or {})}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        if org:
            self.headers["X-Engram-Org"] = org
        from .resources import attach

        attach(self)

    def _send_args(self, req: Request) -> dict[str, Any]:
        headers = {**self.headers, **(req.headers or {})}
        return {"params": req.params, "json": req.json, "headers": headers}

    @staticmethod
    def _page(
        body: Any, params: dict[str, Any], parse: Callable[[Any], Any]
    ) -> tuple[list[Any], dict | None]:
        """The items of one page, and the parameters of the next one (None: it was the last)."""
        items = [parse(row) for row in body.get("results", [])]
        cursor = next_cursor(body)
        return items, (None if cursor is None else {**params, "cursor": cursor})

    @staticmethod
    def _waited(value: Any, done: Callable[[Any], bool], deadline: float, timeout: float) -> bool:
        """Whether the polled value is final; JobTimeout once the deadline has passed."""
        if done(value):
            return True
        if time.monotonic() >= deadline:
            raise JobTimeout(f"Still {getattr(value, 'status', value)} after {timeout} s.", code="timeout")
        return False

    def _outcome(self, req: Request, response: httpx.Response | None, exc: Exception | None, attempt: int):
        """("retry", seconds) | ("done", value); raises the error when there is nothing more to do."""
        if exc is not None:
            # Only a connection that never carried the request is safe to send again.
            retriable = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
            delay = self.retry.delay(attempt, None) if retriable else None
            if delay is not None:
                return "retry", delay
            raise ConnectionError(f"{req.method} {req.path}: {exc}", code=type(exc).__name__) from exc
        assert response is not None
        if response.status_code in RETRY_STATUSES:
            retry_after = retry_after_seconds(response)
            delay = self.retry.delay(attempt, retry_after)
            if delay is not None:
                return "retry", delay
            raise error_for(response, retry_after)
        if response.status_code == 404 and req.none_if_missing:
            return "done", None
        if response.status_code >= 400:
            raise error_for(response)
        if response.status_code == 204 or not response.content:
            body = None
        else:
            try:
                body = response.json()
            except ValueError:
                body = response.text
        return "done", (req.parse(body) if req.parse and body is not None else body)
