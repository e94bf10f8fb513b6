"""State every process of a deployment shares: Redis (REDIS_URL, the cache and Celery's broker).

Web processes, workers and the MCP process each keep some things in memory; what is derived from data
that can change elsewhere is checked against a *version* kept here (version/bump). A process keeps what it
derived together with the version it read *before* reading the data, and each use reads the version again
(one GET on loopback, about 0.1 ms): when it differs, the process derives again. A change replaces the
version at once and once more after its transaction commits, so a process that reads the newest version
reads the committed rows too. A version Redis lost (eviction, a flushed database) reads as a new one:
every process derives again. When Redis cannot be reached, version() answers None and the caller reads
the data itself (no cache), so an outage costs time, never correctness.

Keys are named after the database (`engram:<database>:...`): two deployments, or two test databases, on
one Redis never see each other's state.
"""

from __future__ import annotations

import logging
import threading
import uuid

from django.conf import settings
from django.core.signals import setting_changed
from django.db import transaction

log = logging.getLogger(__name__)

_client = None
_client_lock = threading.Lock()


def redis_client():
    """A client of the shared Redis (one pool per process; redis-py starts a new pool after a fork)."""
    global _client
    with _client_lock:
        if _client is None:
            import redis

            _client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        return _client


def _forget_client(setting=None, **kwargs) -> None:
    global _client
    if setting == "REDIS_URL":
        with _client_lock:
            _client = None


setting_changed.connect(_forget_client, dispatch_uid="engram-shared-redis-url")


def key(name: str) -> str:
    """The Redis key of `name` for this deployment's database."""
    return f"engram:{settings.DATABASES['default']['NAME']}:{name}"


def version(name: str) -> str | None:
    """The current version of `name` (a fresh one when there is none yet); None when Redis is unreachable."""
    import redis

    k = key(f"version:{name}")
    try:
        client = redis_client()
        value = client.get(k)
        if value is None:
            client.set(k, uuid.uuid4().hex, nx=True)  # the first to ask sets it; the others read theirs
            value = client.get(k)
    except redis.RedisError as exc:
        log.warning("shared state unreachable, reading %s uncached: %s", name, exc)
        return None
    return value.decode() if value is not None else None


def bump(name: str) -> None:
    """Mark `name` changed: a new version now (this process and others derive again from what they see)
    and another after the current transaction commits (what they derived meanwhile may predate it)."""
    _set_new(name)
    transaction.on_commit(lambda: _set_new(name))


def _set_new(name: str) -> None:
    import redis

    try:
        redis_client().set(key(f"version:{name}"), uuid.uuid4().hex)
    except redis.RedisError as exc:  # the others see the change when their local copies expire
        log.error("could not publish a change of %s to other processes: %s", name, exc)
