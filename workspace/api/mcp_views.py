"""/api/v1/mcp on the web server: forwarded to the MCP process (workspace.mcp, config/mcp.py), which speaks
the protocol through the official SDK. The key is checked here first (the same authentication, lockout and
rate limit as every API call, with the client's real address) and again there.

The web server is WSGI (gunicorn gthread): it forwards each POST (one JSON-RPC message, answered as JSON)
and DELETE (end of a session); GET, the stream for messages the server starts, is 405: Engram never sends
any, and an open stream would hold a web thread.
"""

from __future__ import annotations

import httpx
from django.conf import settings
from django.http import HttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from projects.api.base import EngramAPIView
from projects.authentication import ApiKeyAuthentication, ApiKeyHeaderAuthentication
from projects.origin import client_address

from ..mcp import FORWARDED_FOR

# Request headers the MCP process reads; the rest (cookies above all) stay here.
FORWARDED = (
    "Accept",
    "Accept-Language",
    "Authorization",
    "Content-Type",
    "Host",
    "Last-Event-ID",
    "Mcp-Method",
    "Mcp-Name",
    "Mcp-Protocol-Version",
    "Mcp-Session-Id",
    "User-Agent",
    "X-Api-Key",
    "X-Engram-Agent-Id",
    "X-Engram-Project",
    "X-Engram-Session-Id",
    "X-Engram-User-Id",
)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "date", "server"}
TIMEOUT = httpx.Timeout(110.0, connect=5.0)  # under gunicorn's 120 s: the caller gets a 503, not a cut
_client = httpx.Client(timeout=TIMEOUT, trust_env=False)


class McpView(EngramAPIView):
    authentication_classes = [ApiKeyAuthentication, ApiKeyHeaderAuthentication]

    def perform_content_negotiation(self, request, force=False):
        # MCP clients accept "application/json, text/event-stream"; the answer is the MCP process's.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(exclude=True)
    def post(self, request):
        return self._forward(request)

    @extend_schema(exclude=True)
    def delete(self, request):
        return self._forward(request)

    @extend_schema(exclude=True)
    def get(self, request):
        answer = Response(
            {
                "error": {
                    "code": "method_not_allowed",
                    "message": _("No server-initiated stream: POST each message."),
                }
            },
            status=405,
        )
        answer["Allow"] = "POST, DELETE"
        return answer

    def _forward(self, request):
        upstream = settings.ENGRAM_MCP_URL
        if not upstream:
            return Response(
                {"error": {"code": "mcp_unavailable", "message": _("The MCP server is not running.")}},
                status=503,
            )
        headers = {name: request.headers[name] for name in FORWARDED if name in request.headers}
        headers[FORWARDED_FOR] = client_address(request)
        try:
            answer = _client.request(request.method, upstream, content=request.body, headers=headers)
        except httpx.HTTPError:
            return Response(
                {"error": {"code": "mcp_unavailable", "message": _("The MCP server did not answer.")}},
                status=503,
            )
        response = HttpResponse(answer.content, status=answer.status_code)
        for name, value in answer.headers.items():
            if name.lower() not in HOP_BY_HOP:
                response[name] = value
        return response
