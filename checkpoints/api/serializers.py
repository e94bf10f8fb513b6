"""Input and output shapes of the sessions and checkpoints API."""

from rest_framework import serializers

from core.roles import ROLES
from memory.models import JobStatus
from memory.pause import PAUSE_LEVELS
from projects.api.base import StrictSerializer
from projects.api.choices import invalid_choice_message

from ..models import Checkpoint, CheckpointArchive, Message, Session
from ..services import archive_payload


class MessageInSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=ROLES)
    # An assistant turn that only calls tools has no text.
    content = serializers.CharField(max_length=100_000, trim_whitespace=False, allow_blank=True)
    message_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")


class SubjectFields(StrictSerializer):
    user_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    project = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")  # id or slug
    agent_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")


class MessagesAppendSerializer(SubjectFields):
    messages = serializers.ListField(child=MessageInSerializer(), min_length=1, max_length=200)
    extract = serializers.BooleanField(default=True)


class CheckpointSaveSerializer(SubjectFields):
    messages = serializers.ListField(
        child=serializers.JSONField(), required=False, default=list, max_length=10_000
    )
    agent_state = serializers.DictField(required=False, default=dict)
    tool_states = serializers.DictField(required=False, default=dict)
    pending_tool_calls = serializers.ListField(child=serializers.JSONField(), required=False, default=list)
    parent = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    metadata = serializers.DictField(required=False, default=dict)

    def validate_messages(self, value):
        """Messages are free-form, but a message that names a role names a valid one (core.roles)."""
        for index, message in enumerate(value):
            if isinstance(message, dict) and "role" in message and message["role"] not in ROLES:
                raise serializers.ValidationError(
                    f"[{index}].role: {invalid_choice_message(message['role'], ROLES)}"
                )
        return value


class ToolCallDecisionSerializer(StrictSerializer):
    tool_call_ids = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        allow_null=True,
        default=None,
        max_length=500,
    )
    comment = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class MessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Message
        fields = ["id", "role", "content", "message_id", "created_at"]


class SessionSerializer(serializers.ModelSerializer):
    project = serializers.SerializerMethodField()
    message_count = serializers.SerializerMethodField()

    class Meta:
        model = Session
        fields = [
            "session_id",
            "user_id",
            "project",
            "agent_id",
            "status",
            "summary",
            "summarized_count",
            "message_count",
            "created_at",
            "last_activity_at",
        ]

    def get_project(self, obj) -> int | None:
        return obj.project_id  # the project's id, as in every answer

    def get_message_count(self, obj) -> int:
        return obj.messages.count()


def checkpoint_data(row) -> dict:
    """A live or archived checkpoint in one shape (archived ones are decompressed)."""
    if isinstance(row, CheckpointArchive):
        payload = archive_payload(row)
        return {
            "id": row.original_id,
            "session_id": row.session.session_id,
            "user_id": row.user_id,
            "parent": row.parent_id_ref,
            **{
                name: payload.get(name)
                for name in ("messages", "agent_state", "tool_states", "pending_tool_calls", "metadata")
            },
            "created_at": row.created_at,
            "archived": True,
            "archived_at": row.archived_at,
        }
    assert isinstance(row, Checkpoint)
    return {
        "id": row.pk,
        "session_id": row.session.session_id,
        "user_id": row.user_id,
        "parent": row.parent_ref if row.parent_ref is not None else row.parent_id,
        "messages": row.messages,
        "agent_state": row.agent_state,
        "tool_states": row.tool_states,
        "pending_tool_calls": row.pending_tool_calls,
        "metadata": row.metadata,
        "created_at": row.created_at,
        "archived": False,
        "archived_at": None,
    }


class CheckpointOutSerializer(serializers.Serializer):
    """For the schema; responses are built by checkpoint_data()."""

    id = serializers.IntegerField()
    session_id = serializers.CharField()
    user_id = serializers.CharField()
    parent = serializers.IntegerField(allow_null=True)
    messages = serializers.ListField(child=serializers.JSONField())
    agent_state = serializers.DictField()
    tool_states = serializers.DictField()
    pending_tool_calls = serializers.ListField(child=serializers.JSONField())
    metadata = serializers.DictField()
    created_at = serializers.DateTimeField()
    archived = serializers.BooleanField()
    archived_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, instance):
        return super().to_representation(checkpoint_data(instance))


class JobRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=JobStatus.choices)


class MessagesAppendedSerializer(serializers.Serializer):
    """POST sessions/{session_id}/messages: the session, the messages stored, how many were repeats."""

    session = SessionSerializer()
    messages = MessageSerializer(many=True)
    duplicates = serializers.IntegerField(help_text="Messages not stored again (same message_id).")
    extraction_job = JobRefSerializer(allow_null=True, help_text="The extraction job queued, if any.")
    memory_paused = serializers.ChoiceField(
        choices=PAUSE_LEVELS,
        allow_null=True,
        help_text="Memory is paused for the subject or for this session: the messages are kept, nothing is "
        "extracted from them (no job).",
    )


class SessionDetailSerializer(SessionSerializer):
    """GET sessions/{session_id}: the session with its most recent messages (oldest first)."""

    messages = MessageSerializer(many=True, read_only=True)

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "messages"]
