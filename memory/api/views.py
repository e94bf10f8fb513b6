"""The memory API: items, batch, history/restore, delete-all, stats, seed 004's agent routes, embedding settings.

Reads go through memory.selectors (built from projects.access filters); writes through memory.services
(which ask projects.access). Views only parse, call one service or selector, and serialize.
"""

from __future__ import annotations

import re

from django.db import transaction
from django.db.models import BooleanField, Count, ExpressionWrapper, Q
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from audit import services as audit
from core.replicas import read_on_replica
from projects.access import embedding_config_subject, project_by_ref
from projects.api.base import EngramAPIView, EngramViewSet
from projects.api.choices import invalid_choice_message
from projects.api.errors import ApiError, error_text
from projects.api.idempotency import idempotent
from projects.api.schema import errors

from .. import services
from ..batch import memory_create_batch
from ..drafts import MemoryDraft, default_source
from ..embeddings import provider_for
from ..embeddings.config import embedding_config_delete, embedding_config_get, embedding_config_set
from ..filters import MemoryFilterSet
from ..gate import GateRejection
from ..models import MemoryItem, MemoryRevision, ReembedJob, Scope, Source
from ..selectors import memory_revisions, readable_memories, reembed_jobs_for
from . import examples
from .schemas import RevisionHistorySerializer
from .serializers import (
    AgentDeletedSerializer,
    AgentMemoryInputSerializer,
    AgentMemoryPatchSerializer,
    BatchInputSerializer,
    BatchOutputSerializer,
    DeletedCountSerializer,
    EmbeddingConfigInputSerializer,
    EmbeddingConfigOutputSerializer,
    EmbeddingConfigSerializer,
    MemoryInputSerializer,
    MemoryPatchSerializer,
    MemorySerializer,
    MemoryStatsSerializer,
    MemoryWriteSerializer,
    PausedSerializer,
    ReembedJobSerializer,
    RestoreSerializer,
    RevisionSerializer,
    SplitResultSerializer,
    SplitSerializer,
)

# ---- helpers -----------------------------------------------------------------------------------------


def gate_error(exc: GateRejection) -> ApiError:
    return ApiError(422, exc.code, exc.message)


def _snake(data):
    """Seed 004 spells fields in camelCase (userId, memoryType); accept both."""
    if not isinstance(data, dict):
        return data
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in data.items()}


