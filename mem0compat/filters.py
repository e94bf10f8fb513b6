"""Mem0's filter language (the `filters` of get_all, search and add) as a Q over memory rows.

    {"AND": [{"user_id": "alex"}, {"created_at": {"gte": "2026-01-01"}}]}
    {"OR": [{"agent_id": "a"}, {"agent_id": {"in": ["b", "c"]}}]}
    {"NOT": [{"categories": {"contains": "food"}}]}

Mem0's entities are Engram's: user_id the subject, agent_id the agent, run_id the session, app_id the
project (its id or slug). The Q only narrows: the rows it is applied to are always the caller's readable
memories (memory.selectors.readable_memories). A key or operator Mem0 does not define, or a value of the
wrong kind, is a FilterError (HTTP 400) naming the valid ones.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.translation import gettext as _

ENTITY_FIELDS = {"user_id": "user_id", "agent_id": "agent_id", "run_id": "session_id", "app_id": "project"}
DATE_FIELDS = {"created_at": "created_at", "updated_at": "updated_at"}
LOGICAL = ("AND", "OR", "NOT")
KEYS = [*LOGICAL, *ENTITY_FIELDS, *DATE_FIELDS, "metadata", "categories", "keywords", "memory_ids"]
ENTITY_OPERATORS = ["eq", "ne", "in", "nin"]
DATE_OPERATORS = ["eq", "gt", "gte", "lt", "lte"]
CATEGORY_OPERATORS = ["contains", "in"]
KEYWORD_OPERATORS = ["contains", "icontains"]


class FilterError(ValueError):
    """A filter Mem0's language does not allow, or a value of the wrong kind (HTTP 400)."""


def _invalid(where: str, value, valid) -> FilterError:
    return FilterError(
        _('filters: %(where)s: "%(value)s" is not valid. Valid values: %(valid)s.')
        % {"where": where, "value": value, "valid": ", ".join(valid)}
    )


def filters_q(filters, projects=None) -> Q:
    """The Q of a whole `filters` object. projects(ref) resolves an app_id (id or slug) to a Project; it
    raises Http404 for a project out of the caller's reach."""
    if not isinstance(filters, dict):
        raise FilterError(_("filters: must be a JSON object."))
    return _node(filters, "filters", projects)


def _node(node, where: str, projects) -> Q:
    if not isinstance(node, dict):
        raise FilterError(_("%(where)s: must be a JSON object.") % {"where": where})
    q = Q()
    for key, value in node.items():
        here = f"{where}.{key}"
        if key in LOGICAL:
            if not isinstance(value, list) or not value:
                raise FilterError(_("%(where)s: must be a non-empty list of filters.") % {"where": here})
            parts = [_node(item, f"{here}[{i}]", projects) for i, item in enumerate(value)]
            if key == "AND":
                q &= _all(parts)
            elif key == "OR":
                combined = Q(pk__in=[])
                for part in parts:
                    combined |= part
                q &= combined
            else:  # NOT: none of them
                for part in parts:
                    q &= ~part
        elif key in ENTITY_FIELDS:
            q &= _entity(key, value, here, projects)
        elif key in DATE_FIELDS:
            q &= _dates(DATE_FIELDS[key], value, here)
        elif key == "metadata":
            if not isinstance(value, dict):
                raise FilterError(_("%(where)s: must be a JSON object.") % {"where": here})
            q &= Q(metadata__contains=value)
        elif key == "categories":
            q &= _categories(value, here)
        elif key == "keywords":
            q &= _keywords(value, here)
        elif key == "memory_ids":
            q &= Q(pk__in=_memory_ids(value, here))
        else:
            raise _invalid(where, key, KEYS)
    return q


def _all(parts: list[Q]) -> Q:
    q = Q()
    for part in parts:
        q &= part
    return q


def _text(value, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise FilterError(_("%(where)s: must be a non-empty string.") % {"where": where})
    return str(value)


def _entity_q(key: str, value: str, where: str, projects) -> Q:
    if key == "app_id":
        project = projects(value) if projects else None
        return Q(project=project)
    return Q(**{ENTITY_FIELDS[key]: value})


def _entity(key: str, value, where: str, projects) -> Q:
    column = ENTITY_FIELDS[key]
    if value == "*":  # any value: the memory has this entity at all
        return ~Q(project=None) if key == "app_id" else ~Q(**{column: ""})
    if not isinstance(value, dict):
        return _entity_q(key, _text(value, where), where, projects)
    q = Q()
    for op, operand in value.items():
        if op == "eq":
            q &= _entity_q(key, _text(operand, f"{where}.eq"), where, projects)
        elif op == "ne":
            q &= ~_entity_q(key, _text(operand, f"{where}.ne"), where, projects)
        elif op in ("in", "nin"):
            if not isinstance(operand, list) or not operand:
                raise FilterError(_("%(where)s: must be a non-empty list.") % {"where": f"{where}.{op}"})
            any_of = Q(pk__in=[])
            for i, item in enumerate(operand):
                any_of |= _entity_q(key, _text(item, f"{where}.{op}[{i}]"), where, projects)
            q &= any_of if op == "in" else ~any_of
        else:
            raise _invalid(where, op, ENTITY_OPERATORS)
    return q


def parse_when(value, where: str, *, end_of_day: bool = False) -> datetime:
    """An ISO 8601 date or date-time (a date alone is its midnight UTC, or the next one for end_of_day)."""
    if isinstance(value, str):
        moment = parse_datetime(value)
        if moment is None:
            day = parse_date(value)
            if day is not None:
                moment = datetime.combine(day, time.min)
                if end_of_day:
                    moment += timedelta(days=1)
        if moment is not None:
            return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)
    raise FilterError(
        _("%(where)s: must be an ISO 8601 date or date-time, e.g. 2026-01-31.") % {"where": where}
    )


