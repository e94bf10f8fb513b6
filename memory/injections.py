"""The injection log's rows: which memories a context or search call handed to an agent, for what query."""

from __future__ import annotations

from core.secrets import redact

from .models import InjectionLog


def injection_log_row(*, query: str, **fields) -> InjectionLog:
    """An unsaved injection log; the query is kept as conversation text is, without its secrets.

    Every writer (POST /context, the memory_search tool, a subject import) builds its rows here.
    """
    return InjectionLog(query=redact(query or ""), **fields)