def _validated(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def draft_from(actor, data: dict) -> MemoryDraft:
    """Resolve subject and project of one validated input; raises ApiError(400) or Http404."""
    scope = data["scope"]
    user_id = data.get("user_id") or ""
    if not user_id and not actor.is_key:
        user_id = actor.user_id or ""
    project = None
    if scope == Scope.PROJECT:
        if not data.get("project"):
            raise ApiError(400, "invalid", "project: required for scope project.")
        project = project_by_ref(actor, data["project"])
    elif data.get("project"):
        raise ApiError(400, "invalid", "project: only for scope project.")
    elif not user_id:
        raise ApiError(400, "invalid", "user_id: an API key must say which user the memory is about.")
    if scope == Scope.SESSION and not data.get("session_id"):
        raise ApiError(400, "invalid", "session_id: required for scope session.")
    fields = {k: v for k, v in data.items() if k not in ("scope", "user_id", "project")}
    fields.setdefault("source", default_source(actor))
    return MemoryDraft(scope=scope, user_id=user_id, project=project, **fields)


def create_one(actor, org, draft: MemoryDraft, *, reason: str = ""):
    try:
        return services.memory_create(actor=actor, org=org, draft=draft, reason=reason)
    except GateRejection as exc:
        raise gate_error(exc) from None


def created_response(result) -> Response:
    body = MemorySerializer(result.item).data
    if result.decision is not None:
        body["decision"] = {"kind": result.decision.kind, "reason": result.decision.reason}
    if result.created:
        if result.supersedes is not None:
            body["supersedes"] = result.supersedes
            body["similarity"] = result.similarity
        return Response(body, status=status.HTTP_201_CREATED, headers={"ETag": f'"{result.item.version}"'})
    body["duplicate_of"] = result.duplicate_of
    body["similarity"] = result.similarity
    return Response(body, status=status.HTTP_200_OK, headers={"ETag": f'"{result.item.version}"'})


def expected_version(request, data: dict) -> int | None:
    """The version a write was based on: the If-Match header ("3", W/"3") or a "version" field."""
    header = request.headers.get("If-Match")
    if header and header.strip() != "*":
        value = header.strip().removeprefix("W/").strip('"')
        if not value.isdigit():
            raise ApiError(400, "invalid", 'If-Match must be the memory\'s version, e.g. "3".')
        return int(value)
    return data.get("version")


def update_one(request, actor, item, data: dict):
    version = expected_version(request, data)
    fields = {k: v for k, v in data.items() if k not in ("version", "reason")}
    if "content" in fields and fields["content"] == item.content:
        fields.pop("content")
    try:
        return services.memory_update(
            actor=actor, item=item, expected_version=version, reason=data.get("reason", ""), **fields
        )
    except services.StaleVersion as exc:
        raise ApiError(
            412,
            "precondition_failed",
            f"The memory is at version {exc.current.version}, not {version}; reload and retry.",
            details={"version": exc.current.version},
        ) from None
    except GateRejection as exc:
        raise gate_error(exc) from None


def list_queryset(actor):
    return (
        readable_memories(actor)
        .defer("embedding", "search_tokens")
        .annotate(embedded=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()))
    )


def stats_of(qs) -> dict:
    def grouped(name):
        rows = qs.order_by().values(name).annotate(n=Count("id"))
        return {row[name]: row["n"] for row in rows}

    return {
        "total": qs.count(),
        "by_type": grouped("memory_type"),
        "by_source": grouped("source"),
        "by_status": grouped("status"),
        "user_count": qs.exclude(user_id="").order_by().values("user_id").distinct().count(),
    }


def no_revision(item: MemoryItem, number: int) -> ApiError:
    return ApiError(404, "not_found", f"Memory {item.pk} has no revision {number}.")


def readable_item(actor, pk, **extra) -> MemoryItem:
    item = readable_memories(actor).filter(pk=pk, **extra).select_related("project").first()
    if item is None:
        raise Http404("No such memory.")
    return item


MERGED = OpenApiResponse(
    PolymorphicProxySerializer(
        component_name="MemoryMergedOrPaused",
        serializers=[MemoryWriteSerializer, PausedSerializer],
        resource_type_field_name=None,
    ),
    description="A duplicate: the add merged into that memory (what came in is kept). Or memory is paused "
    'for the subject or the session (memory.pause): `"status": "paused"`, nothing stored.',
)

# ---- /memories ---------------------------------------------------------------------------------------


