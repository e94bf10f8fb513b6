"""POST /api/v1/context: what an agent should know before it answers (see workspace.context)."""

from __future__ import annotations

import time

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.replicas import read_on_replica
from memory.api.examples import SEARCH_HIT
from memory.api.search_views import ReadInput, filters_from, hit_dict, iso, item_dict, validated
from memory.search import MAX_QUERY_CHARS
from projects.api.base import EngramAPIView

from ..context import context_build
from .schemas import ContextSerializer


class ContextInput(ReadInput):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS, required=False, allow_blank=True, default="")


EXAMPLES = [
    OpenApiExample(
        "Before answering Alice in a support chat",
        value={"user_id": "alice", "session_id": "chat-7", "query": "How should I format my answer?"},
        request_only=True,
    ),
    OpenApiExample(
        "Profile, memories, conversation and a ready prompt",
        value={
            "profile": {"user": {"language_preference": "en"}, "project": {}},
            "core": [],
            "relevant": [SEARCH_HIT],
            "summary": "",
            "recent_messages": [
                {
                    "role": "human",
                    "content": "Can you show me an example?",
                    "created_at": "2026-03-01T09:31:00Z",
                }
            ],
            "language": "en",
            "prompt": "## User profile\n- Language preference: en\n\n## Relevant memories\n"
            "- [preference] Prefers answers in English, with code samples in Python",
            "injection_id": 310,
            "took_ms": 41.2,
        },
        response_only=True,
        status_codes=["200"],
    ),
]


class ContextView(EngramAPIView):
    """POST /context: profile, core and relevant memories, session summary and recent messages, prompt."""

    @extend_schema(request=ContextInput, responses=ContextSerializer, examples=EXAMPLES)
    @read_on_replica
    def post(self, request):
        started = time.perf_counter()
        data = validated(ContextInput, request)
        filters = filters_from(self.actor, data)
        ctx = context_build(
            actor=self.actor,
            filters=filters,
            query=data.get("query", ""),
            top_k=data["top_k"],
            max_tokens=data["max_tokens"],
        )
        body = {
            "profile": ctx.profile,
            "core": [item_dict(m) for m in ctx.core],
            "relevant": [hit_dict(h, False) for h in ctx.relevant],
            "summary": ctx.summary,
            "recent_messages": [
                {"role": m.role, "content": m.content, "created_at": iso(m.created_at)}
                for m in ctx.recent_messages
            ],
            "language": ctx.language,
            "prompt": ctx.prompt,
            "injection_id": ctx.log.pk,
            "took_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        if ctx.notes:
            body["notes"] = ctx.notes
        return Response(body)
