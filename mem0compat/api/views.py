"""Mem0's REST API (what mem0ai's MemoryClient and AsyncMemoryClient call) over Engram's memories.

Paths are Mem0's, trailing slash included (the client follows no redirect); every answer is JSON and
every error carries Mem0's `detail` next to Engram's `error`. The views derive from EngramAPIView like
every API view (actor and org from the key, row-level security, the org's rate), parse, call one
selector or service of mem0compat, and shape the answer. They are left out of the OpenAPI schema
(`schema = None`): the schema describes Engram's own API; this one is Mem0's.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework.response import Response

from core.replicas import read_on_replica
from core.roles import ROLES
from core.times import rfc3339
from memory.search import SearchError, memory_search
from memory.selectors import MemoryFilters
from projects.access import key_project_ids, project_by_ref, require_project, require_subject
from projects.api.base import EngramAPIView
from projects.api.choices import invalid_choice_message
from projects.api.errors import ApiError, exception_handler, unstorable_error

from ..filters import FilterError, filters_q, named_entities, parse_when
from ..selectors import ENTITY_TYPES, mem0_entities, mem0_history, mem0_memories, mem0_memory
from ..services import (
    Entities,
    Refused,
    mem0_add,
    mem0_batch,
    mem0_delete,
    mem0_delete_entity,
    mem0_delete_matching,
    mem0_feedback,
    mem0_update,
)

ENTITY_KEYS = ("user_id", "agent_id", "app_id", "run_id")
# Accepted so that existing calls keep working, but not applied: Engram's extraction follows its own rules.
NOT_APPLIED = (
    "custom_instructions",
    "custom_categories",
    "agent_custom_instructions",
    "includes",
    "excludes",
    "structured_data_schema",
)
MAX_MESSAGES = 200
MAX_BATCH = 1000
MESSAGE_KEYS = {"role", "content", "name", "tool_call_id", "tool_calls", "message_id"}
HISTORY_EVENTS = {"add": "ADD", "delete": "DELETE", "archive": "DELETE", "supersede": "DELETE"}


def mem0_exception_handler(exc, context):
    """Engram's error body plus Mem0's `detail`, which the Mem0 client turns into its exception's message."""
    response = exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "error" in response.data:
        response.data = {"detail": response.data["error"]["message"], **response.data}
    return response


class Mem0View(EngramAPIView):
    schema = None  # not in /api/schema/: Mem0's API, documented in the README

    def get_exception_handler(self):
        return mem0_exception_handler

    def handle_exception(self, exc):
        if isinstance(exc, Refused):
            exc = ApiError(exc.status, exc.code, exc.message)
        elif isinstance(exc, FilterError):
            exc = ApiError(400, "invalid", str(exc))
        return super().handle_exception(exc)


# ---- parsing -------------------------------------------------------------------------------------


def bad(message: str) -> ApiError:
    return ApiError(400, "invalid", message)


def body_of(request, allowed) -> dict:
    data = request.data
    if not isinstance(data, dict):
        raise bad(_("The body must be a JSON object."))
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise bad(
            _("%(fields)s: unknown field. Valid fields: %(valid)s.")
            % {"fields": ", ".join(unknown), "valid": ", ".join(sorted(allowed))}
        )
    found = unstorable_error(data)
    if found is not None:
        raise bad(f"{found[0]}: {found[1]}")
    return data


def query_of(request, allowed) -> dict:
    unknown = sorted(set(request.query_params) - set(allowed))
    if unknown:
        raise bad(
            _("%(fields)s: unknown query parameter. Valid parameters: %(valid)s.")
            % {"fields": ", ".join(unknown), "valid": ", ".join(sorted(allowed)) or "-"}
        )
    return {name: request.query_params.get(name) for name in allowed if name in request.query_params}


def flag(value, name: str, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "false", "0"):
        return value.lower() in ("true", "1")
    raise bad(_("%(name)s: must be true or false.") % {"name": name})