def _dates(column: str, value, where: str) -> Q:
    if not isinstance(value, dict) or not value:
        raise FilterError(
            _("%(where)s: must be an object of operators (%(valid)s).")
            % {"where": where, "valid": ", ".join(DATE_OPERATORS)}
        )
    q = Q()
    for op, operand in value.items():
        if op not in DATE_OPERATORS:
            raise _invalid(where, op, DATE_OPERATORS)
        here = f"{where}.{op}"
        start = parse_when(operand, here)
        day_only = isinstance(operand, str) and parse_datetime(operand) is None
        end = parse_when(operand, here, end_of_day=True) if day_only else start
        # A date alone is the whole day: "eq" and "lte 2026-01-31" keep it, "gt 2026-01-31" starts after it.
        if op == "eq":
            q &= Q(**{f"{column}__gte": start, f"{column}__lt": end}) if day_only else Q(**{column: start})
        elif op == "gt":
            q &= Q(**{f"{column}__gte": end}) if day_only else Q(**{f"{column}__gt": start})
        elif op == "lte":
            q &= Q(**{f"{column}__lt": end}) if day_only else Q(**{f"{column}__lte": start})
        else:
            q &= Q(**{f"{column}__{op}": start})
    return q


def _categories(value, where: str) -> Q:
    if isinstance(value, list):
        value = {"in": value}
    if not isinstance(value, dict) or not value:
        raise FilterError(
            _("%(where)s: must be an object of operators (%(valid)s).")
            % {"where": where, "valid": ", ".join(CATEGORY_OPERATORS)}
        )
    q = Q()
    for op, operand in value.items():
        if op == "contains":
            q &= Q(tags__contains=[_text(operand, f"{where}.contains")])
        elif op == "in":
            if not isinstance(operand, list) or not operand:
                raise FilterError(_("%(where)s: must be a non-empty list.") % {"where": f"{where}.in"})
            any_of = Q(pk__in=[])
            for i, item in enumerate(operand):
                any_of |= Q(tags__contains=[_text(item, f"{where}.in[{i}]")])
            q &= any_of
        else:
            raise _invalid(where, op, CATEGORY_OPERATORS)
    return q


def _keywords(value, where: str) -> Q:
    if isinstance(value, str):
        value = {"icontains": value}
    if not isinstance(value, dict) or not value:
        raise FilterError(
            _("%(where)s: must be an object of operators (%(valid)s).")
            % {"where": where, "valid": ", ".join(KEYWORD_OPERATORS)}
        )
    q = Q()
    for op, operand in value.items():
        if op not in KEYWORD_OPERATORS:
            raise _invalid(where, op, KEYWORD_OPERATORS)
        q &= Q(**{f"content__{op}": _text(operand, f"{where}.{op}")})
    return q


def _memory_ids(value, where: str) -> list[int]:
    if not isinstance(value, list):
        raise FilterError(_("%(where)s: must be a list of memory ids.") % {"where": where})
    ids = []
    for i, item in enumerate(value):
        text = str(item)
        if isinstance(item, bool) or not text.isdigit() or len(text) > 18:
            raise FilterError(_("%(where)s: not a memory id.") % {"where": f"{where}[{i}]"})
        ids.append(int(text))
    return ids


def named_entities(filters) -> dict[str, str]:
    """The entities a filter names by plain equality at its top level or in a top-level AND
    ({"user_id": "a"}, {"AND": [{"user_id": "a"}, ...]}): whose memories a search is about."""
    found: dict[str, str] = {}
    if not isinstance(filters, dict):
        return found
    nodes = [filters, *[n for n in filters.get("AND", []) if isinstance(n, dict)]]
    for node in nodes:
        for key in ENTITY_FIELDS:
            value = node.get(key)
            if isinstance(value, dict) and set(value) == {"eq"}:
                value = value["eq"]
            if isinstance(value, str | int) and not isinstance(value, bool) and value not in ("", "*"):
                found.setdefault(key, str(value))
    return found
