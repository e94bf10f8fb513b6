"""Search and injection-log endpoints. Views parse, call one selector, serialize."""

from __future__ import annotations

import time

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.replicas import read_on_replica
from core.times import rfc3339
from memory.models import InjectionLog, MemoryItem, MemoryType, Scope, Status
from memory.search import COLUMNS, MAX_QUERY_CHARS, Hit, SearchError, memory_search
from memory.selectors import MemoryFilters, injections_for_memory, injections_for_user, readable_memories
from projects.access import project_by_ref, require_project, require_subject
from projects.api.base import EngramAPIView, StrictSerializer
from projects.api.errors import ApiError, unstorable_error
from projects.api.pagination import CreatedCursorPagination

from . import examples
from .schemas import SearchResultsSerializer


class _Names(serializers.ListField):
    child = serializers.CharField(max_length=255)


class ReadInput(StrictSerializer):
    user_id = serializers.CharField(max_length=255)
    project = serializers.CharField(max_length=64, required=False, allow_blank=True)
    session_id = serializers.CharField(max_length=255, required=False, allow_blank=True)
    agent_id = serializers.CharField(max_length=255, required=False, allow_blank=True)
    skills = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, max_length=100
    )
    top_k = serializers.IntegerField(required=False, default=8, min_value=1, max_value=100)
    max_tokens = serializers.IntegerField(required=False, default=1000, min_value=1, max_value=100_000)


class SearchInput(ReadInput):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS, trim_whitespace=True)
    memory_types = serializers.ListField(
        child=serializers.ChoiceField(choices=MemoryType.choices), required=False, max_length=20
    )
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices), required=False)
    tags = serializers.ListField(child=serializers.CharField(max_length=100), required=False, max_length=50)
    status = serializers.ListField(child=serializers.ChoiceField(choices=Status.choices), required=False)
    metadata = serializers.DictField(required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    occurred_after = serializers.DateTimeField(required=False)
    occurred_before = serializers.DateTimeField(required=False)
    include_superseded = serializers.BooleanField(required=False, default=False)
    include_expired = serializers.BooleanField(required=False, default=False)
    explain = serializers.BooleanField(required=False, default=False)
    threshold = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0.0,
        max_value=1.0,
        help_text="Leave out results scoring under this (0..1). Default: the embedding model's calibrated "
        "relevance floor, so a query about nothing the subject mentioned answers an empty list; 0 keeps all.",
    )
    # hybrid is the product; vector and keyword rank by one side alone (baselines, debugging).
    mode = serializers.ChoiceField(choices=["hybrid", "vector", "keyword"], required=False, default="hybrid")

    def validate_status(self, value):
        return list(value)

    def validate_metadata(self, value):
        error = unstorable_error(value)
        if error is not None:
            where, message = error
            raise serializers.ValidationError(f"{where}: {message}")
        return value


def _project(actor, ref: str | None):
    project = project_by_ref(actor, ref)
    if project is not None:
        require_project(actor, project)
    return project


def filters_from(actor, data: dict) -> MemoryFilters:
    """Check the subject and project against the access module, then build the filters."""
    require_subject(actor, data["user_id"])
    return MemoryFilters(
        user_id=data["user_id"],
        project=_project(actor, data.get("project")),
        session_id=data.get("session_id", ""),
        agent_id=data.get("agent_id", ""),
        skills=data.get("skills"),
        memory_types=data.get("memory_types", []),
        scopes=data.get("scopes", []),
        tags=data.get("tags", []),
        statuses=data.get("status", []),
        metadata=data.get("metadata", {}),
        created_after=data.get("created_after"),
        created_before=data.get("created_before"),
        occurred_after=data.get("occurred_after"),
        occurred_before=data.get("occurred_before"),
        include_superseded=data.get("include_superseded", False),
        include_expired=data.get("include_expired", False),
    )


def iso(value):
    return rfc3339(value)


