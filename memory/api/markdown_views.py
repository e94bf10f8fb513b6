"""GET/PUT /api/v1/memories/markdown: a subject's memories as one editable Markdown document (seed 003)."""

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from projects.access import readable_projects, require_project, require_subject
from projects.api.base import EngramAPIView, StrictSerializer
from projects.api.errors import ApiError
from projects.api.schema import errors

from ..markdown import MarkdownError, Subject, document_apply, document_get
from .schemas import MarkdownAppliedDocumentSerializer, MarkdownDocumentSerializer


class SubjectQuerySerializer(serializers.Serializer):
    user_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    skill = serializers.RegexField(r"^[\w.:-]{1,100}$", required=False, default="")
    project = serializers.IntegerField(required=False, allow_null=True, default=None)


class DocumentInputSerializer(StrictSerializer):
    document = serializers.CharField(max_length=2_000_000, allow_blank=True, trim_whitespace=False)
    base_version = serializers.CharField(max_length=100)


_PARAMS = [
    OpenApiParameter("user_id", str, description="The subject (defaults to yourself for accounts)."),
    OpenApiParameter("skill", str, description="Only this skill's memories (skills/<skill>.md)."),
    OpenApiParameter("project", int, description="A project's shared memories instead of a user's."),
]


class MarkdownDocumentView(EngramAPIView):
    """One document per subject (user, or project) and optional skill; PUT applies an edited copy."""

    def _subject(self, request, *, write: bool) -> Subject:
        query = SubjectQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        if data["project"] is not None:
            project = readable_projects(self.actor).filter(pk=data["project"]).first()
            require_project(self.actor, project, "create_memories" if write else "read_memories")
            return Subject(org=self.org, project=project, skill=data["skill"])
        user_id = data["user_id"] or (self.actor.user_id or "")
        if not user_id:
            raise ApiError(400, "invalid", "Give user_id (or project) to say whose memories to render.")
        require_subject(self.actor, user_id, write=write)
        return Subject(org=self.org, user_id=user_id, skill=data["skill"])

    @extend_schema(parameters=_PARAMS, responses=MarkdownDocumentSerializer)
    def get(self, request):
        return Response(document_get(actor=self.actor, subject=self._subject(request, write=False)))

    @extend_schema(
        parameters=_PARAMS,
        request=DocumentInputSerializer,
        responses={
            200: MarkdownAppliedDocumentSerializer,
            **errors(
                409,
                422,
                e409="The memories changed since base_version; details: current_version and what changed.",
                e422="A line is refused (gate, unknown memory...); details.errors: one per line.",
            ),
        },
    )
    def put(self, request):
        subject = self._subject(request, write=True)
        data = DocumentInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            with transaction.atomic():
                body = document_apply(
                    actor=self.actor,
                    subject=subject,
                    document=data.validated_data["document"],
                    base_version=data.validated_data["base_version"],
                )
        except MarkdownError as exc:
            raise ApiError(exc.status, exc.code, exc.message, exc.details) from exc
        return Response(body)
