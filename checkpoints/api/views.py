"""Sessions (short-term memory) and checkpoints (episodic memory). Views parse, call one service or
selector, and serialize; access is decided by projects.access through checkpoints.selectors."""

from contextlib import contextmanager

from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from audit import services as audit
from memory.pause import paused
from projects.access import project_by_ref, require_change_session, require_subject
from projects.api.base import EngramAPIView
from projects.api.choices import invalid_choice_message
from projects.api.errors import ApiError
from projects.api.idempotency import idempotent
from projects.api.pagination import CreatedCursorPagination
from projects.api.schema import errors

from .. import selectors, services
from ..models import Checkpoint, CheckpointArchive, Message
from .serializers import (
    CheckpointOutSerializer,
    CheckpointSaveSerializer,
    MessagesAppendedSerializer,
    MessagesAppendSerializer,
    MessageSerializer,
    SessionDetailSerializer,
    SessionSerializer,
    ToolCallDecisionSerializer,
    checkpoint_data,
)


@contextmanager
def conflicts():
    try:
        yield
    except services.Conflict as exc:
        raise ApiError(409, "conflict", str(exc)) from exc


SESSION_STATUSES = ["active", "expired"]


def _subject(actor, user_id: str) -> str:
    """The subject written for: an API key names it, an account writes for itself."""
    if actor.is_key and not user_id:
        raise ApiError(400, "invalid", "user_id: required when an API key writes a session.")
    user_id = user_id or actor.user_id
    require_subject(actor, user_id, write=True)
    return user_id


def _session_id(value: str) -> str:
    if not value or len(value) > 255:
        raise ApiError(400, "invalid", "session_id: 1 to 255 characters.")
    return value


class SessionListView(EngramAPIView):
    pagination_class = CreatedCursorPagination

    @extend_schema(
        parameters=[OpenApiParameter("user_id", str), OpenApiParameter("status", str)],
        responses=SessionSerializer(many=True),
    )
    def get(self, request):
        status_ = request.query_params.get("status")
        if status_ and status_ not in SESSION_STATUSES:
            raise ApiError(400, "invalid", "status: " + invalid_choice_message(status_, SESSION_STATUSES))
        qs = selectors.sessions_for(self.actor, user_id=request.query_params.get("user_id"), status=status_)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(SessionSerializer(page, many=True).data)


class SessionDetailView(EngramAPIView):
    @extend_schema(parameters=[OpenApiParameter("limit", int)], responses=SessionDetailSerializer)
    def get(self, request, session_id):
        """The rolling summary and the most recent messages (oldest first)."""
        session = selectors.session_get(self.actor, session_id)
        try:
            limit = min(max(int(request.query_params.get("limit", 50)), 1), 500)
        except ValueError:
            raise ApiError(400, "invalid", "limit: a number from 1 to 500.") from None
        recent = list(Message.objects.filter(session=session).order_by("-id")[:limit])[::-1]
        return Response(
            {**SessionSerializer(session).data, "messages": MessageSerializer(recent, many=True).data}
        )

    @extend_schema(responses={204: None})
    def delete(self, request, session_id):
        session = selectors.session_get(self.actor, session_id)
        require_change_session(self.actor, session)
        with transaction.atomic():
            audit.record(self.actor, audit.Action.SESSION_DELETE, target=session, subject=session.user_id)
            services.session_delete(session=session)
        return Response(status=status.HTTP_204_NO_CONTENT)


MESSAGES_EXAMPLES = [
    OpenApiExample(
        "Two turns of a conversation",
        value={
            "user_id": "alice",
            "agent_id": "support-bot",
            "messages": [
                {
                    "role": "human",
                    "content": "I moved to Berlin last year and I love hiking.",
                    "message_id": "m-1",
                },
                {"role": "ai", "content": "Noted: Berlin, hiking.", "message_id": "m-2"},
            ],
        },
        request_only=True,
    ),
    OpenApiExample(
        "Stored, extraction queued",
        value={
            "session": {
                "session_id": "chat-7",
                "user_id": "alice",
                "project": None,
                "agent_id": "support-bot",
                "status": "active",
                "summary": "",
                "summarized_count": 0,
                "message_count": 2,
                "created_at": "2026-03-01T09:30:00Z",
                "last_activity_at": "2026-03-01T09:30:00Z",
            },
            "messages": [
                {
                    "id": 101,
                    "role": "human",
                    "content": "I moved to Berlin last year and I love hiking.",
                    "message_id": "m-1",
                    "created_at": "2026-03-01T09:30:00Z",
                },
                {
                    "id": 102,
                    "role": "ai",
                    "content": "Noted: Berlin, hiking.",
                    "message_id": "m-2",
                    "created_at": "2026-03-01T09:30:00Z",
                },
            ],
            "duplicates": 0,
            "extraction_job": {"id": 12, "status": "pending"},
            "memory_paused": None,
        },
        response_only=True,
        status_codes=["201"],
    ),
]