def number(value, name: str, default: int, low: int, high: int) -> int:
    if value is None:
        return default
    text = str(value)
    if isinstance(value, bool) or not text.isdigit() or not low <= int(text) <= high:
        raise bad(
            _("%(name)s: must be a whole number from %(low)d to %(high)d.")
            % {"name": name, "low": low, "high": high}
        )
    return int(text)


def text_of(value, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise bad(_("%(name)s: must be a non-empty string.") % {"name": name})
    text = str(value).strip()
    if len(text) > 255:
        raise bad(_("%(name)s: at most 255 characters.") % {"name": name})
    return text


def project_of(actor, ref):
    project = project_by_ref(actor, ref)
    if project is not None:
        require_project(actor, project)
    return project


def entities_of(actor, values: dict) -> Entities:
    """Mem0's entity ids → Engram's subject, agent, session and project (checked by projects.access)."""
    named = {key: text_of(values[key], key) for key in ENTITY_KEYS if values.get(key) not in (None, "")}
    return Entities(
        user_id=named.get("user_id", ""),
        agent_id=named.get("agent_id", ""),
        session_id=named.get("run_id", ""),
        project=project_of(actor, named["app_id"]) if "app_id" in named else None,
    )


def moment_of(value, name: str):
    """A Unix timestamp (seconds) or an ISO 8601 date or date-time."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise bad(_("%(name)s: not a valid Unix time.") % {"name": name}) from None
    if isinstance(value, str) and value.isdigit():
        return moment_of(int(value), name)
    return parse_when(value, name)


def metadata_of(value):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad(_("metadata: must be a JSON object."))
    return value


def memory_fields(data: dict) -> dict:
    """Mem0's writable fields of a memory as MemoryItem fields."""
    fields = {}
    if "text" in data and data["text"] is not None:
        if not isinstance(data["text"], str) or not data["text"].strip():
            raise bad(_("text: must be a non-empty string."))
        fields["content"] = data["text"]
    if "metadata" in data and data["metadata"] is not None:
        fields["metadata"] = metadata_of(data["metadata"])
    if "timestamp" in data and data["timestamp"] is not None:
        fields["occurred_at"] = moment_of(data["timestamp"], "timestamp")
    if "expiration_date" in data:
        fields["expires_at"] = moment_of(data["expiration_date"], "expiration_date")
    return fields


def messages_of(value) -> list[dict]:
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    elif isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not value:
        raise bad(_("messages: a string, a message or a non-empty list of messages."))
    if len(value) > MAX_MESSAGES:
        raise bad(_("messages: at most %(limit)d messages.") % {"limit": MAX_MESSAGES})
    out = []
    for index, message in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise bad(_("%(where)s: must be an object with a role and a content.") % {"where": where})
        unknown = sorted(set(message) - MESSAGE_KEYS)
        if unknown:
            raise bad(_("%(where)s.%(field)s: unknown field.") % {"where": where, "field": unknown[0]})
        role = message.get("role")
        if role not in ROLES:
            raise bad(f"{where}.role: {invalid_choice_message(role, ROLES)}")
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise bad(
                _("%(where)s.content: must be text (images, files and content parts are not supported).")
                % {"where": where}
            )
        if len(content) > 100_000:
            raise bad(_("%(where)s.content: at most 100000 characters.") % {"where": where})
        out.append({"role": role, "content": content})
    return out


# ---- shapes --------------------------------------------------------------------------------------


def memory_out(item) -> dict:
    return {
        "id": str(item.pk),
        "memory": item.content,
        "user_id": item.user_id or None,
        "agent_id": item.agent_id or None,
        "app_id": str(item.project_id) if item.project_id else None,
        "run_id": item.session_id or None,
        "hash": item.content_hash,
        "metadata": item.metadata or None,
        "categories": list(item.tags or []),
        "memory_type": item.memory_type,
        "created_at": rfc3339(item.created_at),
        "updated_at": rfc3339(item.updated_at),
        "expiration_date": item.expires_at.date().isoformat() if item.expires_at else None,
        "immutable": False,
    }


def only(fields, body: dict) -> dict:
    """The answer's `fields` (id always), when the caller asked for some."""
    return {k: v for k, v in body.items() if k == "id" or k in fields} if fields else body


def fields_of(data: dict) -> list[str] | None:
    fields = data.get("fields")
    if fields is not None and (not isinstance(fields, list) or not all(isinstance(f, str) for f in fields)):
        raise bad(_("fields: a list of field names."))
    return fields


def warnings_for(data: dict) -> list[str]:
    return [
        _("%(field)s is accepted but not applied: Engram's extraction follows its own rules.")
        % {"field": name}
        for name in NOT_APPLIED
        if data.get(name) not in (None, "", [], {})
    ]


# ---- views ---------------------------------------------------------------------------------------


class PingView(Mem0View):
    """GET /v1/ping/: the key is valid; the org (Mem0's organization) and the key's project, if one."""

    def get(self, request):
        query_of(request, ())
        project_id = "all"
        if self.actor.is_key:
            ids = key_project_ids(self.actor.api_key)
            if ids and len(ids) == 1:
                project_id = str(ids[0])
        email = getattr(self.actor.account, "email", "") or None
        return Response(
            {"status": "ok", "org_id": self.org.slug, "project_id": project_id, "user_email": email}
        )


ADD_FIELDS = {
    "messages",
    *ENTITY_KEYS,
    "filters",
    "metadata",
    "infer",
    "timestamp",
    "expiration_date",
    "async_mode",
    "output_format",
    "version",
    "immutable",
    *NOT_APPLIED,
}


class AddView(Mem0View):
    """POST /v3/memories/add/: answered synchronously (async_mode is not needed: the work is done)."""

    def post(self, request):
        data = body_of(request, ADD_FIELDS)
        messages = messages_of(data.get("messages"))
        if flag(data.get("immutable"), "immutable", False):
            raise bad(
                _("immutable: Engram has no immutable memories; every memory can be edited and restored.")
            )
        named = dict(data)
        in_filters = data.get("filters") or {}
        if not isinstance(in_filters, dict) or set(in_filters) - set(ENTITY_KEYS):
            raise bad(
                _("filters: an add takes only entity ids here (%(valid)s).")
                % {"valid": ", ".join(ENTITY_KEYS)}
            )
        for key, value in in_filters.items():
            if named.get(key) not in (None, "") and named[key] != value:
                raise bad(_("%(key)s: given twice with different values.") % {"key": key})
            named[key] = value
        entities = entities_of(self.actor, named)
        fields = {"metadata": metadata_of(data.get("metadata"))}
        if data.get("timestamp") is not None:
            fields["occurred_at"] = moment_of(data["timestamp"], "timestamp")
        if data.get("expiration_date") is not None:
            fields["expires_at"] = moment_of(data["expiration_date"], "expiration_date")
        outcome = mem0_add(
            actor=self.actor,
            org=self.org,
            messages=messages,
            entities=entities,
            infer=flag(data.get("infer"), "infer", True),
            fields=fields,
        )
        results = []
        for event in outcome.events:
            entry = {"id": str(event.id), "event": event.event, "data": {"memory": event.memory}}
            if event.previous_memory is not None:
                entry["previous_memory"] = event.previous_memory
            results.append(entry)
        body = {"status": "SUCCEEDED", "event_id": str(uuid.uuid4()), "results": results}
        if outcome.job_id is not None:
            body["extraction_job"] = outcome.job_id
            body["rejected"] = [{"code": r.get("code"), "reason": r.get("reason")} for r in outcome.rejected]
        warnings = warnings_for(data)
        if warnings:
            body["warnings"] = warnings
        return Response(body)


def listing_q(actor, data: dict):
    """The Q of get_all's and search's `filters` plus their own date, category and metadata fields."""
    filters = data.get("filters")
    if not filters:
        raise bad(_('filters: required, e.g. {"user_id": "alex"} (Mem0 asks for at least one entity).'))
    q = filters_q(filters, projects=lambda ref: project_of(actor, ref))
    extra = {}
    if data.get("start_date"):
        extra["created_at"] = {"gte": data["start_date"]}
    if data.get("end_date"):
        extra.setdefault("created_at", {})["lte"] = data["end_date"]
    if data.get("categories"):
        extra["categories"] = (
            {"in": data["categories"]} if isinstance(data["categories"], list) else data["categories"]
        )
    if data.get("metadata"):
        extra["metadata"] = data["metadata"]
    if extra:
        q &= filters_q(extra)
    return q


LIST_FIELDS = {
    "filters",
    "page",
    "page_size",
    "start_date",
    "end_date",
    "categories",
    "show_expired",
    "latest_only",
    "fields",
}


class ListView(Mem0View):
    """POST /v3/memories/: get_all, a page at a time (?page=&page_size=, or in the body)."""

    @read_on_replica
    def post(self, request):
        data = body_of(request, LIST_FIELDS)
        query = query_of(request, ("page", "page_size"))
        fields = fields_of(data)
        page = number(query.get("page", data.get("page")), "page", 1, 1, 10**9)
        size = number(query.get("page_size", data.get("page_size")), "page_size", 100, 1, 1000)
        qs = mem0_memories(
            actor=self.actor,
            q=listing_q(self.actor, data),
            show_expired=flag(data.get("show_expired"), "show_expired", False),
            latest_only=flag(data.get("latest_only"), "latest_only", True),
        )
        count = qs.count()
        rows = list(qs[(page - 1) * size : page * size])

        def link(n):
            return request.build_absolute_uri(f"{request.path}?page={n}&page_size={size}")

        return Response(
            {
                "count": count,
                "next": link(page + 1) if page * size < count else None,
                "previous": link(page - 1) if page > 1 else None,
                "results": [only(fields, memory_out(row)) for row in rows],
            }
        )


SEARCH_FIELDS = {
    "query",
    "filters",
    "top_k",
    "threshold",
    "rerank",
    "fields",
    "categories",
    "show_expired",
    "latest_only",
    "keyword_search",
    "metadata",
}


class SearchView(Mem0View):
    """POST /v3/memories/search/: Engram's hybrid search, narrowed by the filters; score in 0..1."""

    @read_on_replica
    def post(self, request):
        data = body_of(request, SEARCH_FIELDS)
        query = data.get("query")
        if not isinstance(query, str) or not query.strip() or len(query) > 4000:
            raise bad(_("query: a non-empty string of at most 4000 characters."))
        top_k = number(data.get("top_k"), "top_k", 10, 1, 100)
        fields = fields_of(data)
        threshold = data.get("threshold")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1
        ):
            raise bad(_("threshold: a number from 0 to 1."))
        show_expired = flag(data.get("show_expired"), "show_expired", False)
        latest_only = flag(data.get("latest_only"), "latest_only", True)
        q = listing_q(self.actor, data)
        named = named_entities(data["filters"])
        if "user_id" not in named and "app_id" not in named:
            raise bad(_("filters: a search needs a user_id or an app_id (at the top level or in AND)."))
        if "user_id" in named:
            require_subject(self.actor, named["user_id"])
        filters = MemoryFilters(
            user_id=named.get("user_id", ""),
            project=project_of(self.actor, named.get("app_id")),
            session_id=named.get("run_id", ""),
            agent_id=named.get("agent_id", ""),
            include_expired=show_expired,
            include_superseded=not latest_only,
        )
        try:
            found = memory_search(
                actor=self.actor,
                query=query,
                filters=filters,
                top_k=min(100, max(3 * top_k, 20)),
                max_tokens=100_000,
            )
        except SearchError as exc:
            raise bad(str(exc)) from exc
        ids = [hit.id for hit in found.hits]
        rows = {
            row.pk: row
            for row in mem0_memories(
                actor=self.actor, q=q, show_expired=show_expired, latest_only=latest_only
            ).filter(pk__in=ids)
        }
        results = []
        for hit in found.hits:
            score = round(min(1.0, max(0.0, hit.score)), 4)
            if hit.id not in rows or (threshold is not None and score < threshold):
                continue
            results.append(only(fields, {**memory_out(rows[hit.id]), "score": score}))
            if len(results) == top_k:
                break
        return Response({"results": results})


