"""The LangGraph store: JSON values under a namespace and a key the caller chooses (LangGraph's `BaseStore`
and the LangGraph server's `/store` API), kept per org apart from memories.

An item is `{namespace, key, value, created_at, updated_at}`. The value's strings (and the namespace and key)
pass the content gate's secret check; semantic search embeds the fields named by `index` (the whole value by
default, none with `index: false`) with the org's embedding provider. An item with a TTL (minutes) is never
returned after it expires; reads may refresh the TTL; the beat task `store-items-purge` deletes expired ones.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.db.models.fields.json import KeyTransform
from django.utils import timezone
from django.utils.translation import gettext as _
from pgvector.django import CosineDistance

from projects.access import require_store, store_read_q

from .embeddings.base import EmbeddingError
from .embeddings.resolve import cached_provider_for
from .gate import GateRejection, _strings, refuse_secrets
from .models import StoreItem

MAX_LABELS = 20
MAX_LABEL = 255
MAX_KEY = 1024
# The text of one value the gate reads at the most (keys included); a larger value is refused.
VALUE_MAX_CHARS = 200_000
# What one item's semantic index holds at the most (the model reads about 512 tokens anyway).
INDEX_MAX_CHARS = 4_000
MAX_LIMIT = 1000
FILTER_OPERATORS = {"$eq": "exact", "$ne": "exact", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


class StoreError(Exception):
    """Bad input to the store: the API answers 400 with this message."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class Found:
    item: StoreItem
    score: float | None = None


# ---- validation -----------------------------------------------------------------------------------


def check_namespace(
    namespace, *, field: str = "namespace", allow_empty: bool = False, wildcard=False
) -> list:
    if not isinstance(namespace, list | tuple) or (not namespace and not allow_empty):
        raise StoreError(_("%(field)s: a non-empty list of strings.") % {"field": field})
    if len(namespace) > MAX_LABELS:
        raise StoreError(_("%(field)s: at most %(n)d labels.") % {"field": field, "n": MAX_LABELS})
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or len(label) > MAX_LABEL:
            raise StoreError(
                _(
                    "%(field)s: every label is a non-empty string of at most %(n)d characters without a period."
                )
                % {"field": field, "n": MAX_LABEL}
            )
        if "\x00" in label:
            raise StoreError(_("%(field)s: contains a NUL character.") % {"field": field})
    if namespace and namespace[0] == "langgraph" and not wildcard:
        raise StoreError(_('%(field)s: the root label "langgraph" is reserved.') % {"field": field})
    return list(namespace)


def parse_namespace(dotted: str) -> list[str]:
    """The namespace of a GET (labels joined with periods, as the LangGraph client sends it)."""
    return check_namespace(dotted.split(".") if dotted else [])


def check_key(key) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY or "\x00" in key:
        raise StoreError(_("key: a non-empty string of at most %(n)d characters.") % {"n": MAX_KEY})
    return key


def check_index(index):
    """None: the whole value; False: not indexed (stored as []); a list of field paths."""
    if index is None:
        return None
    if index is False:
        return []
    if not isinstance(index, list) or not all(isinstance(p, str) and p and len(p) <= 255 for p in index):
        raise StoreError(_("index: false, null or a list of field paths."))
    if len(index) > 50:
        raise StoreError(_("index: at most 50 field paths."))
    return index


def check_ttl(ttl) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= 10 * 365 * 24 * 60:
        raise StoreError(_("ttl: a number of minutes greater than 0 (at most ten years), or null."))
    return float(ttl)


def gate_value(namespace: list[str], key: str, value) -> None:
    """The content gate on the value's strings (object keys included), the key and the namespace: a secret is
    refused (422 sensitive_content) and the message names where it is."""
    strings: list[tuple[str, str]] = [(f"namespace[{i}]", label) for i, label in enumerate(namespace)]
    strings.append(("key", key))
    _strings(value, "value", strings)
    total = sum(len(text) for _field, text in strings)
    if total > VALUE_MAX_CHARS:
        raise GateRejection(
            "too_long",
            _("A store item may hold at most %(limit)d characters of text (got %(count)d).")
            % {"limit": VALUE_MAX_CHARS, "count": total},
        )
    refuse_secrets(strings)


# ---- what semantic search embeds ------------------------------------------------------------------

_PART = re.compile(r"([^.\[\]]+)|\[(\*|\d+)\]")


