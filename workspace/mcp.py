"""The memory tools over MCP (Model Context Protocol), served by the official `mcp` SDK's Streamable HTTP
transport with JSON answers: protocol revision 2026-07-28 (`server/discover`, a self-contained request with
its `_meta`, `Mcp-Method` / `Mcp-Name` headers) and the handshake revisions up to 2025-11-25 (`initialize`,
an `Mcp-Session-Id`).

`mcp_asgi_app()` is the ASGI app (config/mcp.py serves it with uvicorn). It authenticates every HTTP request
with the org API keys of the REST API (`Authorization: Bearer` or `X-Api-Key`), so a session belongs to the
key that opened it; each tool call acts as that key (projects.access) through the services, in a worker
thread. Tools carry Mem0's hosted names, `get_context`, and the older names as aliases. A refusal (the gate,
a missing subject, a memory the key may not see) is a tool result with `isError` that the model can read.

The caller's defaults for the subject come in headers, as before: X-Engram-User-Id, X-Engram-Project,
X-Engram-Session-Id, X-Engram-Agent-Id; a tool's arguments override them.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import close_old_connections, connections, transaction
from django.db.models import Count
from django.http import Http404, HttpRequest
from django.http.request import split_domain_port, validate_host
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.utils.translation.trans_real import get_supported_language_variant, parse_accept_lang_header
from mcp.server import MCPServer
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from rest_framework.exceptions import APIException, AuthenticationFailed, Throttled

from audit import services as audit
from core import rls
from core.times import rfc3339
from memory import search, services
from memory.api.search_views import item_dict
from memory.api.tools_views import TOOLS, invoke_tool
from memory.drafts import MemoryDraft
from memory.gate import GateRejection
from memory.injections import injection_log_row
from memory.models import MemoryItem, MemoryType, Scope, Source
from memory.pause import MemoryPaused
from memory.selectors import MemoryFilters, readable_memories
from projects.access import (
    Actor,
    actor_for_key,
    project_by_ref,
    require_forget_subject,
    require_project,
    require_subject,
)
from projects.api.errors import unstorable_error
from projects.authentication import ApiKeyAuthentication
from projects.models import ApiKey
from projects.origin import with_origin

from .context import context_build
from .subjects import subject_forget

MCP_PATH = "/api/v1/mcp"
SERVER_NAME = "engram"
SERVER_VERSION = "1.0.0"
INSTRUCTIONS = (
    "Long-term memory of the user. Call search_memories (or get_context) before answering to recall the "
    "user; call add_memory when the user asks you to remember something (记住 / remember) or states a "
    "lasting preference, fact or constraint. Never store passwords, keys or ID numbers."
)
# The web server's /api/v1/mcp view, forwarding, tells the client's address here.
FORWARDED_FOR = "x-engram-forwarded-for"
MAX_DELETE = 10_000  # memories one delete_entities / delete_all_memories call removes at the most

TYPES = list(MemoryType.values)


# ---- the caller -----------------------------------------------------------------------------------


def _django_request(headers: dict[str, str], client_host: str) -> HttpRequest:
    """A Django request carrying what the key check and the audit log read: the address and user agent."""
    request = HttpRequest()
    address = client_host
    forwarded = headers.get(FORWARDED_FOR, "")
    if forwarded and _inside(client_host):
        address = forwarded
    request.META = {
        "REMOTE_ADDR": address,
        "HTTP_USER_AGENT": headers.get("user-agent", ""),
        "HTTP_X_FORWARDED_FOR": headers.get("x-forwarded-for", ""),
    }
    return request


def _inside(host: str) -> bool:
    """A peer on this machine or the private network (the web server forwarding), whose word on the
    client's address is taken."""
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return False


def _secret(headers: dict[str, str]) -> str | None:
    authorization = headers.get("authorization", "")
    parts = authorization.split()
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1]
    return headers.get("x-api-key", "").strip() or None


def _authenticate(secret: str, request: HttpRequest) -> ApiKey:
    """The org API key the secret names (as the REST API's authentication finds it), in a worker thread."""
    close_old_connections()
    try:
        _principal, key = ApiKeyAuthentication().authenticate_secret(request, secret)
        return key
    finally:
        connections.close_all()


def _actor(ctx: Context) -> Actor:
    request = ctx.request_context.request
    scope = getattr(request, "scope", None) or {}
    key: ApiKey | None = scope.get("engram.key")
    if key is None:  # not through mcp_asgi_app (an in-process client): no one to act for
        raise ToolError(_("Not authenticated: send an org API key."))
    return with_origin(actor_for_key(key), scope["engram.request"])