class MemoryView(Mem0View):
    """GET/PUT/DELETE /v1/memories/{id}/."""

    def item(self, memory_id):
        item = mem0_memory(actor=self.actor, memory_id=memory_id)
        if item is None:
            raise Http404(_("No such memory."))
        return item

    def get(self, request, memory_id: str):
        query_of(request, ())
        return Response(memory_out(self.item(memory_id)))

    def put(self, request, memory_id: str):
        query_of(request, ())
        data = body_of(request, {"text", "metadata", "timestamp", "expiration_date"})
        fields = memory_fields(data)
        if not fields and "expiration_date" not in data:
            raise bad(_("Give at least one of text, metadata, timestamp or expiration_date."))
        item = mem0_update(actor=self.actor, item=self.item(memory_id), fields=fields)
        return Response(memory_out(item))

    def delete(self, request, memory_id: str):
        query = query_of(request, ("delete_linked",))
        mem0_delete(
            actor=self.actor,
            item=self.item(memory_id),
            linked=flag(query.get("delete_linked"), "delete_linked", False),
        )
        return Response({"message": _("Memory deleted successfully!")})


class HistoryView(Mem0View):
    """GET /v1/memories/{id}/history/: the memory's revisions, oldest first."""

    def get(self, request, memory_id: str):
        query_of(request, ())
        item = mem0_memory(actor=self.actor, memory_id=memory_id)
        if item is None:
            raise Http404(_("No such memory."))
        out = []
        for revision in mem0_history(item=item):
            before, after = revision.before or {}, revision.after or {}
            out.append(
                {
                    "id": str(revision.pk),
                    "memory_id": str(item.pk),
                    "event": HISTORY_EVENTS.get(revision.action, "UPDATE"),
                    "action": revision.action,
                    "old_memory": before.get("content"),
                    "new_memory": after.get("content"),
                    "input": None,
                    "user_id": revision.user_id or None,
                    "actor": revision.actor,
                    "reason": revision.reason,
                    "metadata": after.get("metadata") or None,
                    "categories": after.get("tags") or [],
                    "created_at": rfc3339(revision.created_at),
                    "updated_at": rfc3339(revision.created_at),
                }
            )
        return Response(out)


