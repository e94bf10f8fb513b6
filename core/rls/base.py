"""Django's PostgreSQL backend, plus the row-level security binding (core.rls): ENGINE "core.rls".

Before a statement runs, the connection gets the current scope as session settings, unless it has it
already (remembered on the connection, forgotten on a new connection and on any rollback, which may undo
a set_config made inside the transaction). The set_config goes through the driver's own cursor: it is
not a query of the application's (debug logs and query counts do not see it)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.db.backends.postgresql import base

from core.replicas import note_writes

from . import ACCOUNT_SETTING, ALL_ORGS_SETTING, ORG_SETTING, current

log = logging.getLogger(__name__)

BIND_SQL = f"SELECT set_config('{ORG_SETTING}', %s, false), set_config('{ACCOUNT_SETTING}', %s, false), "
BIND_SQL += f"set_config('{ALL_ORGS_SETTING}', %s, false)"

BYPASS_SQL = """
SELECT r.rolsuper OR r.rolbypassrls
       OR EXISTS (SELECT 1 FROM pg_tables t WHERE t.tablename = 'memory_memoryitem'
                  AND t.schemaname = current_schema() AND t.tableowner = current_user)
FROM pg_roles r WHERE r.rolname = current_user
"""
_warned = False
ROLLING_BACK = object()


def bind_scope(execute, sql, params, many, context):
    """An execute wrapper: set the scope's settings on the connection when they changed."""
    context["connection"].bind_row_security()
    return execute(sql, params, many, context)


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rls_bound = None  # the scope this connection's settings hold; None: unknown
        self.execute_wrappers.append(bind_scope)
        if self.alias == DEFAULT_DB_ALIAS:  # the primary: read-your-writes notes what wrote (core.replicas)
            self.execute_wrappers.append(note_writes)

    def bind_row_security(self) -> None:
        """Give the open connection the current scope, if it has another; code that runs statements on the
        driver's connection itself (memory.search.sql) calls this first."""
        scope = current()
        if self.rls_bound != scope and self.rls_bound is not ROLLING_BACK:
            with self.connection.cursor() as cursor:
                cursor.execute(BIND_SQL, scope.settings())
            self.rls_bound = scope

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        self.rls_bound = None
        owner = getattr(settings, "DATABASE_OWNER", None)
        if not owner or owner.get("USER") != self.settings_dict.get("USER"):  # not migrating as the owner
            _warn_if_bypassing(connection)
        return connection

    def _rollback(self):
        self.rls_bound = None
        super()._rollback()

    def _savepoint_rollback(self, sid):
        self.rls_bound = ROLLING_BACK  # the ROLLBACK TO statement itself runs in a failed transaction
        try:
            super()._savepoint_rollback(sid)
        finally:
            self.rls_bound = None


def _warn_if_bypassing(connection) -> None:
    """Once per process: say so when the application's role is not subject to the policies."""
    global _warned
    if _warned:
        return
    _warned = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(BYPASS_SQL)
            row = cursor.fetchone()
        if not connection.autocommit:
            connection.rollback()
    except Exception as exc:  # noqa: BLE001 - a warning only; the connection's user sees real errors soon
        log.debug("could not check the database role: %s", exc)
        return
    if row and row[0]:
        log.warning(
            "The database role in DATABASE_URL is a superuser, has BYPASSRLS or owns the tables: row-level"
            " security does not apply to it. Connect as a role that is none of these and run migrations"
            " with DATABASE_OWNER_URL (README, 'Database roles')."
        )