def memory_dict(row: dict) -> dict:
    return {
        "id": row["id"],
        "content": row["content"],
        "memory_type": row["memory_type"],
        "scope": row["scope"],
        "user_id": row["user_id"],
        "project": row["project_id"],  # the project's id, named as in every answer
        "session_id": row["session_id"],
        "agent_id": row["agent_id"],
        "skill": row["skill"],
        "source": row["source"],
        "confidence": row["confidence"],
        "status": row["status"],
        "pinned": row["pinned"],
        "tags": row["tags"],
        "metadata": row["metadata"],
        "occurred_at": iso(row["occurred_at"]),
        "created_at": iso(row["created_at"]),
        "version": row["version"],
    }


def hit_dict(hit: Hit, explain: bool) -> dict:
    out = memory_dict(hit.row)
    out["score"] = round(hit.score, 4)
    if explain:
        out["explain"] = {
            **hit.components(),
            "tokens": hit.tokens,
            "near_duplicate_group": hit.group,
            "neighbour_of": hit.neighbour_of,
        }
    return out


def item_dict(item: MemoryItem) -> dict:
    return memory_dict({name: getattr(item, name) for name in COLUMNS})


def validated(serializer_class, request) -> dict:
    if not isinstance(request.data, dict):
        raise ApiError(400, "invalid", "The body must be a JSON object.")
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class SearchView(EngramAPIView):
    """POST /memories/search: hybrid (vector + keyword) search over what the caller may read."""

    @extend_schema(request=SearchInput, responses=SearchResultsSerializer, examples=examples.SEARCH)
    @read_on_replica
    def post(self, request):
        started = time.perf_counter()
        data = validated(SearchInput, request)
        filters = filters_from(self.actor, data)
        try:
            result = memory_search(
                actor=self.actor,
                query=data["query"],
                filters=filters,
                top_k=data["top_k"],
                max_tokens=data["max_tokens"],
                rank=data["mode"],
                threshold=data["threshold"],
            )
        except SearchError as exc:
            raise ApiError(400, "invalid", str(exc)) from exc
        body = {
            "results": [hit_dict(h, data["explain"]) for h in result.hits],
            "took_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        if data["explain"]:
            body["explain"] = {
                "embedding_model": result.model,
                "embed_ms": round(result.embed_ms, 2),
                "search_ms": round(result.took_ms - result.embed_ms, 2),
                "candidates": result.candidates,
                "notes": result.notes,
            }
        elif result.notes:
            body["notes"] = result.notes
        return Response(body)


class InjectionSerializer(serializers.ModelSerializer):
    project = serializers.PrimaryKeyRelatedField(read_only=True)  # its id, as in every answer
    memory_ids = serializers.ListField(child=serializers.IntegerField(), read_only=True)

    class Meta:
        model = InjectionLog
        fields = [
            "id",
            "user_id",
            "project",
            "session_id",
            "kind",
            "query",
            "caller",
            "memory_ids",
            "created_at",
        ]


class _InjectionList(EngramAPIView):
    pagination_class = CreatedCursorPagination

    def page(self, request, qs):
        paginator = self.pagination_class()
        rows = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(InjectionSerializer(rows, many=True).data)


class InjectionListView(_InjectionList):
    """GET /injections?user_id=…: what was handed to agents about a subject, newest first."""

    @extend_schema(responses={200: InjectionSerializer(many=True)})
    def get(self, request):
        user_id = request.query_params.get("user_id", "")
        if not user_id:
            raise ApiError(400, "invalid", "user_id: This query parameter is required.")
        require_subject(self.actor, user_id)
        return self.page(request, injections_for_user(actor=self.actor, user_id=user_id))


class MemoryInjectionListView(_InjectionList):
    """GET /memories/{id}/injections: when this memory was handed to an agent, and for which query."""

    @extend_schema(responses={200: InjectionSerializer(many=True)})
    def get(self, request, pk: int):
        item = readable_memories(self.actor).filter(pk=pk).first()
        if item is None:
            raise Http404("No such memory.")
        return self.page(request, injections_for_memory(actor=self.actor, item=item))