class DeleteAllView(Mem0View):
    """DELETE /v1/memories/?user_id=…: refused without an entity (Mem0's reset is DELETE /v2/entities/…)."""

    def delete(self, request):
        query = query_of(request, ENTITY_KEYS)
        entities = entities_of(self.actor, query)
        if not (entities.user_id or entities.agent_id or entities.session_id or entities.project is not None):
            raise bad(_("Name whose memories to delete: user_id, agent_id, app_id or run_id."))
        q = filters_q({k: v for k, v in query.items() if v}, projects=lambda ref: project_of(self.actor, ref))
        deleted = mem0_delete_matching(
            actor=self.actor,
            org=self.org,
            entities=entities,
            rows=mem0_memories(actor=self.actor, q=q, show_expired=True, latest_only=False),
        )
        return Response({"message": _("Memories deleted successfully!"), "deleted": deleted})


class EntitiesView(Mem0View):
    """GET /v1/entities/: users, agents, runs and apps with memories the caller may read."""

    def get(self, request):
        query_of(request, ())
        results = mem0_entities(actor=self.actor)
        for entry in results:
            entry["created_at"] = rfc3339(entry["created_at"])
            entry["updated_at"] = rfc3339(entry["updated_at"])
        return Response({"count": len(results), "results": results})


