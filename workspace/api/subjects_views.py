"""A subject's data as a whole: export, import, forget (/api/v1/users/{user_id}...)."""

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from audit import services as audit
from checkpoints.selectors import session_find
from core.times import rfc3339
from memory.pause import pause_clear, pause_set, pause_state
from projects.access import require_forget_subject, require_subject
from projects.api.base import EngramAPIView, StrictSerializer
from projects.api.errors import ApiError
from projects.api.idempotency import idempotent
from projects.api.schema import errors

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


class PauseInputSerializer(StrictSerializer):
    session_id = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=255,
        help_text='Pause only this conversation ("don\'t remember this"); omitted: the whole subject.',
    )


class PausedSessionSerializer(serializers.Serializer):
    session_id = serializers.CharField()
    paused_at = serializers.DateTimeField()


class PauseStateSerializer(serializers.Serializer):
    """Whether memory is paused for a subject, and for which of its conversations."""

    user_id = serializers.CharField()
    paused = serializers.BooleanField(help_text="Paused for the whole subject: nothing about them is stored.")
    paused_at = serializers.DateTimeField(allow_null=True)
    sessions = PausedSessionSerializer(many=True, help_text="Conversations with memory off.")


def _pause_body(state: dict) -> dict:
    return {
        **state,
        "paused_at": rfc3339(state["paused_at"]) if state["paused_at"] else None,
        "sessions": [{**s, "paused_at": rfc3339(s["paused_at"])} for s in state["sessions"]],
    }


def _pause_session_id(actor, org, user_id: str, session_id: str) -> str:
    """A session to pause must be the subject's (it may not exist yet: a conversation about to start)."""
    session_id = (session_id or "").strip()
    session = session_find(actor, session_id) if session_id else None  # 404: someone else's, unreadable
    if session is not None and session.user_id != user_id:
        raise ApiError(409, "conflict", f"session_id: {session_id} is another user's conversation.")
    return session_id


class MemoryPauseView(EngramAPIView):
    """Pause memory for a subject, or for one of its conversations: while paused, every way of storing a
    memory about them answers 200 with "status": "paused" and stores nothing; search and context work."""

    @extend_schema(responses=PauseStateSerializer)
    def get(self, request, user_id: str):
        """Whether memory is paused for the subject and which of its conversations have it off."""
        return Response(_pause_body(pause_state(actor=self.actor, org=self.org, user_id=user_id)))

    @extend_schema(request=PauseInputSerializer, responses={200: PauseStateSerializer, **errors(409)})
    def put(self, request, user_id: str):
        """Pause memory for the subject (no body), or for one conversation (`session_id`)."""
        data = PauseInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        session_id = _pause_session_id(
            self.actor, self.org, user_id, data.validated_data.get("session_id", "")
        )
        pause_set(actor=self.actor, org=self.org, user_id=user_id, session_id=session_id)
        return Response(_pause_body(pause_state(actor=self.actor, org=self.org, user_id=user_id)))

    @extend_schema(
        parameters=[
            OpenApiParameter("session_id", str, description="Turn memory back on for this conversation only.")
        ],
        responses={200: PauseStateSerializer},
    )
    def delete(self, request, user_id: str):
        """Turn memory back on for the subject, or (`?session_id=`) for one conversation."""
        session_id = request.query_params.get("session_id", "").strip()
        pause_clear(actor=self.actor, org=self.org, user_id=user_id, session_id=session_id)
        return Response(_pause_body(pause_state(actor=self.actor, org=self.org, user_id=user_id)))
