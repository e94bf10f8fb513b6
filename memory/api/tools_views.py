"""Agent tools (seed 000 "Memory Tools"): OpenAI function-calling schemas and an invoke endpoint that
runs them through the same services as the REST API (source "agent"; the gate applies)."""

from __future__ import annotations

import json

from django.http import Http404
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from memory import pause, services
from memory.drafts import MemoryDraft
from memory.gate import GateRejection
from memory.injections import injection_log_row
from memory.models import MemoryType, Scope, Source
from memory.search import MAX_QUERY_CHARS, SearchError, memory_search
from memory.selectors import MemoryFilters
from projects.access import project_by_ref, require_project, require_subject
from projects.api.base import EngramAPIView, StrictSerializer
from projects.api.errors import ApiError
from projects.api.idempotency import idempotent
from projects.api.schema import errors

from .schemas import MemoryAddInvocationSerializer, MemorySearchInvocationSerializer, ToolListSerializer

TYPES = list(MemoryType.values)
SCOPES = list(Scope.values)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "memory_add",
            "description": (
                "Save one long-term memory about the user (or the shared project). Call it when the user asks you "
                "to remember something (记住 / 帮我记住 / 记一下 / remember / from now on / 以后), tells you who they "
                "are (我是… / 我叫… / I'm a … / call me …), or states a lasting preference, habit or constraint "
                "(我喜欢… / 不要… / I prefer … / always … / never …), or corrects something you remembered. "
                "Write one short statement in the user's own language, e.g. '用户对花生过敏' or 'Prefers answers "
                "in English'. Do not save passwords, keys or ID numbers, guesses, or details that only matter "
                "for the current task."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {
                        "type": "string",
                        "description": "The statement to remember, 5-2000 characters, in the user's language.",
                    },
                    "memory_type": {
                        "type": "string",
                        "enum": TYPES,
                        "description": "preference (likes, style), fact, core (identity: name, role), habit, "
                        "constraint (must / must not), decision, skill, event, context, summary, note.",
                    },
                    "scope": {
                        "type": "string",
                        "enum": SCOPES,
                        "description": "user: about the user, across conversations (default). project: shared "
                        "with the project's members. session: only for this conversation.",
                    },
                },
                "required": ["content"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_search",
            "description": (
                "Search what is remembered about the user and the project. Call it before answering whenever "
                "you need to recall the user: their preferences and formats, who they are, earlier decisions, "
                "constraints, or anything they refer to from before ('like last time', '我上次说的', "
                "'你还记得…吗'). Returns the most relevant memories, best first."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to recall, in words (any language)."},
                    "k": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 20,
                        "description": "How many (default 5).",
                    },
                    "memory_type": {"type": "string", "enum": TYPES, "description": "Only this type."},
                    "scope": {"type": "string", "enum": SCOPES, "description": "Only this scope."},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
]
TOOL_NAMES = {tool["function"]["name"] for tool in TOOLS}


class AddArguments(StrictSerializer):
    content = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    memory_type = serializers.ChoiceField(choices=TYPES, default="fact")
    scope = serializers.ChoiceField(choices=SCOPES, default="user")


class SearchArguments(StrictSerializer):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS)
    k = serializers.IntegerField(min_value=1, max_value=20, default=5)
    memory_type = serializers.ChoiceField(choices=TYPES, required=False)
    scope = serializers.ChoiceField(choices=SCOPES, required=False)


@extend_schema_field(
    {
        "oneOf": [{"type": "object", "additionalProperties": True}, {"type": "string"}],
        "description": "The tool's arguments (see GET tools), as an object or as a JSON string.",
    }
)
class ArgumentsField(serializers.JSONField):
    pass


class InvokeInput(StrictSerializer):
    # OpenAI hands tool arguments over as a JSON string; an object is accepted too.
    arguments = ArgumentsField(required=False, default=dict)
    user_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    project = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")
    session_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    agent_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")


INVOCATION = PolymorphicProxySerializer(
    component_name="ToolInvocation",
    serializers={
        "memory_add": MemoryAddInvocationSerializer,
        "memory_search": MemorySearchInvocationSerializer,
    },
    resource_type_field_name="tool",
)


class ToolListView(EngramAPIView):
    @extend_schema(responses=ToolListSerializer)
    def get(self, request):
        """The tools as OpenAI function-calling schemas (pass them as `tools` to a chat completion)."""
        return Response({"tools": TOOLS})


def _arguments(raw, serializer_class) -> dict:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise ApiError(400, "invalid", "arguments: not valid JSON.") from None
    if not isinstance(raw, dict):
        raise ApiError(400, "invalid", "arguments: a JSON object.")
    data = serializer_class(data=raw)
    if not data.is_valid():
        raise ApiError(
            400,
            "invalid",
            "arguments: " + "; ".join(f"{k}: {' '.join(map(str, v))}" for k, v in data.errors.items()),
            details=data.errors,
        )
    return data.validated_data