def _headers(ctx: Context) -> dict[str, str]:
    return {k.lower(): v for k, v in (ctx.headers or {}).items()}


def _language(headers: dict[str, str]) -> str:
    """The caller's Accept-Language, as Django's LocaleMiddleware would pick it."""
    for code, _quality in parse_accept_lang_header(headers.get("accept-language", "")):
        if code == "*":
            break
        try:
            return get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def _error_text(exc: Exception) -> str:
    if isinstance(exc, GateRejection):
        return f"{exc.code}: {exc.message}"
    if isinstance(exc, APIException):
        code = getattr(exc, "code", None) or exc.default_code
        detail = exc.detail
        if isinstance(detail, dict | list):
            detail = json.dumps(detail, ensure_ascii=False)
        return f"{code}: {detail}"
    if isinstance(exc, Http404):
        return f"not_found: {str(exc) or _('Not found.')}"
    if isinstance(exc, PermissionDenied):
        return f"permission_denied: {str(exc) or _('Not allowed.')}"
    if isinstance(exc, DjangoValidationError):
        return "invalid: " + "; ".join(exc.messages)
    return f"invalid: {exc}"  # SearchError, ValueError: bad arguments, said in words


REFUSALS = (
    GateRejection,
    APIException,
    Http404,
    PermissionDenied,
    DjangoValidationError,
    search.SearchError,
    ValueError,
)


def _run(ctx: Context, work: Callable[[Actor, dict[str, str]], Any]) -> Any:
    """One tool call, in the worker thread the SDK gives a plain function: the key's actor, its org bound
    for row-level security, the caller's language; a refusal becomes a tool error the model reads."""
    actor = _actor(ctx)
    headers = _headers(ctx)
    close_old_connections()
    try:
        with rls.scoped(rls.Scope(org_id=actor.org.pk)), translation.override(_language(headers)):
            try:
                return work(actor, headers)
            except MemoryPaused as exc:  # not an error: the call worked, memory is off for this subject
                return exc.body()
            except REFUSALS as exc:
                raise ToolError(_error_text(exc)) from exc
    finally:
        connections.close_all()


def _storable(**values) -> None:
    """Text PostgreSQL cannot store (a NUL, a lone surrogate) in an argument is refused, naming it."""
    for name, value in values.items():
        error = unstorable_error(value, name)
        if error is not None:
            where, message = error
            raise ValueError(f"{where}: {message}")


def _subject(headers: dict[str, str], **given) -> dict[str, Any]:
    """The call's subject: the arguments, else the X-Engram-* headers."""
    _storable(**given)
    return {
        "user_id": given.get("user_id") or headers.get("x-engram-user-id", ""),
        "agent_id": given.get("agent_id") or headers.get("x-engram-agent-id", ""),
        "run_id": given.get("run_id") or headers.get("x-engram-session-id", ""),
        "app_id": given.get("app_id") or headers.get("x-engram-project", ""),
    }


def _project(actor: Actor, ref: str):
    project = project_by_ref(actor, ref or None)
    if ref and project is None:
        raise Http404(_("No such project."))
    if project is not None:
        require_project(actor, project)
    return project


def _memory_out(item: MemoryItem, score: float | None = None) -> dict[str, Any]:
    """A memory in Mem0's shape (memory, user_id, agent_id, run_id, app_id) with Engram's fields beside."""
    out = item_dict(item)
    out.update(
        {
            "memory": item.content,
            "user_id": item.user_id or None,
            "agent_id": item.agent_id or None,
            "run_id": item.session_id or None,
            "app_id": item.project_id,
            "updated_at": rfc3339(item.updated_at),
        }
    )
    if score is not None:
        out["score"] = score
    return out


def _readable(actor: Actor, memory_id: int) -> MemoryItem:
    item = readable_memories(actor).filter(pk=memory_id).first()
    if item is None:
        raise Http404(_("No memory %(id)s.") % {"id": memory_id})
    return item


def _lines(memories: list[dict]) -> str:
    return "\n".join(f"- #{m['id']} [{m['memory_type']}] {m['memory']}" for m in memories)


# ---- the tools ------------------------------------------------------------------------------------

