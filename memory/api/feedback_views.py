"""GET/POST /memories/{id}/feedback: useful / wrong / outdated from the people a memory is about."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from core.times import rfc3339
from projects.api.base import EngramAPIView, StrictSerializer
from projects.api.errors import ApiError
from projects.api.idempotency import idempotent
from projects.api.pagination import CreatedCursorPagination
from projects.api.schema import errors

from ..feedback import FeedbackRefused, feedback_for_memory, feedback_record
from ..models import FeedbackValue, MemoryFeedback
from ..selectors import readable_memories


class FeedbackInputSerializer(StrictSerializer):
    value = serializers.ChoiceField(choices=FeedbackValue.choices, help_text="useful, wrong or outdated.")
    user_id = serializers.CharField(
        required=False, help_text="Whose feedback (an API key must name them; an account gives its own)."
    )
    injection = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="The injection log entry (a context or search answer's injection_id) that handed the memory over.",
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=1000)


class FeedbackSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    memory = serializers.IntegerField(help_text="The memory's id.")
    user_id = serializers.CharField(help_text="Whose feedback it is (the person the memory was given for).")
    injection = serializers.IntegerField(allow_null=True)
    value = serializers.ChoiceField(choices=FeedbackValue.choices)
    note = serializers.CharField(allow_blank=True)
    actor = serializers.CharField(help_text="Who recorded it: account:<name> or key:<prefix>.")
    memory_feedback = serializers.FloatField(
        help_text="The memory's feedback signal after this, in (-1, 1) (a small ranking adjustment)."
    )
    created_at = serializers.DateTimeField()


def feedback_dict(row: MemoryFeedback, signal: float) -> dict:
    return {
        "id": row.pk,
        "memory": row.memory_id,
        "user_id": row.subject,
        "injection": row.injection_id,
        "value": row.value,
        "note": row.note,
        "actor": row.actor,
        "memory_feedback": round(signal, 4),
        "created_at": rfc3339(row.created_at),
    }


FEEDBACK_EXAMPLE = [
    OpenApiExample(
        "Outdated, on a context hand-over",
        value={"value": "outdated", "user_id": "alice", "injection": 812, "note": "moved to Shenzhen"},
        request_only=True,
    )
]


def _memory(actor, pk: int):
    item = readable_memories(actor).filter(pk=pk).defer("embedding", "search_tokens").first()
    if item is None:
        raise Http404("No such memory.")
    return item


class MemoryFeedbackView(EngramAPIView):
    """Feedback on a memory from the people it is about; it nudges the memory's rank (memory.feedback)."""

    pagination_class = CreatedCursorPagination

    @extend_schema(responses={200: FeedbackSerializer(many=True)})
    def get(self, request, pk: int):
        """The feedback on a memory: an account's own, an API key's every person's; newest first."""
        item = _memory(self.actor, pk)
        paginator = self.pagination_class()
        rows = paginator.paginate_queryset(
            feedback_for_memory(actor=self.actor, item=item), request, view=self
        )
        return paginator.get_paginated_response([feedback_dict(r, item.feedback) for r in rows])

    @extend_schema(
        request=FeedbackInputSerializer,
        responses={201: FeedbackSerializer, **errors()},
        examples=FEEDBACK_EXAMPLE,
    )
    @idempotent
    def post(self, request, pk: int):
        """Say a memory an agent was given is useful, wrong or outdated."""
        item = _memory(self.actor, pk)
        data = FeedbackInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        data = data.validated_data
        try:
            row = feedback_record(
                actor=self.actor,
                item=item,
                value=data["value"],
                user_id=data.get("user_id"),
                injection_id=data.get("injection"),
                note=data.get("note", ""),
            )
        except FeedbackRefused as exc:
            raise ApiError(400, "invalid", str(exc)) from None
        item.refresh_from_db(fields=["feedback"])
        return Response(feedback_dict(row, item.feedback), status=status.HTTP_201_CREATED)