def _at_path(value, path: str) -> list:
    """The values at a field path: "title", "a.b", "items[0]", "items[*].text"; "$" is the whole value."""
    if path == "$":
        return [value]
    current = [value]
    for name, index in _PART.findall(path):
        following = []
        for node in current:
            if name and isinstance(node, dict) and name in node:
                following.append(node[name])
            elif index == "*" and isinstance(node, list):
                following.extend(node)
            elif index and index != "*" and isinstance(node, list) and int(index) < len(node):
                following.append(node[int(index)])
        current = following
    return current


def _as_text(value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def index_text(value, index_fields) -> str:
    """The text semantic search embeds for an item ("" when it is not indexed)."""
    if index_fields == []:
        return ""
    paths = index_fields if index_fields else ["$"]
    texts = [_as_text(found) for path in paths for found in _at_path(value, path)]
    return "\n".join(t for t in texts if t)[:INDEX_MAX_CHARS]


# ---- the services -------------------------------------------------------------------------------


def _live(actor):
    now = timezone.now()
    return StoreItem.objects.filter(store_read_q(actor)).filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    )


def _expiry(ttl_minutes):
    return timezone.now() + timedelta(minutes=ttl_minutes) if ttl_minutes else None


def _check_paused(actor, namespace: list[str]) -> None:
    """A store item is about no one, but LangGraph agents name the person in the namespace
    (("memories", "<user_id>")): while memory is paused for a person of the org a namespace label names,
    nothing is stored there (MemoryPaused: a 200 "paused" answer)."""
    from .pause import MemoryPaused, paused_keys

    paused = sorted(
        user_id for user_id, _session in paused_keys(actor.org, {(label, "") for label in namespace})
    )
    if paused:
        raise MemoryPaused(paused[0])


def store_put(*, actor, namespace, key, value, index=None, ttl=None) -> StoreItem:
    require_store(actor, write=True)
    namespace = check_namespace(namespace)
    key = check_key(key)
    if not isinstance(value, dict):
        raise StoreError(_("value: a JSON object."))
    index_fields = check_index(index)
    ttl_minutes = check_ttl(ttl)
    gate_value(namespace, key, value)
    _check_paused(actor, namespace)
    text = index_text(value, index_fields)
    vector, model = None, ""
    if text:
        provider = cached_provider_for(actor.org)
        try:
            vector = provider.embed_passages([text])[0]
            model = provider.model_name
        except EmbeddingError:
            vector = None  # stored all the same; found by filters, not by a query, until put again
    path = ".".join(namespace)
    with transaction.atomic():
        item, _created = StoreItem.objects.update_or_create(
            org=actor.org,
            path=path,
            key=key,
            defaults={
                "namespace": namespace,
                "value": value,
                "index_fields": index_fields,
                "embedding": vector,
                "embedding_model": model,
                "ttl_minutes": ttl_minutes,
                "expires_at": _expiry(ttl_minutes),
            },
        )
    return item


def _refresh(items) -> None:
    now = timezone.now()
    for item in items:
        if item.ttl_minutes:
            item.expires_at = now + timedelta(minutes=item.ttl_minutes)
            StoreItem.objects.filter(pk=item.pk).update(expires_at=item.expires_at)


def store_get(*, actor, namespace, key, refresh_ttl: bool = True) -> StoreItem | None:
    require_store(actor)
    namespace = check_namespace(namespace)
    key = check_key(key)
    item = _live(actor).filter(path=".".join(namespace), key=key).first()
    if item is not None and refresh_ttl and actor.can_write:
        _refresh([item])
    return item


def store_delete(*, actor, namespace, key) -> bool:
    require_store(actor, write=True)
    namespace = check_namespace(namespace)
    key = check_key(key)
    deleted, _kinds = StoreItem.objects.filter(
        store_read_q(actor), path=".".join(namespace), key=key
    ).delete()
    return bool(deleted)


def _prefix_q(prefix: list[str]) -> Q:
    if not prefix:
        return Q()
    path = ".".join(prefix)
    return Q(path=path) | Q(path__startswith=path + ".")