class MemoryViewSet(EngramViewSet):
    """Memories the caller may read; writes through the services and the gate."""

    serializer_class = MemorySerializer
    queryset = MemoryItem.objects.none()  # for the schema only; get_queryset() is what runs
    filterset_class = MemoryFilterSet  # list and stats, through DjangoFilterBackend (bad values: 400)

    def get_queryset(self):
        return list_queryset(self.actor)

    @extend_schema(responses=MemorySerializer(many=True))
    @read_on_replica
    def list(self, request):
        qs = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(MemorySerializer(page, many=True).data)

    @extend_schema(
        request=MemoryInputSerializer,
        responses={201: MemoryWriteSerializer, 200: MERGED, **errors(422)},
        examples=examples.MEMORY_ADD,
    )
    @idempotent
    def create(self, request):
        data = _validated(MemoryInputSerializer, request.data)
        return created_response(create_one(self.actor, self.org, draft_from(self.actor, data)))

    @extend_schema(request=BatchInputSerializer, responses=BatchOutputSerializer, examples=examples.BATCH)
    @idempotent
    def batch(self, request):
        data = _validated(BatchInputSerializer, request.data)
        drafts = []
        item_serializer = (
            MemoryInputSerializer()
        )  # one instance: building 1000 would cost more than the insert
        for raw in data["memories"]:
            try:
                drafts.append(draft_from(self.actor, item_serializer.run_validation(raw)))
            except serializers.ValidationError as exc:
                drafts.append(ApiError(400, "invalid", error_text(exc.detail)))  # "field: message"
            except (ApiError, Http404) as exc:
                drafts.append(exc)
        results = memory_create_batch(
            actor=self.actor, org=self.org, drafts=drafts, infer=data["infer"], dedup=data["dedup"]
        )
        body = []
        for r in results:
            row = {"index": r.index, "status": r.status}
            if r.id is not None:
                row["id"] = r.id
            if r.duplicate_of is not None:
                row.update(duplicate_of=r.duplicate_of, similarity=r.similarity)
            if r.supersedes is not None:
                row.update(supersedes=r.supersedes, similarity=r.similarity)
            if r.decision is not None:
                row["decision"] = {"kind": r.decision.kind, "reason": r.decision.reason}
            if r.code:
                row["error"] = {"code": r.code, "message": r.message}
            body.append(row)
        statuses = ("created", "duplicate", "superseded", "rejected", "paused")
        counts = {s: sum(1 for r in results if r.status == s) for s in statuses}
        if results and counts["paused"] == len(results):
            counts["status"] = "paused"
        return Response({**counts, "results": body})

    def retrieve(self, request, pk=None):
        item = readable_item(self.actor, pk)
        return Response(MemorySerializer(item).data, headers={"ETag": f'"{item.version}"'})

    @extend_schema(request=MemoryPatchSerializer, responses={200: MemorySerializer, **errors(412, 422)})
    def partial_update(self, request, pk=None):
        item = readable_item(self.actor, pk)
        data = _validated(MemoryPatchSerializer, request.data)
        item = update_one(request, self.actor, item, data)
        return Response(MemorySerializer(item).data, headers={"ETag": f'"{item.version}"'})

    @extend_schema(operation_id="v1_memories_destroy_2", responses={204: None, **errors(412)})
    def destroy(self, request, pk=None):
        item = readable_item(self.actor, pk)
        version = expected_version(request, {})
        if version is not None and version != item.version:
            raise ApiError(
                412, "precondition_failed", f"The memory is at version {item.version}, not {version}."
            )
        services.memory_delete(actor=self.actor, item=item)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        operation_id="v1_memories_destroy",
        parameters=[OpenApiParameter("user_id", str, required=True), OpenApiParameter("agent_id", str)],
        responses={200: DeletedCountSerializer},
    )
    def destroy_all(self, request):
        user_id = request.query_params.get("user_id")
        if not user_id:
            raise ApiError(400, "invalid", "user_id: required (DELETE memories?user_id=...).")
        deleted = services.memory_delete_all(
            actor=self.actor, org=self.org, user_id=user_id, agent_id=request.query_params.get("agent_id")
        )
        return Response({"deleted": deleted})

    @extend_schema(operation_id="v1_memories_history_list", responses=RevisionHistorySerializer)
    def history(self, request, pk=None):
        item = readable_item(self.actor, pk)
        revisions = memory_revisions(item=item).order_by("number")
        return Response({"results": RevisionSerializer(revisions, many=True).data})

    @extend_schema(request=RestoreSerializer, responses={200: MemorySerializer, **errors(422)})
    def restore(self, request, pk=None):
        item = readable_item(self.actor, pk)
        data = _validated(RestoreSerializer, request.data)
        try:
            item = services.memory_restore(
                actor=self.actor, item=item, number=data["revision"], reason=data["reason"]
            )
        except MemoryRevision.DoesNotExist:
            raise no_revision(item, data["revision"]) from None
        except GateRejection as exc:
            raise gate_error(exc) from None
        return Response(MemorySerializer(item).data)

    @extend_schema(
        request=SplitSerializer,
        responses={201: SplitResultSerializer, **errors(409, 422)},
        description="Turn what a merge revision recorded (its `incoming`) back into its own memory: "
        "404 no such revision, 400 not a merge or nothing recorded, 409 already split, 422 refused by the gate.",
    )
    def split(self, request, pk=None):
        item = readable_item(self.actor, pk)
        data = _validated(SplitSerializer, request.data)
        try:
            new = services.memory_split(
                actor=self.actor, item=item, revision_number=data["revision"], reason=data["reason"]
            )
        except MemoryRevision.DoesNotExist:
            raise no_revision(item, data["revision"]) from None
        except services.SplitRefused as exc:
            raise ApiError(exc.status, exc.code, exc.message) from None
        except GateRejection as exc:
            raise gate_error(exc) from None
        body = {**MemorySerializer(new).data, "split_from": item.pk}
        return Response(body, status=status.HTTP_201_CREATED, headers={"ETag": f'"{new.version}"'})

    @extend_schema(filters=True, responses=MemoryStatsSerializer)
    def stats(self, request):
        return Response(stats_of(self.filter_queryset(readable_memories(self.actor))))