class ToolInvokeView(EngramAPIView):
    @extend_schema(request=InvokeInput, responses={200: INVOCATION, **errors(422)})
    @idempotent
    def post(self, request, name):
        """Run a tool for the caller's context (user_id, project, session_id)."""
        if name not in TOOL_NAMES:
            raise Http404(f"No tool {name}.")
        data = InvokeInput(data=request.data)
        data.is_valid(raise_exception=True)
        context = data.validated_data
        return Response(invoke_tool(self.actor, name, context.pop("arguments"), **context))


def invoke_tool(
    actor,
    name: str,
    arguments,
    *,
    user_id: str = "",
    project: str = "",
    session_id: str = "",
    agent_id: str = "",
) -> dict:
    """Run one tool through the services; shared by the REST invoke endpoint and MCP's tools/call."""
    if name not in TOOL_NAMES:
        raise Http404(f"No tool {name}.")
    if actor.is_key and not user_id:
        raise ApiError(400, "invalid", "user_id: required when an API key invokes a tool.")
    context = {"user_id": user_id or actor.user_id, "session_id": session_id, "agent_id": agent_id}
    found_project = project_by_ref(actor, project)
    if name == "memory_add":
        return _add(actor, _arguments(arguments, AddArguments), context, found_project)
    return _search(actor, _arguments(arguments, SearchArguments), context, found_project)


def _add(actor, args: dict, context: dict, project) -> dict:
    scope = args["scope"]
    if scope == Scope.PROJECT and project is None:
        raise ApiError(400, "invalid", "scope project needs the caller's project.")
    if scope == Scope.SESSION and not context["session_id"]:
        raise ApiError(400, "invalid", "scope session needs the caller's session_id.")
    try:
        draft = MemoryDraft(
            content=args["content"],
            memory_type=args["memory_type"],
            scope=scope,
            user_id=context["user_id"],
            project=project if scope == Scope.PROJECT else None,
            session_id=context["session_id"] if scope != Scope.PROJECT else "",
            agent_id=context["agent_id"],
            source=Source.AGENT,
            confidence=0.9,
        )
        result = services.memory_create(actor=actor, org=actor.org, draft=draft, reason="memory_add tool")
    except GateRejection as exc:
        raise ApiError(422, exc.code, exc.message) from exc
    except pause.MemoryPaused as exc:
        return {"tool": "memory_add", "result": exc.body(), "output": exc.message}
    item = result.item
    if result.supersedes is not None:
        status, verb = "superseded", f"Remembered, replacing #{result.supersedes}"
    elif result.created:
        status, verb = "created", "Remembered"
    else:
        status, verb = "merged", "Already remembered (merged)"
    decision = result.decision
    return {
        "tool": "memory_add",
        "result": {
            "status": status,
            "id": item.pk,
            "content": item.content,
            "memory_type": item.memory_type,
            "scope": item.scope,
            "duplicate_of": result.duplicate_of,
            "supersedes": result.supersedes,
            "decision": {"kind": decision.kind, "reason": decision.reason} if decision else None,
        },
        "output": f"{verb}: {item.content} (#{item.pk})",
    }


def _search(actor, args: dict, context: dict, project) -> dict:
    require_subject(actor, context["user_id"])
    if project is not None:
        require_project(actor, project)
    filters = MemoryFilters(
        user_id=context["user_id"],
        project=project,
        session_id=context["session_id"],
        memory_types=[args["memory_type"]] if args.get("memory_type") else [],
        scopes=[args["scope"]] if args.get("scope") else [],
    )
    try:
        found = memory_search(actor=actor, query=args["query"], filters=filters, top_k=args["k"])
    except SearchError as exc:
        raise ApiError(400, "invalid", str(exc)) from exc
    hits = [
        {
            "id": hit.id,
            "content": hit.row["content"],
            "memory_type": hit.row["memory_type"],
            "scope": hit.row["scope"],
            "score": round(hit.score, 4),
        }
        for hit in found.hits
    ]
    injection_log_row(
        org=actor.org,
        user_id=context["user_id"],
        project=project,
        session_id=context["session_id"],
        kind="tool",
        query=args["query"][:4000],
        caller=actor.label,
        memory_ids=[h["id"] for h in hits],
    ).save()
    lines = [f"- [{h['memory_type']}] {h['content']}" for h in hits]
    return {
        "tool": "memory_search",
        "result": {"memories": hits},
        "output": "\n".join(lines) if lines else "No matching memories.",
    }