UserId = Annotated[str | None, Field(description="Whose memory: the user's id (default: X-Engram-User-Id).")]
AgentId = Annotated[str | None, Field(description="The agent's id (default: X-Engram-Agent-Id).")]
RunId = Annotated[
    str | None, Field(description="The conversation / session id (default: X-Engram-Session-Id).")
]
AppId = Annotated[str | None, Field(description="The project, by id or slug (default: X-Engram-Project).")]


def add_memory(
    ctx: Context,
    text: Annotated[str, Field(description="One statement to remember, in the user's language.")],
    user_id: UserId = None,
    agent_id: AgentId = None,
    run_id: RunId = None,
    app_id: AppId = None,
    metadata: Annotated[dict[str, Any] | None, Field(description="Free-form metadata.")] = None,
    memory_type: Annotated[str | None, Field(description="One of: " + ", ".join(TYPES))] = None,
) -> dict[str, Any]:
    """Save one long-term memory. Call it when the user asks you to remember something (记住 / 帮我记住 /
    remember / from now on), says who they are, or states a lasting preference, habit or constraint. With
    run_id only for this conversation; with app_id and no user_id shared with the project. Passwords, keys
    and ID numbers are refused."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        _storable(text=text, metadata=metadata)
        subject = _subject(headers, user_id=user_id, agent_id=agent_id, run_id=run_id, app_id=app_id)
        project = _project(actor, subject["app_id"])
        if subject["user_id"]:
            scope = Scope.SESSION if run_id else Scope.USER
        elif project is not None:
            scope = Scope.PROJECT
        else:
            raise ValueError(_("user_id: required (or app_id for a project memory)."))
        if memory_type is not None and memory_type not in TYPES:
            raise ValueError(
                _("memory_type: %(value)s is not a valid choice. Valid values: %(valid)s")
                % {"value": memory_type, "valid": ", ".join(TYPES)}
            )
        draft = MemoryDraft(
            content=text,
            memory_type=memory_type or "fact",
            scope=scope,
            user_id=subject["user_id"],
            project=project if scope == Scope.PROJECT else None,
            # The conversation it came from (a session memory belongs to it; a user memory records it).
            session_id=subject["run_id"] if scope != Scope.PROJECT else "",
            agent_id=subject["agent_id"],
            source=Source.AGENT,
            confidence=0.9,
            metadata=metadata or {},
        )
        result = services.memory_create(actor=actor, org=actor.org, draft=draft, reason="add_memory tool")
        if result.supersedes is not None:
            event = "UPDATE"
        elif result.created:
            event = "ADD"
        else:
            event = "NONE"
        return {"results": [{"id": result.item.pk, "event": event, **_memory_out(result.item)}]}

    return _run(ctx, work)


def search_memories(
    ctx: Context,
    query: Annotated[str, Field(description="What to recall, in words (any language).")],
    user_id: UserId = None,
    agent_id: AgentId = None,
    run_id: RunId = None,
    app_id: AppId = None,
    limit: Annotated[int, Field(ge=1, le=50, description="How many (default 10).")] = 10,
) -> dict[str, Any]:
    """Search what is remembered about the user (and the project). Call it before answering whenever you
    need to recall the user: preferences, who they are, earlier decisions, constraints, or anything they
    refer to from before ('like last time', '我上次说的'). Best match first, with a score in 0..1."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        _storable(query=query)
        subject = _subject(headers, user_id=user_id, agent_id=agent_id, run_id=run_id, app_id=app_id)
        project = _project(actor, subject["app_id"])
        if not subject["user_id"] and project is None:
            raise ValueError(_("user_id: required (or app_id for a project's memories)."))
        if subject["user_id"]:
            require_subject(actor, subject["user_id"])
        filters = MemoryFilters(
            user_id=subject["user_id"],
            project=project,
            session_id=subject["run_id"],
            agent_id=subject["agent_id"],
        )
        found = search.memory_search(actor=actor, query=query, filters=filters, top_k=limit)
        items = {i.pk: i for i in MemoryItem.objects.filter(pk__in=[h.id for h in found.hits])}
        results = [_memory_out(items[h.id], round(h.score, 4)) for h in found.hits if h.id in items]
        injection_log_row(
            org=actor.org,
            user_id=subject["user_id"],
            project=project,
            session_id=subject["run_id"],
            kind="tool",
            query=query[:4000],
            caller=actor.label,
            memory_ids=[r["id"] for r in results],
        ).save()
        return {"results": results}

    return _run(ctx, work)


