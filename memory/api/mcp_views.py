"""The agent tools over MCP (Model Context Protocol), Streamable HTTP transport with JSON responses.

POST /api/v1/mcp carries one JSON-RPC 2.0 message: initialize, ping, tools/list, tools/call.
Authentication is the same Bearer API key as the REST API. The caller's context travels in headers:
X-Engram-User-Id, X-Engram-Project, X-Engram-Session-Id, X-Engram-Agent-Id.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.response import Response

from projects.api.base import EngramAPIView
from projects.api.errors import error_text
from projects.api.idempotency import idempotent

from .schemas import JsonRpcRequestSerializer, JsonRpcResponseSerializer
from .tools_views import TOOL_NAMES, TOOLS, invoke_tool

PROTOCOL_VERSION = "2025-06-18"
SERVER_INFO = {"name": "engram", "version": "1.0.0"}


def _mcp_tool(tool: dict) -> dict:
    fn = tool["function"]
    return {"name": fn["name"], "description": fn["description"], "inputSchema": fn["parameters"]}


def _id(message) -> str | int | float | None:
    """The request's id when JSON-RPC allows it (a string, a number or null); None for anything else."""
    value = message.get("id") if isinstance(message, dict) else None
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    return None


def _error(msg_id, code: int, message: str) -> Response:
    return Response({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _answered(response) -> bool:
    """An MCP answer worth replaying: a result, not a protocol or tool error (both come with a 200)."""
    data = response.data
    return isinstance(data, dict) and "result" in data and not (data["result"] or {}).get("isError")


class McpView(EngramAPIView):
    @extend_schema(
        request=JsonRpcRequestSerializer,
        responses={
            200: JsonRpcResponseSerializer,
            202: OpenApiResponse(description="A notification (no id): accepted, no answer."),
        },
    )
    @idempotent(keep=_answered)
    def post(self, request):
        """One JSON-RPC message of the MCP protocol (tools: memory_add, memory_search)."""
        try:
            message = request.data
        except ParseError:
            return _error(None, -32700, "Parse error: the body is not valid JSON.")
        except (
            ValidationError
        ) as exc:  # JSON, but holding what PostgreSQL cannot store (a NUL, a lone surrogate)
            return _error(None, -32602, f"Invalid params: {error_text(exc.detail)}")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "method" not in message:
            return _error(_id(message), -32600, "Invalid Request.")
        if message.get("id") is not None and _id(message) is None:
            return _error(None, -32600, "Invalid Request: id must be a string, a number or null.")
        msg_id, method, params = _id(message), message["method"], message.get("params") or {}
        if "id" not in message:  # a notification (e.g. notifications/initialized): accepted, no answer
            return Response(status=202)
        if not isinstance(params, dict):
            return _error(msg_id, -32602, "params must be an object.")
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion") or PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
                "instructions": "Call memory_search before answering to recall the user; call memory_add when the "
                "user asks you to remember something or states a lasting preference or fact.",
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [_mcp_tool(t) for t in TOOLS]}
        elif method == "tools/call":
            name = params.get("name")
            if name not in TOOL_NAMES:
                return _error(msg_id, -32602, f"Unknown tool: {name!r}")
            result = self._call(name, params.get("arguments") or {})
        else:
            return _error(msg_id, -32601, f"Method not found: {method}")
        return Response({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _call(self, name: str, arguments) -> dict:
        headers = self.request.headers
        try:
            out = invoke_tool(
                self.actor,
                name,
                arguments,
                user_id=headers.get("X-Engram-User-Id", ""),
                project=headers.get("X-Engram-Project", ""),
                session_id=headers.get("X-Engram-Session-Id", ""),
                agent_id=headers.get("X-Engram-Agent-Id", ""),
            )
        except (APIException, Http404, PermissionDenied) as exc:
            # Tool execution errors are results the model can read, not protocol errors.
            detail = getattr(exc, "detail", None) or str(exc) or type(exc).__name__
            code = getattr(exc, "code", None) or type(exc).__name__
            return {"isError": True, "content": [{"type": "text", "text": f"{code}: {detail}"}]}
        return {
            "isError": False,
            "content": [{"type": "text", "text": out["output"]}],
            "structuredContent": out["result"],
        }
