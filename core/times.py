"""The API's one timestamp format: RFC 3339 in UTC with a Z, as DRF's DateTimeField writes it."""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.utils.dateparse import parse_datetime


def rfc3339(value: datetime | None) -> str | None:
    """2026-12-01T05:42:43.123456Z (no fraction when it is zero); naive times are taken as UTC."""
    if value is None:
        return None
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat().removesuffix("+00:00") + "Z"


def rfc3339_value(value):
    """A stored value in the API's format: a datetime or a date-time string (e.g. an older snapshot
    written with +00:00) as rfc3339(); a date stays YYYY-MM-DD; anything else as it is."""
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str) and len(value) >= 19 and value[10:11] == "T":
        parsed = parse_datetime(value)
        if parsed is not None and parsed.tzinfo is not None:
            return rfc3339(parsed)
    return value