class EntityView(Mem0View):
    """DELETE /v2/entities/{type}/{id}/: every memory of that user, agent, run or app."""

    def delete(self, request, entity_type: str, entity_id: str):
        query_of(request, ())
        if entity_type not in ENTITY_TYPES:
            raise bad(f"entity_type: {invalid_choice_message(entity_type, ENTITY_TYPES)}")
        value = project_of(self.actor, entity_id) if entity_type == "app" else entity_id
        if entity_type == "user":
            require_subject(self.actor, entity_id, write=True)
        deleted = mem0_delete_entity(actor=self.actor, org=self.org, entity_type=entity_type, value=value)
        return Response({"message": _("Entity deleted successfully."), "deleted": deleted})


class BatchView(Mem0View):
    """PUT /v1/batch/ (text and metadata) and DELETE /v1/batch/ (JSON body): all or nothing."""

    def changes(self, request, allowed: set, *, changing: bool) -> list[dict]:
        data = body_of(request, {"memories"})
        memories = data.get("memories")
        if not isinstance(memories, list) or not memories or len(memories) > MAX_BATCH:
            raise bad(_("memories: a list of 1 to %(limit)d memories.") % {"limit": MAX_BATCH})
        out = []
        for index, entry in enumerate(memories):
            where = f"memories[{index}]"
            if not isinstance(entry, dict) or "memory_id" not in entry:
                raise bad(_("%(where)s: an object with a memory_id.") % {"where": where})
            unknown = sorted(set(entry) - allowed)
            if unknown:
                raise bad(_("%(where)s.%(field)s: unknown field.") % {"where": where, "field": unknown[0]})
            fields = memory_fields(entry)
            if changing and not fields:
                raise bad(_("%(where)s: give text or metadata to change.") % {"where": where})
            out.append({"memory_id": text_of(entry["memory_id"], f"{where}.memory_id"), "fields": fields})
        return out

    def put(self, request):
        changes = self.changes(request, {"memory_id", "text", "metadata"}, changing=True)
        updated = mem0_batch(actor=self.actor, changes=changes, delete=False)
        return Response({"message": _("Successfully updated %(count)d memories.") % {"count": updated}})

    def delete(self, request):
        changes = self.changes(request, {"memory_id"}, changing=False)
        deleted = mem0_batch(actor=self.actor, changes=changes, delete=True)
        return Response({"message": _("Successfully deleted %(count)d memories.") % {"count": deleted}})


FEEDBACK = {"POSITIVE": "useful", "NEGATIVE": "outdated", "VERY_NEGATIVE": "wrong"}


class FeedbackView(Mem0View):
    """POST /v1/feedback/: POSITIVE, NEGATIVE or VERY_NEGATIVE on a memory, stored as useful, outdated or
    wrong (memory.MemoryFeedback)."""

    def post(self, request):
        data = body_of(request, {"memory_id", "feedback", "feedback_reason"})
        value = str(data.get("feedback") or "").upper()
        if value not in FEEDBACK:
            raise bad(f"feedback: {invalid_choice_message(data.get('feedback'), FEEDBACK)}")
        reason = data.get("feedback_reason") or ""
        if not isinstance(reason, str) or len(reason) > 2000:
            raise bad(_("feedback_reason: text of at most 2000 characters."))
        item = mem0_memory(actor=self.actor, memory_id=text_of(data.get("memory_id"), "memory_id"))
        if item is None:
            raise Http404(_("No such memory."))
        row = mem0_feedback(actor=self.actor, item=item, value=FEEDBACK[value], reason=reason)
        return Response(
            {
                "id": str(row.pk),
                "memory_id": str(item.pk),
                "feedback": value,
                "feedback_reason": reason or None,
            }
        )
