"""Reads on streaming replicas: which database a read goes to.

Routing is explicit. The search, context and list endpoints declare themselves reads (`read_on_replica`
on the view's handler, or `run_read` around a service call); their ORM queries and the search statement
(memory.search.sql, through `read_alias()`) go to a replica (DATABASE_REPLICAS, settings) for that call.
Everything else goes to the primary: writes, reads inside a transaction (a read in an atomic block sees
that block's writes), admin, sessions and authentication, migrations (which run on the primary only),
Celery tasks and management commands.

A declared read still goes to the primary when
- the caller (API key or account) wrote in the last DATABASE_REPLICA_PIN_SECONDS: a successful request
  with an unsafe method (POST, PUT, PATCH, DELETE) that wrote to the primary (an INSERT, UPDATE, DELETE
  or MERGE outside a declared read: a context call's injection log does not count) pins its caller, in
  Redis (Django's cache), so the pin holds in every web process: read-your-writes;
- its org's access changed in the last DATABASE_REPLICA_PIN_SECONDS (a membership, a role, a project, an
  API key or a key's projects: projects.signals pins the org, pin_org): the search statement reads those
  tables itself, so a replica that has not replayed a removed membership would still grant access;
- no replica is usable: each process checks a replica at most every DATABASE_REPLICA_CHECK_SECONDS (one
  query on the primary, pg_current_wal_lsn(), and one on the replica: has it replayed that far, and if
  not, how old is the last transaction it replayed); one further behind than
  DATABASE_REPLICA_MAX_LAG_SECONDS, or not in recovery (promoted, or not a replica), is not used;
- a replica failed (cannot connect, or the connection broke): it is left alone for
  DATABASE_REPLICA_RETRY_SECONDS (a circuit breaker): a dead replica costs one failed connection per
  process per interval, not one per request. A read that fails on a replica is run again on the primary;
  the caller sees no error.

Why a pin and not an LSN per caller: the pin costs one Redis SET per write request and one GET per read,
and no query on either database. With the pin at least MAX_LAG + CHECK (the settings enforce it),
read-your-writes is exact, not likely: a read at t >= write + pin uses a replica whose lag, measured at
most CHECK seconds earlier, was at most MAX_LAG, so it had replayed every commit before t - CHECK - MAX_LAG,
the write among them. Comparing LSNs would end the pin as soon as the replica caught up (often sooner),
for a query on the primary after every write and a stored LSN per caller.

Row-level security: a replica alias uses the same engine (core.rls) and role as the primary; a physical
replica has the same policies, roles and grants, so a read there sees exactly what it would on the primary.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
    transaction,
)

from core import shared

log = logging.getLogger(__name__)

PRIMARY = DEFAULT_DB_ALIAS
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The header a declared read answers with when replicas are configured: which database served it.
READ_HEADER = "X-Engram-Read-From"

_read_alias: ContextVar[str | None] = ContextVar("engram_read_alias", default=None)
# Whether this request wrote to the primary (outside a declared read): set by note_writes, reset per request.
_wrote: ContextVar[bool] = ContextVar("engram_wrote", default=False)
WRITE_STATEMENTS = ("INSERT", "UPDATE", "DELETE", "MERGE ")


def note_writes(execute, sql, params, many, context):
    """An execute wrapper of the primary's connections (core.rls): remembers that a write ran."""
    if not _wrote.get() and isinstance(sql, str) and sql.lstrip()[:6].upper().startswith(WRITE_STATEMENTS):
        _wrote.set(True)
    return execute(sql, params, many, context)


def read_alias() -> str:
    """The database a read in this context goes to: the chosen replica inside a declared read, else the
    primary; the primary inside a transaction on it."""
    alias = _read_alias.get()
    if alias is None or connections[PRIMARY].in_atomic_block:
        return PRIMARY
    return alias


# Sign-in, sessions and the admin read from the primary even inside a declared read.
PRIMARY_APPS = frozenset({"auth", "sessions", "admin"})


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        meta = model._meta
        if meta.app_label in PRIMARY_APPS or meta.label == settings.AUTH_USER_MODEL:
            return PRIMARY
        return read_alias()

    def db_for_write(self, model, **hints):
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True  # every alias is the same database (the primary or a copy of it)

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY


# ---- read-your-writes: the pin -----------------------------------------------------------------------


def caller_of(actor) -> str | None:
    """'key:<id>' or 'account:<id>' for an actor (projects.access.Actor); None for the system."""
    if actor is None or getattr(actor, "is_system", False):
        return None
    if getattr(actor, "api_key", None) is not None:
        return f"key:{actor.api_key.pk}"
    account = getattr(actor, "account", None)
    return f"account:{account.pk}" if account is not None and account.pk else None


def _caller_of_request(request) -> str | None:
    actor = getattr(request, "actor", None)  # the pages' (projects.web.org_page)
    if actor is not None:
        return caller_of(actor)
    auth = getattr(request, "auth", None)  # DRF puts the API key here (on Django's request too)
    if getattr(getattr(auth, "_meta", None), "label_lower", "") == "projects.apikey":
        return f"key:{auth.pk}"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"account:{user.pk}"
    return None


def _pin_key(caller: str) -> str:
    return shared.key(f"replica-pin:{caller}")  # named after the database, like all shared state


def pin(caller: str | None) -> None:
    """Send the caller's reads to the primary for DATABASE_REPLICA_PIN_SECONDS (every process)."""
    if caller is None or not settings.DATABASE_REPLICAS:
        return
    try:
        cache.set(_pin_key(caller), 1, timeout=settings.DATABASE_REPLICA_PIN_SECONDS)
    except Exception as exc:  # noqa: BLE001 - Redis down: reads may then find the replica behind; say so
        log.warning("could not pin %s to the primary: %s", caller, exc)


def pinned(caller: str | None, org_id: int | None = None) -> bool:
    """Whether the caller, or its whole org, reads from the primary now (one Redis round trip)."""
    keys = [_pin_key(caller)] if caller is not None else []
    if org_id is not None:
        keys.append(_pin_key(f"org:{org_id}"))
    if not keys:
        return False
    try:
        return bool(cache.get_many(keys))
    except Exception:  # noqa: BLE001 - without Redis the pin is unknown: the primary is always right
        return True


def pin_org(org_id: int | None) -> None:
    """Send every read of the org to the primary for DATABASE_REPLICA_PIN_SECONDS (every process).

    For changes of who may read what (memberships, roles, projects, API keys and their projects): the
    search statement reads those tables itself, so on a replica a removed membership would still grant
    access until replayed. Pinned at once and again when the transaction commits, so the pin outlasts the
    commit by the full interval and no read of the org meets a replica that has not replayed the change.
    """
    if org_id is None or not settings.DATABASE_REPLICAS:
        return
    pin(f"org:{org_id}")
    transaction.on_commit(lambda: pin(f"org:{org_id}"))


# ---- replica health: lag check and circuit breaker -----------------------------------------------------


@dataclass
class Health:
    usable: bool = False
    lag: float | None = None  # seconds behind the primary at the last check (None: not known)
    checked: float = 0.0  # time.monotonic() of the last check
    down_until: float = 0.0  # circuit breaker: no attempt before this
    reason: str = ""


_health: dict[str, Health] = {}
_checking = threading.Lock()

CHECK_SQL = """
SELECT pg_is_in_recovery(),
       COALESCE(pg_last_wal_replay_lsn() >= %s::pg_lsn, false),
       EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())
"""


def health(alias: str) -> Health:
    return _health.setdefault(alias, Health())


def reset() -> None:
    """Forget every replica's state (tests, or after the configuration changed)."""
    _health.clear()


def trip(alias: str, reason: str) -> None:
    """The replica failed: leave it alone for DATABASE_REPLICA_RETRY_SECONDS."""
    state = health(alias)
    if state.usable or not state.down_until:
        log.warning(
            "replica %s is not used for %ss: %s", alias, settings.DATABASE_REPLICA_RETRY_SECONDS, reason
        )
    state.usable, state.reason = False, reason
    state.checked = time.monotonic()
    state.down_until = state.checked + settings.DATABASE_REPLICA_RETRY_SECONDS
    _close(alias)


def _close(alias: str) -> None:
    try:
        connections[alias].close()
    except DatabaseError:
        pass  # a broken connection is dropped all the same