def get_memories(
    ctx: Context,
    user_id: UserId = None,
    agent_id: AgentId = None,
    run_id: RunId = None,
    app_id: AppId = None,
    page: Annotated[int, Field(ge=1, description="Page number, from 1.")] = 1,
    page_size: Annotated[int, Field(ge=1, le=100, description="Memories per page (default 50).")] = 50,
) -> dict[str, Any]:
    """List the memories of a user (or an agent, a conversation, a project), newest first, a page at a time."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        # The headers name the user and the project; an agent or a conversation narrows only when asked.
        subject = _subject(headers, user_id=user_id, app_id=app_id)
        subject.update(agent_id=agent_id or "", run_id=run_id or "")
        project = _project(actor, subject["app_id"])
        _storable(agent_id=agent_id, run_id=run_id)
        rows = readable_memories(actor).filter(status="active")
        if subject["user_id"]:
            require_subject(actor, subject["user_id"])
            rows = rows.filter(user_id=subject["user_id"])
        if subject["agent_id"]:
            rows = rows.filter(agent_id=subject["agent_id"])
        if subject["run_id"]:
            rows = rows.filter(session_id=subject["run_id"])
        if project is not None:
            rows = rows.filter(project=project)
        if not (subject["user_id"] or subject["agent_id"] or subject["run_id"] or project):
            raise ValueError(_("Name whose memories: user_id, agent_id, run_id or app_id."))
        count = rows.count()
        start = (page - 1) * page_size
        results = [
            _memory_out(item) for item in rows.order_by("-created_at", "-pk")[start : start + page_size]
        ]
        return {"count": count, "page": page, "page_size": page_size, "results": results}

    return _run(ctx, work)


def get_memory(
    ctx: Context, memory_id: Annotated[int, Field(description="The memory's id.")]
) -> dict[str, Any]:
    """One memory by its id."""
    return _run(ctx, lambda actor, headers: _memory_out(_readable(actor, memory_id)))


def update_memory(
    ctx: Context,
    memory_id: Annotated[int, Field(description="The memory's id.")],
    text: Annotated[str, Field(description="The memory's new text.")],
) -> dict[str, Any]:
    """Replace a memory's text (when the user corrects something you remembered). The gate applies."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        _storable(text=text)
        item = services.memory_update(
            actor=actor, item=_readable(actor, memory_id), reason="update_memory tool", content=text
        )
        return _memory_out(item)

    return _run(ctx, work)


def delete_memory(
    ctx: Context, memory_id: Annotated[int, Field(description="The memory's id.")]
) -> dict[str, Any]:
    """Delete one memory (when the user asks you to forget it)."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        services.memory_delete(actor=actor, item=_readable(actor, memory_id), reason="delete_memory tool")
        return {"id": memory_id, "deleted": True, "message": _("Memory deleted.")}

    return _run(ctx, work)


def _delete_each(actor: Actor, rows, reason: str) -> int:
    deleted = 0
    for item in rows.order_by("pk")[:MAX_DELETE]:
        services.memory_delete(actor=actor, item=item, reason=reason)
        deleted += 1
    return deleted


def delete_all_memories(
    ctx: Context, user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None, app_id: AppId = None
) -> dict[str, Any]:
    """Delete every memory of a user (optionally only an agent's or one conversation's). Only when the user
    asks to forget everything."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        # Only the user comes from the headers: an agent, a conversation or a project narrows when named.
        _storable(agent_id=agent_id, run_id=run_id, app_id=app_id)
        subject = _subject(headers, user_id=user_id)
        if not subject["user_id"]:
            raise ValueError(_("user_id: required to delete all of a user's memories."))
        if run_id or app_id:
            require_subject(actor, subject["user_id"], write=True)
            rows = readable_memories(actor).filter(user_id=subject["user_id"])
            if run_id:
                rows = rows.filter(session_id=run_id)
            if agent_id:
                rows = rows.filter(agent_id=agent_id)
            if app_id:
                rows = rows.filter(project=_project(actor, app_id))
            deleted = _delete_each(actor, rows, "delete_all_memories tool")
        else:
            deleted = services.memory_delete_all(
                actor=actor, org=actor.org, user_id=subject["user_id"], agent_id=agent_id or None
            )
        return {
            "deleted": deleted,
            "message": ngettext("%(n)d memory deleted.", "%(n)d memories deleted.", deleted) % {"n": deleted},
        }

    return _run(ctx, work)


