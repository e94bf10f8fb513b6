"""The extraction queue (seed 003) and the org's chat model configuration.

Who sees which job is projects.access.extraction_job_read_q's rule (memory.selectors.extraction_jobs_for).
"""

from django.db import transaction
from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from audit import services as audit
from memory.extraction.services import DeferredError, extraction_job_accept_deferred, extraction_job_retry
from memory.llm import llm_config_delete, llm_config_get, llm_config_set, llm_for
from memory.models import ExtractionJob, JobStatus
from memory.selectors import extraction_jobs_for
from projects.access import require_change_extraction_job, require_org_admin
from projects.api.base import EngramAPIView, OutboundURLField, StrictSerializer
from projects.api.choices import invalid_choice_message
from projects.api.errors import ApiError
from projects.api.pagination import CreatedCursorPagination
from projects.api.schema import errors

from .schemas import LLMConfigOutputSerializer


class ExtractionJobSerializer(serializers.ModelSerializer):
    project = serializers.SerializerMethodField()

    class Meta:
        model = ExtractionJob
        fields = [
            "id",
            "user_id",
            "project",
            "session_id",
            "agent_id",
            "status",
            "attempts",
            "error",
            "method",
            "result",
            "messages",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_project(self, obj) -> int | None:
        return obj.project_id  # the project's id, as in every answer


class ExtractionJobListView(EngramAPIView):
    pagination_class = CreatedCursorPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=JobStatus.values),
            OpenApiParameter("user_id", str),
            OpenApiParameter("session_id", str),
        ],
        responses=ExtractionJobSerializer(many=True),
    )
    def get(self, request):
        qs = extraction_jobs_for(self.actor)
        status = request.query_params.get("status")
        if status:
            if status not in JobStatus.values:
                raise ApiError(400, "invalid", "status: " + invalid_choice_message(status, JobStatus.values))
            qs = qs.filter(status=status)
        for name in ("user_id", "session_id"):
            if request.query_params.get(name):
                qs = qs.filter(**{name: request.query_params[name]})
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(ExtractionJobSerializer(page, many=True).data)


def _job(actor, pk) -> ExtractionJob:
    job = extraction_jobs_for(actor).filter(pk=pk).first()
    if job is None:
        raise Http404("No such extraction job.")
    return job


class ExtractionJobDetailView(EngramAPIView):
    @extend_schema(responses=ExtractionJobSerializer)
    def get(self, request, pk):
        return Response(ExtractionJobSerializer(_job(self.actor, pk)).data)


class ExtractionJobRetryView(EngramAPIView):
    @extend_schema(request=None, responses={202: ExtractionJobSerializer, **errors(409)})
    def post(self, request, pk):
        """A failed job goes back to the queue."""
        job = _job(self.actor, pk)
        require_change_extraction_job(self.actor, job)
        job, retried = extraction_job_retry(job=job)
        if not retried:
            raise ApiError(409, "conflict", f"Only failed jobs can be retried (this one is {job.status}).")
        return Response(ExtractionJobSerializer(job).data, status=202)


class DeferredAcceptInput(StrictSerializer):
    index = serializers.IntegerField(min_value=0, max_value=10_000)


class DeferredAcceptedSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="added | merged | superseded | rejected")
    id = serializers.IntegerField(allow_null=True, help_text="the memory written or merged into")
    by = serializers.CharField()
    reason = serializers.CharField(required=False)


class DeferredAcceptOutput(serializers.Serializer):
    accepted = DeferredAcceptedSerializer()
    job = ExtractionJobSerializer()


class ExtractionJobDeferredAcceptView(EngramAPIView):
    @extend_schema(
        request=DeferredAcceptInput, responses={200: DeferredAcceptOutput, **errors(400, 404, 409)}
    )
    def post(self, request, pk):
        """Accept a candidate the session's cap deferred: it is written as if the user had asked for it."""
        job = _job(self.actor, pk)
        require_change_extraction_job(self.actor, job)
        data = DeferredAcceptInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job, accepted = extraction_job_accept_deferred(
                job=job, index=data.validated_data["index"], actor=self.actor
            )
        except DeferredError as exc:
            if exc.status == 404:
                raise ApiError(404, "not_found", _("No such deferred candidate.")) from exc
            if exc.withdrawn:
                raise ApiError(
                    409, "conflict", _("This candidate was taken back later in the conversation.")
                ) from exc
            raise ApiError(409, "conflict", _("This candidate was already accepted.")) from exc
        return Response({"accepted": accepted, "job": ExtractionJobSerializer(job).data})


class LLMConfigInput(StrictSerializer):
    base_url = OutboundURLField(max_length=500)
    model = serializers.CharField(max_length=200)
    # Write-only: stored encrypted, never returned. Omit to keep the stored key; "" clears it.
    api_key = serializers.CharField(max_length=500, required=False, allow_blank=True, write_only=True)


class LLMConfigView(EngramAPIView):
    """GET/PUT/DELETE the org's OpenAI-compatible chat model (org owners and admins)."""

    def _body(self) -> dict:
        config = llm_config_get(org=self.org)
        client = llm_for(self.org)
        return {
            "config": None
            if config is None
            else {
                "base_url": config.base_url,
                "model": config.model,
                "has_api_key": bool(config.api_key_encrypted),
                "updated_at": config.updated_at,
            },
            "effective": None
            if client is None
            else {"model": client.model, "source": "org" if config else "server"},
        }

    @extend_schema(responses=LLMConfigOutputSerializer)
    def get(self, request):
        require_org_admin(self.actor)
        return Response(self._body())

    @extend_schema(request=LLMConfigInput, responses=LLMConfigOutputSerializer)
    @transaction.atomic  # the change and its audit event
    def put(self, request):
        require_org_admin(self.actor)
        data = LLMConfigInput(data=request.data)
        data.is_valid(raise_exception=True)
        llm_config_set(org=self.org, **data.validated_data)
        audit.record(self.actor, audit.Action.CONFIG_LLM, details=audit.field_names(data.validated_data))
        return Response(self._body())

    @extend_schema(responses={204: None})
    @transaction.atomic
    def delete(self, request):
        require_org_admin(self.actor)
        llm_config_delete(org=self.org)
        audit.record(self.actor, audit.Action.CONFIG_LLM, details={"removed": True})
        return Response(status=204)