# ---- seed 004: /agents/{agent_id}/memories -------------------------------------------------------------


class AgentMemoryViewSet(EngramViewSet):
    """One agent's memories. Creates are source admin with confidence 1.0 (seed 004)."""

    serializer_class = MemorySerializer
    queryset = MemoryItem.objects.none()  # for the schema only

    def get_queryset(self):
        return list_queryset(self.actor).filter(agent_id=self.kwargs["agent_id"])

    def _filter_values(self, request) -> dict:
        """Seed 004 filters by the URL's agent (get_queryset) and by ?user_id= (userId) only."""
        user_id = _snake(request.query_params.dict()).get("user_id")
        return {"user_id": user_id or None}

    def list(self, request, agent_id=None):
        qs = MemoryFilterSet.apply_values(self.get_queryset(), self._filter_values(request))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(MemorySerializer(page, many=True).data)

    @extend_schema(
        request=AgentMemoryInputSerializer, responses={201: MemoryWriteSerializer, 200: MERGED, **errors(422)}
    )
    @idempotent
    def create(self, request, agent_id=None):
        data = _validated(AgentMemoryInputSerializer, _snake(request.data))
        data = {**data, "scope": Scope.USER, "agent_id": agent_id, "source": Source.ADMIN, "confidence": 1.0}
        return created_response(create_one(self.actor, self.org, draft_from(self.actor, data)))

    @extend_schema(request=AgentMemoryPatchSerializer, responses={200: MemorySerializer, **errors(412, 422)})
    def partial_update(self, request, agent_id=None, pk=None):
        item = readable_item(self.actor, pk, agent_id=agent_id)
        data = _validated(AgentMemoryPatchSerializer, _snake(request.data))
        item = update_one(request, self.actor, item, data)
        return Response(MemorySerializer(item).data)

    @extend_schema(operation_id="v1_agents_memories_destroy_2", responses={200: AgentDeletedSerializer})
    def destroy(self, request, agent_id=None, pk=None):
        item = readable_item(self.actor, pk, agent_id=agent_id)
        services.memory_delete(actor=self.actor, item=item)
        return Response({"ok": True})

    @extend_schema(
        operation_id="v1_agents_memories_destroy",
        parameters=[OpenApiParameter("user_id", str, required=True)],
        responses={200: AgentDeletedSerializer},
    )
    def destroy_all(self, request, agent_id=None):
        user_id = _snake(request.query_params.dict()).get("user_id")
        if not user_id:
            raise ApiError(
                400, "invalid", "user_id: required (DELETE agents/{agent_id}/memories?user_id=...)."
            )
        deleted = services.memory_delete_all(
            actor=self.actor, org=self.org, user_id=user_id, agent_id=agent_id
        )
        return Response({"ok": True, "deleted": deleted})

    @extend_schema(parameters=[OpenApiParameter("user_id", str)], responses=MemoryStatsSerializer)
    def stats(self, request, agent_id=None):
        values = {**self._filter_values(request), "agent_id": agent_id}
        return Response(stats_of(MemoryFilterSet.apply_values(readable_memories(self.actor), values)))