class SessionMessagesView(EngramAPIView):
    @extend_schema(
        request=MessagesAppendSerializer,
        responses={201: MessagesAppendedSerializer, **errors(409)},
        examples=MESSAGES_EXAMPLES,
    )
    @idempotent
    def post(self, request, session_id):
        """Append one or more messages; with extract (default) an extraction job is queued."""
        data = MessagesAppendSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        data = data.validated_data
        user_id = _subject(self.actor, data["user_id"])
        # 404 for someone else's session (a key's clash of subjects is the service's 409).
        selectors.session_find(self.actor, _session_id(session_id))
        with conflicts():
            session, created, job = services.messages_append(
                org=self.org,
                session_id=session_id,
                user_id=user_id,
                messages=data["messages"],
                project=project_by_ref(self.actor, data["project"]),
                agent_id=data["agent_id"],
                extract=data["extract"],
                created_by_key=self.actor.api_key,
            )
        body = {
            "session": SessionSerializer(session).data,
            "messages": MessageSerializer(created, many=True).data,
            "duplicates": len(data["messages"]) - len(created),
            "extraction_job": {"id": job.pk, "status": job.status} if job else None,
            "memory_paused": paused(self.org, user_id, session.session_id),
        }
        return Response(body, status=status.HTTP_201_CREATED)


def _checkpoint_page(view, request, session_id: str):
    """A page of the session's checkpoints, live or archived (view.model), newest first."""
    session = selectors.session_get(view.actor, session_id)
    qs = view.model.objects.filter(session=session).select_related("session")
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(qs, request, view=view)
    return paginator.get_paginated_response([checkpoint_data(row) for row in page])


class SessionCheckpointsView(EngramAPIView):
    pagination_class = CreatedCursorPagination

    model = Checkpoint

    @extend_schema(responses=CheckpointOutSerializer(many=True))
    def get(self, request, session_id):
        return _checkpoint_page(self, request, session_id)

    @extend_schema(request=CheckpointSaveSerializer, responses={201: CheckpointOutSerializer, **errors(409)})
    @idempotent
    def put(self, request, session_id):
        """Save a checkpoint (messages, agent_state, tool_states, pending_tool_calls, parent, metadata)."""
        data = CheckpointSaveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        data = data.validated_data
        existing = selectors.session_find(self.actor, _session_id(session_id))
        user_id = data["user_id"] or (existing.user_id if existing is not None and self.actor.is_key else "")
        user_id = _subject(self.actor, user_id)
        with conflicts():
            checkpoint = services.checkpoint_save(
                org=self.org,
                session_id=session_id,
                user_id=user_id,
                project=project_by_ref(self.actor, data["project"]),
                agent_id=data["agent_id"],
                messages=data["messages"],
                agent_state=data["agent_state"],
                tool_states=data["tool_states"],
                pending_tool_calls=data["pending_tool_calls"],
                metadata=data["metadata"],
                parent_id=data["parent"],
            )
        return Response(checkpoint_data(checkpoint), status=status.HTTP_201_CREATED)


class SessionArchivedCheckpointsView(EngramAPIView):
    pagination_class = CreatedCursorPagination

    model = CheckpointArchive

    @extend_schema(responses=CheckpointOutSerializer(many=True))
    def get(self, request, session_id):
        return _checkpoint_page(self, request, session_id)


class LatestCheckpointView(EngramAPIView):
    @extend_schema(responses=CheckpointOutSerializer)
    def get(self, request, session_id):
        """Resume: the session's newest checkpoint."""
        session = selectors.session_get(self.actor, session_id)
        latest = selectors.checkpoint_latest(session)
        if latest is None:
            raise Http404("This session has no checkpoint.")
        return Response(checkpoint_data(latest))


class CheckpointDetailView(EngramAPIView):
    @extend_schema(responses=CheckpointOutSerializer)
    def get(self, request, pk):
        return Response(checkpoint_data(selectors.checkpoint_get(self.actor, pk)))


class CheckpointDecisionView(EngramAPIView):
    decision = "approve"

    @extend_schema(
        request=ToolCallDecisionSerializer, responses={201: CheckpointOutSerializer, **errors(409)}
    )
    @idempotent
    def post(self, request, pk):
        """Approve or reject pending tool calls (all of them when tool_call_ids is omitted)."""
        data = ToolCallDecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        row = selectors.checkpoint_get(self.actor, pk)
        if isinstance(row, CheckpointArchive):
            raise ApiError(409, "conflict", "This checkpoint is archived; restore it first.")
        require_change_session(self.actor, row.session)
        with conflicts():
            new = services.checkpoint_decide(
                checkpoint=row,
                decision=self.decision,
                tool_call_ids=data.validated_data["tool_call_ids"],
                comment=data.validated_data["comment"],
                decided_by=self.actor.label,
            )
        return Response(checkpoint_data(new), status=status.HTTP_201_CREATED)


class CheckpointRestoreView(EngramAPIView):
    @extend_schema(request=None, responses={201: CheckpointOutSerializer, **errors(409)})
    @idempotent
    def post(self, request, pk):
        """Resume from an archived checkpoint: it becomes the session's newest checkpoint."""
        row = selectors.checkpoint_get(self.actor, pk)
        if not isinstance(row, CheckpointArchive):
            raise ApiError(409, "conflict", "This checkpoint is not archived.")
        require_change_session(self.actor, row.session)
        return Response(
            checkpoint_data(services.checkpoint_restore(archive=row)), status=status.HTTP_201_CREATED
        )
