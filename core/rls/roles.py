"""The two database roles: the application's (DATABASE_URL), subject to row-level security, and the
tables' owner (DATABASE_OWNER_URL), which runs migrations and is not. Both URLs name the same database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

CREDENTIALS = ("USER", "PASSWORD", "HOST", "PORT")


def switch_to_owner(connection) -> dict | None:
    """Connect as the owner from now on; returns the credentials to switch back with (None: nothing to do)."""
    owner = getattr(settings, "DATABASE_OWNER", None)
    saved = {key: connection.settings_dict.get(key) for key in CREDENTIALS}
    if not owner or all(saved[key] == owner.get(key) for key in CREDENTIALS):
        return None
    connection.close()
    connection.settings_dict.update({key: owner.get(key) for key in CREDENTIALS})
    return saved


def switch_back(connection, saved: dict | None) -> None:
    if saved is None:
        return
    connection.close()
    connection.settings_dict.update(saved)


@contextmanager
def as_owner(connection) -> Iterator[None]:
    saved = switch_to_owner(connection)
    try:
        yield
    finally:
        switch_back(connection, saved)


def grant_app_role(
    connection, *, privileges: str = "SELECT, INSERT, UPDATE, DELETE", sequences: str = "USAGE, SELECT"
) -> None:
    """Give the application's role the rows of every table, now and of tables made later by this owner."""
    role = settings.DATABASE_APP_ROLE
    if not role or role == connection.settings_dict.get("USER"):
        return
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        schema = quote(cursor.fetchone()[0])
        grantee = quote(role)
        for statement in (
            f"GRANT USAGE ON SCHEMA {schema} TO {grantee}",
            f"GRANT {privileges} ON ALL TABLES IN SCHEMA {schema} TO {grantee}",
            f"GRANT {sequences} ON ALL SEQUENCES IN SCHEMA {schema} TO {grantee}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT {privileges} ON TABLES TO {grantee}",
            f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT {sequences} ON SEQUENCES TO {grantee}",
        ):
            cursor.execute(statement)