# ---- embedding settings and re-embed jobs -------------------------------------------------------------


class EmbeddingConfigView(EngramAPIView):
    """GET/PUT/DELETE the org's embedding provider (org admins) or the caller's own override (?level=user)."""

    serializer_class = EmbeddingConfigOutputSerializer  # for the schema

    def _level(self, request, data=None, *, write: bool = False) -> tuple[str, str]:
        level = (data or {}).get("level") or request.query_params.get("level") or "org"
        if level not in ("org", "user"):
            raise ApiError(400, "invalid", "level: " + invalid_choice_message(level, ["org", "user"]))
        return level, embedding_config_subject(self.actor, level, write=write)

    def _body(self, level: str, user_id: str) -> dict:
        config = embedding_config_get(org=self.org, user_id=user_id)
        provider = provider_for(self.org, user_id)
        return {
            "level": level,
            "config": EmbeddingConfigSerializer(config).data if config else None,
            "effective": {"model": provider.model_name, "provider": type(provider).__name__},
        }

    @extend_schema(parameters=[OpenApiParameter("level", str, enum=["org", "user"])])
    def get(self, request):
        level, user_id = self._level(request)
        return Response(self._body(level, user_id))

    @extend_schema(request=EmbeddingConfigInputSerializer)
    @transaction.atomic  # the change and its audit event
    def put(self, request):
        # Who may set it first: base_url is resolved (DNS) only for someone allowed to save it.
        level, user_id = self._level(
            request, request.data if isinstance(request.data, dict) else None, write=True
        )
        data = _validated(EmbeddingConfigInputSerializer, request.data)
        job = embedding_config_set(
            org=self.org,
            user_id=user_id,
            provider=data["provider"],
            model=data["model"],
            base_url=data["base_url"],
            dimensions=data["dimensions"],
            api_key=data.get("api_key"),
        )
        audit.record(
            self.actor,
            audit.Action.CONFIG_EMBEDDING,
            subject=user_id,
            details=audit.field_names(data, level=level),
        )
        body = self._body(level, user_id)
        body["reembed_job"] = ReembedJobSerializer(job).data if job else None
        return Response(body)

    @extend_schema(
        parameters=[OpenApiParameter("level", str, enum=["org", "user"])],
        responses={200: EmbeddingConfigOutputSerializer},
    )
    @transaction.atomic
    def delete(self, request):
        level, user_id = self._level(request)
        job = embedding_config_delete(org=self.org, user_id=user_id)
        audit.record(
            self.actor,
            audit.Action.CONFIG_EMBEDDING,
            subject=user_id,
            details={"level": level, "removed": True},
        )
        body = self._body(level, user_id)
        body["reembed_job"] = ReembedJobSerializer(job).data if job else None
        return Response(body)


class ReembedJobViewSet(EngramViewSet):
    """Progress of the org's re-embed jobs."""

    serializer_class = ReembedJobSerializer
    queryset = ReembedJob.objects.none()  # for the schema only

    def get_queryset(self):
        return reembed_jobs_for(self.actor)

    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(ReembedJobSerializer(page, many=True).data)

    def retrieve(self, request, pk=None):
        job = self.get_queryset().filter(pk=pk).first()
        if job is None:
            raise Http404("No such job.")
        return Response(ReembedJobSerializer(job).data)