def _filter_q(filters) -> list:
    """LangGraph's filter: {"field": value} or {"field": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": value}};
    a dotted field reaches into nested objects. Comparison is PostgreSQL's jsonb order (numbers by value,
    strings by text)."""
    if filters is None:
        return []
    if not isinstance(filters, dict):
        raise StoreError(_("filter: an object of field: value or field: {operator: value}."))
    conditions = []
    for number, (field, condition) in enumerate(filters.items()):
        if not field or len(field) > 255:
            raise StoreError(_("filter: a field name of 1 to 255 characters."))
        expression = "value"
        for part in field.split("."):
            expression = KeyTransform(part, expression)
        operators = (
            condition
            if isinstance(condition, dict)
            and condition
            and all(isinstance(k, str) and k.startswith("$") for k in condition)
            else {"$eq": condition}
        )
        for operator, operand in operators.items():
            if operator not in FILTER_OPERATORS:
                raise StoreError(
                    _("filter: unknown operator %(op)s. Valid operators: %(valid)s")
                    % {"op": operator, "valid": ", ".join(FILTER_OPERATORS)}
                )
            if operand is None and operator not in ("$eq", "$ne"):
                raise StoreError(_("filter: %(op)s compares with a value, not null.") % {"op": operator})
            conditions.append((f"f{number}", expression, operator, operand))
    return conditions


def store_search(
    *, actor, namespace_prefix, filters=None, limit: int = 10, offset: int = 0, query=None, refresh_ttl=True
) -> list[Found]:
    require_store(actor)
    prefix = check_namespace(namespace_prefix, field="namespace_prefix", allow_empty=True, wildcard=True)
    if query is not None and not isinstance(query, str):
        raise StoreError(_("query: a string or null."))
    rows = _live(actor).filter(_prefix_q(prefix))
    for alias, expression, operator, operand in _filter_q(filters):
        rows = rows.alias(**{alias: expression})
        if operand is None and operator in ("$eq", "$ne"):
            condition = Q(**{f"{alias}__isnull": False}) & Q(**{alias: None})
        else:
            condition = Q(**{f"{alias}__{FILTER_OPERATORS[operator]}": operand})
        if operator == "$ne":
            rows = rows.exclude(condition)
        else:
            rows = rows.filter(condition)
    if query:
        provider = cached_provider_for(actor.org)
        vector = provider.embed_query(query[:INDEX_MAX_CHARS])
        rows = (
            rows.filter(embedding__isnull=False, embedding_model=provider.model_name)
            .annotate(distance=CosineDistance("embedding", vector))
            .order_by("distance", "-updated_at", "pk")
        )
        found = [Found(item, round(1.0 - item.distance, 4)) for item in rows[offset : offset + limit]]
    else:
        found = [Found(item) for item in rows.order_by("-updated_at", "pk")[offset : offset + limit]]
    if refresh_ttl and actor.can_write:
        _refresh([f.item for f in found])
    return found


def _matches(namespace: list[str], pattern: list[str], *, at_end: bool) -> bool:
    if len(pattern) > len(namespace):
        return False
    part = namespace[-len(pattern) :] if at_end else namespace[: len(pattern)]
    return all(p == "*" or p == label for p, label in zip(pattern, part, strict=True))


def store_namespaces(
    *, actor, prefix=None, suffix=None, max_depth=None, limit=100, offset=0
) -> list[list[str]]:
    """The distinct namespaces of live items, sorted; prefix and suffix may hold "*" for any one label;
    max_depth cuts longer namespaces to that many labels."""
    require_store(actor)
    prefix = check_namespace(prefix or [], field="prefix", allow_empty=True, wildcard=True)
    suffix = check_namespace(suffix or [], field="suffix", allow_empty=True, wildcard=True)
    if max_depth is not None and (
        isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1
    ):
        raise StoreError(_("max_depth: a whole number of at least 1, or null."))
    rows = _live(actor)
    fixed = []
    for label in prefix:
        if label == "*":
            break
        fixed.append(label)
    if fixed:
        rows = rows.filter(_prefix_q(fixed))
    found = set()
    for namespace in rows.values_list("namespace", flat=True).distinct():
        if prefix and not _matches(namespace, prefix, at_end=False):
            continue
        if suffix and not _matches(namespace, suffix, at_end=True):
            continue
        found.add(tuple(namespace[:max_depth] if max_depth else namespace))
    return [list(ns) for ns in sorted(found)[offset : offset + limit]]


def store_purge_expired() -> int:
    """Delete the items whose TTL ran out (every org; the beat task's work)."""
    deleted, _kinds = StoreItem.objects.filter(expires_at__lte=timezone.now()).delete()
    return deleted