def list_entities(ctx: Context) -> dict[str, Any]:
    """The users, agents, conversations (runs) and projects (apps) that have memories, with their counts."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        rows = readable_memories(actor).filter(status="active")
        results = []
        for kind, column in (
            ("user", "user_id"),
            ("agent", "agent_id"),
            ("run", "session_id"),
            ("app", "project"),
        ):
            counted = rows.exclude(**{f"{column}__isnull": True})
            if column != "project":
                counted = counted.exclude(**{column: ""})
            for value, total in (
                counted.values_list(column)
                .annotate(n=Count("pk"))
                .order_by(column)
                .values_list(column, "n")[:1000]
            ):
                results.append({"type": kind, "id": str(value), "total_memories": total})
        return {"results": results}

    return _run(ctx, work)


def delete_entities(
    ctx: Context, user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None, app_id: AppId = None
) -> dict[str, Any]:
    """Delete an entity and its memories: a user (everything about them: memories, sessions, profile), an
    agent's, a conversation's or a project's memories. Only on the user's explicit request. Defaults from
    the X-Engram-* headers do not apply here: name the entity."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        _storable(user_id=user_id, agent_id=agent_id, run_id=run_id, app_id=app_id)
        if not (user_id or agent_id or run_id or app_id):
            raise ValueError(_("Name the entity to delete: user_id, agent_id, run_id or app_id."))
        out: dict[str, Any] = {}
        if user_id:  # as DELETE /api/v1/users/{user_id}
            require_forget_subject(actor, user_id)
            with transaction.atomic():
                out["user"] = subject_forget(actor=actor, org=actor.org, user_id=user_id)
                audit.subject_forgotten(actor, user_id, details={"deleted": out["user"]["deleted"]})
        for kind, given, column in (("agent", agent_id, "agent_id"), ("run", run_id, "session_id")):
            if given:
                rows = readable_memories(actor).filter(**{column: given})
                out[kind] = {"deleted": _delete_each(actor, rows, "delete_entities tool")}
        if app_id:
            project = _project(actor, app_id)
            rows = readable_memories(actor).filter(project=project, scope=Scope.PROJECT)
            out["app"] = {"deleted": _delete_each(actor, rows, "delete_entities tool")}
        return {"results": out, "message": _("Entity deleted.")}

    return _run(ctx, work)


def get_context(
    ctx: Context,
    query: Annotated[str, Field(description="What the user just asked (empty: profile and core only).")] = "",
    user_id: UserId = None,
    run_id: RunId = None,
    app_id: AppId = None,
    top_k: Annotated[int, Field(ge=1, le=50, description="Relevant memories at the most.")] = 8,
    max_tokens: Annotated[int, Field(ge=1, le=100_000, description="Token budget of the memories.")] = 1000,
) -> dict[str, Any]:
    """Everything to know before answering, in one call: the user's profile, core and relevant memories,
    the conversation's summary and recent messages, and a ready prompt block."""

    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        _storable(query=query)
        subject = _subject(headers, user_id=user_id, run_id=run_id, app_id=app_id)
        if not subject["user_id"]:
            raise ValueError(_("user_id: required."))
        require_subject(actor, subject["user_id"])
        project = _project(actor, subject["app_id"])
        filters = MemoryFilters(user_id=subject["user_id"], project=project, session_id=subject["run_id"])
        built = context_build(actor=actor, filters=filters, query=query, top_k=top_k, max_tokens=max_tokens)
        return {
            "prompt": built.prompt,
            "profile": built.profile,
            "core": [m.content for m in built.core],
            "relevant": [
                {"id": h.id, "memory": h.row["content"], "score": round(h.score, 4)} for h in built.relevant
            ],
            "summary": built.summary,
            "language": built.language,
            "injection_id": built.log.pk,
        }

    return _run(ctx, work)


# The older names: the two tools of GET /api/v1/tools (their arguments as there, run by the same
# invoke_tool) and OpenMemory's.

ScopeName = Literal["user", "project", "session"]
TypeName = Literal[tuple(TYPES)]  # type: ignore[valid-type]


def _invoke(ctx: Context, name: str, arguments: dict) -> dict[str, Any]:
    def work(actor: Actor, headers: dict) -> dict[str, Any]:
        subject = _subject(headers)
        return invoke_tool(
            actor,
            name,
            {k: v for k, v in arguments.items() if v is not None},
            user_id=subject["user_id"],
            project=subject["app_id"],
            session_id=subject["run_id"],
            agent_id=subject["agent_id"],
        )["result"]

    return _run(ctx, work)


