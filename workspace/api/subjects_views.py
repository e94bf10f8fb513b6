"""A subject's data as a whole: export, import, forget (/api/v1/users/{user_id}...)."""

from django.db import transaction
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from audit import services as audit
from projects.access import require_forget_subject, require_subject
from projects.api.base import EngramAPIView
from projects.api.errors import ApiError
from projects.api.idempotency import idempotent

from ..subjects import ImportFormatError, subject_export, subject_forget, subject_import
from .schemas import ImportReportSerializer, SubjectExportSerializer


class SubjectView(EngramAPIView):
    """DELETE forgets the subject: every row about them in the org that the caller may erase (a key restricted
    to some projects: what it reaches), one transaction; counts per kind deleted and left."""

    @extend_schema(
        responses={
            200: inline_serializer(
                "SubjectForgotten",
                {
                    "user_id": serializers.CharField(),
                    "deleted": serializers.DictField(
                        child=serializers.IntegerField(), help_text="Rows per kind."
                    ),
                    "left": serializers.DictField(
                        child=serializers.IntegerField(),
                        help_text="Rows per kind the caller may not erase (a key restricted to some projects).",
                    ),
                    "total": serializers.IntegerField(),
                },
            )
        }
    )
    def delete(self, request, user_id: str):
        require_forget_subject(self.actor, user_id)
        with transaction.atomic():
            result = subject_forget(actor=self.actor, org=self.org, user_id=user_id)
            audit.subject_forgotten(self.actor, user_id, details={"deleted": result["deleted"]})
        counts = result["deleted"]
        return Response({"user_id": user_id, **result, "total": sum(counts.values())})


class SubjectExportView(EngramAPIView):
    """What the caller may read about the subject in the org, as JSON (the subject or an org API key)."""

    @extend_schema(responses=SubjectExportSerializer)
    def get(self, request, user_id: str):
        require_subject(self.actor, user_id)
        with transaction.atomic():
            data = subject_export(actor=self.actor, org=self.org, user_id=user_id)
            audit.record(self.actor, audit.Action.SUBJECT_EXPORT, subject=user_id, details=audit.sizes(data))
        response = Response(data)
        response["Content-Disposition"] = f'attachment; filename="engram-{self.org.slug}-export.json"'
        return response


class SubjectImportView(EngramAPIView):
    """Load an export for this subject: ids remapped, memories through the gate, a report back."""

    @extend_schema(request=SubjectExportSerializer, responses={201: ImportReportSerializer})
    @idempotent
    def post(self, request, user_id: str):
        require_subject(self.actor, user_id, write=True)
        try:
            with transaction.atomic(), audit.quiet():  # one event with counts, not one per memory
                report = subject_import(actor=self.actor, org=self.org, user_id=user_id, data=request.data)
                audit.record(
                    self.actor,
                    audit.Action.SUBJECT_IMPORT,
                    subject=user_id,
                    details={"taken": report["taken"], "refused": len(report["refused"])},
                )
        except ImportFormatError as exc:
            raise ApiError(400, "invalid_export", f"Cannot import this file: {exc}.") from exc
        return Response(report, status=201)
