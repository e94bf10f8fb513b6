"""LangGraph's `BaseStore` backed by Engram's store API, so a LangGraph agent keeps its long-term memory in
Engram (per org, with the content gate, semantic search and TTL):

    from engram_client.langgraph import EngramStore
    from langgraph.prebuilt import create_react_agent

    store = EngramStore("http://127.0.0.1:8000", api_key)
    agent = create_react_agent(model, tools, store=store)

Needs the `langgraph` extra (`pip install "engram-client[langgraph]"`). `batch` sends each operation with
the blocking client, `abatch` with the asyncio one; semantic search embeds on the server (no embedding
model to configure here).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ImportError as exc:  # pragma: no cover - only without the extra
    raise ImportError(
        'engram_client.langgraph needs LangGraph: pip install "engram-client[langgraph]"'
    ) from exc

from .client import AsyncEngram, Engram
from .models import StoreItem


def _item(row: StoreItem | None) -> Item | None:
    if row is None:
        return None
    return Item(
        value=row.value,
        key=row.key,
        namespace=tuple(row.namespace),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _search_item(row: StoreItem) -> SearchItem:
    return SearchItem(
        namespace=tuple(row.namespace),
        key=row.key,
        value=row.value,
        created_at=row.created_at,
        updated_at=row.updated_at,
        score=row.score,
    )


def _ttl(value: Any) -> float | None:
    """PutOp's ttl in minutes; LangGraph's NOT_PROVIDED and None both mean none."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _conditions(op: ListNamespacesOp) -> tuple[list[str] | None, list[str] | None]:
    prefix = suffix = None
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix":
            prefix = list(condition.path)
        elif condition.match_type == "suffix":
            suffix = list(condition.path)
    return prefix, suffix


class EngramStore(BaseStore):
    """A LangGraph store whose items live in Engram, in the org of the API key."""

    supports_ttl = True

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        client: Engram | None = None,
        async_client: AsyncEngram | None = None,
        **options: Any,
    ):
        self._base_url, self._api_key, self._options = base_url, api_key, options
        self._client = client
        self._async_client = async_client

    @property
    def client(self) -> Engram:
        if self._client is None:
            self._client = Engram(self._base_url, self._api_key, **self._options)
        return self._client

    @property
    def async_client(self) -> AsyncEngram:
        if self._async_client is None:
            self._async_client = AsyncEngram(self._base_url, self._api_key, **self._options)
        return self._async_client

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        store = self.client.store
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(_item(store.get(op.namespace, op.key, refresh_ttl=op.refresh_ttl)))
            elif isinstance(op, PutOp):
                if op.value is None:
                    store.delete(op.namespace, op.key)
                else:
                    store.put(op.namespace, op.key, dict(op.value), index=op.index, ttl=_ttl(op.ttl))
                results.append(None)
            elif isinstance(op, SearchOp):
                rows = store.search(
                    op.namespace_prefix,
                    query=op.query,
                    filter=op.filter,
                    limit=op.limit,
                    offset=op.offset,
                    refresh_ttl=op.refresh_ttl,
                )
                results.append([_search_item(row) for row in rows])
            elif isinstance(op, ListNamespacesOp):
                prefix, suffix = _conditions(op)
                found = store.namespaces(
                    prefix=prefix, suffix=suffix, max_depth=op.max_depth, limit=op.limit, offset=op.offset
                )
                results.append([tuple(namespace) for namespace in found])
            else:
                raise ValueError(f"Unknown store operation: {op!r}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        store = self.async_client.store
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(_item(await store.get(op.namespace, op.key, refresh_ttl=op.refresh_ttl)))
            elif isinstance(op, PutOp):
                if op.value is None:
                    await store.delete(op.namespace, op.key)
                else:
                    await store.put(op.namespace, op.key, dict(op.value), index=op.index, ttl=_ttl(op.ttl))
                results.append(None)
            elif isinstance(op, SearchOp):
                rows = await store.search(
                    op.namespace_prefix,
                    query=op.query,
                    filter=op.filter,
                    limit=op.limit,
                    offset=op.offset,
                    refresh_ttl=op.refresh_ttl,
                )
                results.append([_search_item(row) for row in rows])
            elif isinstance(op, ListNamespacesOp):
                prefix, suffix = _conditions(op)
                found = await store.namespaces(
                    prefix=prefix, suffix=suffix, max_depth=op.max_depth, limit=op.limit, offset=op.offset
                )
                results.append([tuple(namespace) for namespace in found])
            else:
                raise ValueError(f"Unknown store operation: {op!r}")
        return results

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    async def aclose(self) -> None:
        if self._async_client is not None:
            await self._async_client.aclose()


__all__ = ["EngramStore"]