def memory_add_alias(
    ctx: Context,
    content: Annotated[str, Field(description="The statement to remember, in the user's language.")],
    memory_type: TypeName | None = None,
    scope: ScopeName | None = None,
) -> dict[str, Any]:
    return _invoke(ctx, "memory_add", {"content": content, "memory_type": memory_type, "scope": scope})


def memory_search_alias(
    ctx: Context,
    query: Annotated[str, Field(description="What to recall, in words (any language).")],
    k: Annotated[int | None, Field(ge=1, le=20, description="How many (default 5).")] = None,
    memory_type: TypeName | None = None,
    scope: ScopeName | None = None,
) -> dict[str, Any]:
    return _invoke(ctx, "memory_search", {"query": query, "k": k, "memory_type": memory_type, "scope": scope})


def add_memories(
    ctx: Context, text: Annotated[str, Field(description="What to remember.")]
) -> dict[str, Any]:
    """OpenMemory's name for add_memory (the subject from the X-Engram-* headers)."""
    return add_memory(ctx, text)


def search_memory(
    ctx: Context, query: Annotated[str, Field(description="What to recall.")]
) -> dict[str, Any]:
    """OpenMemory's name for search_memories (the subject from the X-Engram-* headers)."""
    return search_memories(ctx, query)


def list_memories(ctx: Context) -> dict[str, Any]:
    """OpenMemory's name for get_memories (the subject from the X-Engram-* headers)."""
    return get_memories(ctx)


TOOL_FUNCTIONS = [
    add_memory,
    search_memories,
    get_memories,
    get_memory,
    update_memory,
    delete_memory,
    delete_all_memories,
    list_entities,
    delete_entities,
    get_context,
]
# name -> (function, description): the names served before, kept as aliases.
ALIASES = {
    "memory_add": (
        memory_add_alias,
        next(t for t in TOOLS if t["function"]["name"] == "memory_add")["function"],
    ),
    "memory_search": (
        memory_search_alias,
        next(t for t in TOOLS if t["function"]["name"] == "memory_search")["function"],
    ),
    "add_memories": (add_memories, None),
    "search_memory": (search_memory, None),
    "list_memories": (list_memories, None),
}
TOOL_NAMES = [f.__name__ for f in TOOL_FUNCTIONS] + list(ALIASES)


def mcp_server() -> MCPServer:
    """The MCP server with every tool (a new one per app: the SDK's session manager runs once)."""
    server = MCPServer(SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS, subscriptions=False)
    for function in TOOL_FUNCTIONS:
        server.add_tool(function, structured_output=True)
    for name, (function, described) in ALIASES.items():
        server.add_tool(
            function,
            name=name,
            description=described["description"] if described else None,
            structured_output=True,
        )
    return server


# ---- the ASGI app -------------------------------------------------------------------------------


async def _refuse(send, status: int, code: str, message: str, headers: list | None = None) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


def mcp_asgi_app():
    """The SDK's Streamable HTTP app at /api/v1/mcp (JSON answers, sessions for the handshake revisions),
    behind the Host check and the API-key authentication of the REST API."""
    inner = mcp_server().streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        # Django's ALLOWED_HOSTS is checked below; an API key, not a cookie, is what authenticates.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    )

    async def app(scope, receive, send):
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts and stops with it
            await inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        with translation.override(_language(headers)):
            domain, _port = split_domain_port(headers.get("host", ""))
            if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
                await _refuse(send, 400, "bad_request", _("This host is not served here."))
                return
            secret = _secret(headers)
            if not secret:
                await _refuse(
                    send,
                    401,
                    "not_authenticated",
                    _("Send an org API key: Authorization: Bearer <key> (or X-Api-Key)."),
                    [(b"www-authenticate", b"Bearer")],
                )
                return
            request = _django_request(headers, (scope.get("client") or ("", 0))[0])
            try:
                key = await anyio.to_thread.run_sync(_authenticate, secret, request)
            except Throttled as exc:
                wait = str(int(exc.wait or 1)).encode()
                await _refuse(send, 429, "throttled", str(exc.detail), [(b"retry-after", wait)])
                return
            except AuthenticationFailed as exc:
                await _refuse(
                    send, 401, "authentication_failed", str(exc.detail), [(b"www-authenticate", b"Bearer")]
                )
                return
        token = AccessToken(token=f"key:{key.pk}", client_id=f"key:{key.pk}", scopes=[])
        # The SDK answers a session's requests only for the credential that opened it.
        scope = {**scope, "user": AuthenticatedUser(token), "engram.key": key, "engram.request": request}
        await inner(scope, receive, send)

    return app
