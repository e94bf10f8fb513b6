"""Engram (blocking) and AsyncEngram (asyncio): the same resources, sent through httpx.

    with Engram("http://127.0.0.1:8000", api_key) as client:
        client.memories.add("Prefers answers in bullet points", user_id="sam")

With AsyncEngram every resource method returns an awaitable of what Engram's returns, and list methods
return an async iterator.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx

from ._base import BaseClient, Request


class Engram(BaseClient):
    """A blocking client. Close it (or use it as a context manager) to release its connections."""

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, *, http_client=None, **options
    ):
        super().__init__(base_url, api_key, **options)
        self._http = http_client or httpx.Client(timeout=self.timeout)

    def call(self, req: Request) -> Any:
        attempt = 0
        while True:
            response, exc = None, None
            try:
                response = self._http.request(req.method, self.base_url + req.path, **self._send_args(req))
            except httpx.TransportError as error:
                exc = error
            action, value = self._outcome(req, response, exc, attempt)
            if action == "done":
                return value
            time.sleep(value)
            attempt += 1

    def pages(self, path: str, params: dict[str, Any], parse: Callable[[Any], Any]) -> Iterator[Any]:
        """Every item of a cursor-paginated list, page after page."""
        next_params: dict | None = params
        while next_params is not None:
            items, next_params = self._page(
                self.call(Request("GET", path, params=next_params)), params, parse
            )
            yield from items

    def wait_until(
        self, get: Callable[[], Any], done: Callable[[Any], bool], timeout: float, interval: float
    ):
        deadline = time.monotonic() + timeout
        while not self._waited(value := get(), done, deadline, timeout):
            time.sleep(interval)
        return value

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Engram:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class AsyncEngram(BaseClient):
    """The asyncio client: `await client.memories.add(...)`, `async for m in client.memories.list(...)`."""

    def __init__(
        self, base_url: str | None = None, api_key: str | None = None, *, http_client=None, **options
    ):
        super().__init__(base_url, api_key, **options)
        self._http = http_client or httpx.AsyncClient(timeout=self.timeout)

    async def call(self, req: Request) -> Any:
        attempt = 0
        while True:
            response, exc = None, None
            try:
                response = await self._http.request(
                    req.method, self.base_url + req.path, **self._send_args(req)
                )
            except httpx.TransportError as error:
                exc = error
            action, value = self._outcome(req, response, exc, attempt)
            if action == "done":
                return value
            await asyncio.sleep(value)
            attempt += 1

    async def pages(
        self, path: str, params: dict[str, Any], parse: Callable[[Any], Any]
    ) -> AsyncIterator[Any]:
        next_params: dict | None = params
        while next_params is not None:
            body = await self.call(Request("GET", path, params=next_params))
            items, next_params = self._page(body, params, parse)
            for item in items:
                yield item

    async def wait_until(
        self, get: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], timeout: float, interval: float
    ):
        deadline = time.monotonic() + timeout
        while not self._waited(value := await get(), done, deadline, timeout):
            await asyncio.sleep(interval)
        return value

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncEngram:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