def check(alias: str) -> Health:
    """Measure the replica's lag now (one query on each database)."""
    state = health(alias)
    try:
        with connections[PRIMARY].cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()")
            primary_lsn = cursor.fetchone()[0]
    except DatabaseError:
        return state  # the primary's trouble is not the replica's; its reads will say so themselves
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(CHECK_SQL, [primary_lsn])
            in_recovery, caught_up, since_replay = cursor.fetchone()
    except DatabaseError as exc:
        trip(alias, f"{type(exc).__name__}: {str(exc).strip()[:200]}")
        return state
    now = time.monotonic()
    if not in_recovery:
        state.usable, state.lag, state.reason = False, None, "not a replica (not in recovery)"
    else:
        lag = 0.0 if caught_up else (float(since_replay) if since_replay is not None else float("inf"))
        state.lag = lag
        state.usable = lag <= settings.DATABASE_REPLICA_MAX_LAG_SECONDS
        state.reason = "" if state.usable else f"{lag:.1f} s behind the primary"
    state.checked, state.down_until = now, 0.0
    return state


def _usable(alias: str) -> bool:
    state = health(alias)
    now = time.monotonic()
    if state.down_until and now < state.down_until:
        return False
    if (
        state.checked
        and now - state.checked < settings.DATABASE_REPLICA_CHECK_SECONDS
        and not state.down_until
    ):
        return state.usable
    # One thread of the process measures; the others use what is known meanwhile (or the primary).
    if not _checking.acquire(blocking=False):
        return state.usable and not state.down_until
    try:
        return check(alias).usable
    finally:
        _checking.release()


def choose(caller: str | None, org_id: int | None = None) -> str | None:
    """The replica this caller's next read goes to, or None for the primary."""
    replicas = settings.DATABASE_REPLICAS
    if not replicas or connections[PRIMARY].in_atomic_block or pinned(caller, org_id):
        return None
    usable = [alias for alias in replicas if _usable(alias)]
    return random.choice(usable) if usable else None


# ---- declared reads --------------------------------------------------------------------------------


def _broken(alias: str) -> bool:
    raw = connections[alias].connection
    return raw is None or raw.closed or getattr(raw, "broken", False)


def run_read(actor, read, *, request=None):
    """read() on a replica if this actor may read from one now, else on the primary; a read that fails
    on the replica (it went down, or a recovery conflict cancelled the query) runs again on the primary."""
    wrote = _wrote.get()  # what a declared read writes (an injection log, recall counts) pins no one
    try:
        return _run_read(actor, read, request)
    finally:
        _wrote.set(wrote)


def _run_read(actor, read, request):
    org = getattr(actor, "org", None)
    alias = choose(caller_of(actor), getattr(org, "pk", None))
    if request is not None:
        request = getattr(request, "_request", request)  # DRF's request wraps Django's
        request.engram_read_from = alias or PRIMARY
    if alias is None:
        return read()
    token = _read_alias.set(alias)
    try:
        return read()
    except (OperationalError, InterfaceError) as exc:
        if _broken(alias):
            trip(alias, f"{type(exc).__name__}: {str(exc).strip()[:200]}")
        else:
            _close(alias)
        log.info("a read on %s failed (%s); reading from the primary", alias, exc)
    finally:
        _read_alias.reset(token)
    if request is not None:
        request.engram_read_from = PRIMARY
    return read()


def read_on_replica(handler):
    """For an API view's handler (ActorMixin: self.actor is set): the whole handler is a declared read."""

    @functools.wraps(handler)
    def wrapped(view, request, *args, **kwargs):
        return run_read(view.actor, lambda: handler(view, request, *args, **kwargs), request=request)

    return wrapped


class ReadYourWritesMiddleware:
    """Pins the caller of a successful write request to the primary; says where a declared read ran."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not settings.DATABASE_REPLICAS:
            return self.get_response(request)
        token = _wrote.set(False)
        try:
            response = self.get_response(request)
            wrote = _wrote.get()
        finally:
            _wrote.reset(token)
        served = getattr(request, "engram_read_from", None)
        if served is not None:
            response[READ_HEADER] = served
        elif wrote and request.method in UNSAFE_METHODS and response.status_code < 400:
            pin(_caller_of_request(request))
        return response
