"""Row-level security as defence in depth: which org's rows the database lets this code see.

Every tenant table has a PostgreSQL policy (workspace/migrations/0001_row_level_security.py) that shows a
row only when its org_id is the org bound here, or when the all-orgs scope is bound; nothing bound, no
rows. The access module (projects.access) still decides everything; the policy catches a query that
forgets the org filter, which then finds nothing instead of another org's rows.

The scope lives in a context variable: a request binds its org once the actor is known (the signed-in
account alone before that, which sees its own memberships in every org: the org switcher); Celery tasks,
management commands, the Django admin for staff and the tests' own set-up bind all orgs. The database
backend in core/rls/base.py passes the scope to PostgreSQL as session settings (engram.org_id,
engram.account_id, engram.all_orgs) before a statement, only when it differs from what that connection
already has: in steady state that costs no round trip at all.

Superusers, roles with BYPASSRLS and the tables' owner are not subject to the policies: the application
connects as a role that is none of them (DATABASE_URL) and migrations run as the owner
(DATABASE_OWNER_URL, see `migrate` in projects/management/commands/).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass

# The settings the policies read (current_setting(name, true): an unset one reads as empty).
ORG_SETTING = "engram.org_id"
ACCOUNT_SETTING = "engram.account_id"
ALL_ORGS_SETTING = "engram.all_orgs"


@dataclass(frozen=True)
class Scope:
    """What the database shows: one org's rows, an account's own memberships, or every org's."""

    org_id: int | None = None
    account_id: int | None = None
    all_orgs: bool = False

    def settings(self) -> tuple[str, str, str]:
        """(engram.org_id, engram.account_id, engram.all_orgs) as set_config takes them."""
        return (
            "" if self.org_id is None else str(int(self.org_id)),
            "" if self.account_id is None else str(int(self.account_id)),
            "on" if self.all_orgs else "",
        )


NOTHING = Scope()
ALL_ORGS = Scope(all_orgs=True)

_scope: ContextVar[Scope] = ContextVar("engram_rls_scope", default=NOTHING)


def current() -> Scope:
    return _scope.get()


def enter(scope: Scope) -> Token:
    """Bind `scope` until leave(token) (signal handlers that cannot use a with block)."""
    return _scope.set(scope)


def leave(token: Token) -> None:
    _scope.reset(token)


@contextmanager
def scoped(scope: Scope) -> Iterator[Scope]:
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def all_orgs():
    """Every org's rows, for code that acts across orgs by design (sweeps, commands, staff, key lookup)."""
    return scoped(ALL_ORGS)


def bind_org(org_id: int, account_id: int | None = None) -> None:
    """One org's rows (and the account's own memberships) until the enclosing scope ends (a request's,
    set by projects.middleware.RowSecurityMiddleware)."""
    _scope.set(Scope(org_id=org_id, account_id=account_id))


def bind_account(account_id: int | None) -> None:
    """Only the account's own memberships, until an org is bound: what resolving the actor needs."""
    _scope.set(Scope(account_id=account_id))


def use_all_orgs_in_this_context() -> None:
    """For a process's main thread that acts across orgs (manage.py); threads it starts begin unbound."""
    _scope.set(ALL_ORGS)


# The policy of a tenant table: its rows exist only for their org's scope, or for all orgs; an empty or
# unset setting matches nothing. A migration that adds a table with an org column runs tenant_policy().
IN_SCOPE = (
    f"current_setting('{ALL_ORGS_SETTING}', true) = 'on'"
    f" OR org_id = NULLIF(current_setting('{ORG_SETTING}', true), '')::bigint"
)


def tenant_policy(table: str) -> tuple[str, str]:
    """(forward, reverse) SQL for migrations.RunSQL: row-level security on `table` by its org_id."""
    return (
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;"
        f" CREATE POLICY tenant ON {table} USING ({IN_SCOPE}) WITH CHECK ({IN_SCOPE});",
        f"DROP POLICY tenant ON {table}; ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;",
    )
