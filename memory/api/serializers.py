"""Input and output shapes of the memory API. No business logic: services decide."""

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from projects.api.base import OutboundURLField, StrictSerializer

from ..models import (
    EmbeddingConfig,
    MemoryItem,
    MemoryRevision,
    MemoryType,
    ReembedJob,
    Scope,
    Source,
    Status,
)
from ..models import Visibility as Vis
from ..pause import PAUSE_LEVELS, PAUSED_STATUS
from ..revisions import snapshot_out


class TagsField(serializers.ListField):
    child = serializers.CharField(max_length=100)
    max_length = 50


class MemoryInputSerializer(StrictSerializer):
    """One memory to add (POST memories and each item of POST memories/batch)."""

    # The gate answers too_short / too_long with 422, so the field itself only requires a string.
    content = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, default=MemoryType.FACT)
    scope = serializers.ChoiceField(choices=Scope.choices, default=Scope.USER)
    user_id = serializers.CharField(max_length=255, required=False, allow_blank=True)
    project = serializers.CharField(max_length=64, required=False, allow_blank=True)  # id or slug
    session_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    agent_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    skill = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    # Absent: agent for an API key, user for a signed-in person (memory.drafts.default_source).
    source = serializers.ChoiceField(choices=Source.choices, required=False)
    source_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    source_message_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0, default=1.0)
    visibility = serializers.ChoiceField(choices=Vis.choices, default=Vis.MEMBERS)
    pinned = serializers.BooleanField(default=False)
    tags = TagsField(required=False, default=list)
    metadata = serializers.DictField(required=False, default=dict)
    occurred_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    valid_from = serializers.DateTimeField(required=False, allow_null=True, default=None)
    valid_until = serializers.DateTimeField(required=False, allow_null=True, default=None)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


@extend_schema_field(MemoryInputSerializer)
class BatchItemField(serializers.JSONField):
    """One memory of a batch, checked by the view item by item: a bad item is rejected alone."""


class BatchInputSerializer(StrictSerializer):
    memories = serializers.ListField(child=BatchItemField(), min_length=1, max_length=1000)
    infer = serializers.BooleanField(default=True)
    dedup = serializers.BooleanField(required=False, allow_null=True, default=None)


class MemoryPatchSerializer(StrictSerializer):
    content = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=100_000, required=False
    )
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    confidence = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    visibility = serializers.ChoiceField(choices=Vis.choices, required=False)
    status = serializers.ChoiceField(choices=[Status.ACTIVE, Status.ARCHIVED], required=False)
    pinned = serializers.BooleanField(required=False)
    tags = TagsField(required=False)
    metadata = serializers.DictField(required=False)
    skill = serializers.CharField(max_length=100, required=False, allow_blank=True)
    occurred_at = serializers.DateTimeField(required=False, allow_null=True)
    valid_from = serializers.DateTimeField(required=False, allow_null=True)
    valid_until = serializers.DateTimeField(required=False, allow_null=True)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    version = serializers.IntegerField(min_value=1, required=False)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True)


class AgentMemoryInputSerializer(StrictSerializer):
    """Seed 004's create body (snake_case; camelCase names are accepted too)."""

    user_id = serializers.CharField(max_length=255, required=False, allow_blank=True)
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, default=MemoryType.FACT)
    content = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=100_000)
    tags = TagsField(required=False, default=list)
    pinned = serializers.BooleanField(default=False)
    source_message_id = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")


class AgentMemoryPatchSerializer(StrictSerializer):
    content = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=100_000, required=False
    )
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    tags = TagsField(required=False)
    pinned = serializers.BooleanField(required=False)
    version = serializers.IntegerField(min_value=1, required=False)


class RestoreSerializer(StrictSerializer):
    revision = serializers.IntegerField(min_value=0)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class SplitSerializer(StrictSerializer):
    """POST memories/{id}/split: which merge revision to turn back into its own memory."""

    revision = serializers.IntegerField(
        min_value=1, max_value=2_147_483_647, help_text="A merge revision's number."
    )
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class MemorySerializer(serializers.ModelSerializer):
    has_embedding = serializers.SerializerMethodField()
    tags = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = MemoryItem
        fields = [
            "id",
            "content",
            "memory_type",
            "scope",
            "user_id",
            "project",
            "session_id",
            "agent_id",
            "skill",
            "source",
            "source_id",
            "source_message_id",
            "confidence",
            "visibility",
            "status",
            "superseded_by",
            "pinned",
            "tags",
            "metadata",
            "embedding_model",
            "has_embedding",
            "access_count",
            "confirmations",
            "last_accessed_at",
            "occurred_at",
            "valid_from",
            "valid_until",
            "expires_at",
            "version",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_has_embedding(self, obj) -> bool:
        if hasattr(obj, "embedded"):
            return bool(obj.embedded)
        if "embedding" in obj.__dict__:
            return obj.embedding is not None
        return bool(obj.embedding_model)  # vector and model are always written together


class RevisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = MemoryRevision
        fields = [
            "number",
            "action",
            "actor",
            "reason",
            "before",
            "after",
            "incoming",
            "split_into",
            "created_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "incoming": {
                "help_text": "A merge: every field of the add that was merged in, who sent it (actor), "
                "its similarity and the reason; null for other revisions and merges recorded before."
            },
            "split_into": {"help_text": "The memory this merge was split back out into; null until then."},
        }

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["before"], data["after"] = snapshot_out(data["before"]), snapshot_out(data["after"])
        return data


class EmbeddingConfigInputSerializer(StrictSerializer):
    level = serializers.ChoiceField(choices=["org", "user"], default="org")
    provider = serializers.ChoiceField(choices=["local", "openai"])
    model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    base_url = OutboundURLField(max_length=500, required=False, allow_blank=True, default="")
    dimensions = serializers.IntegerField(required=False, default=settings.ENGRAM_EMBEDDING_DIM)
    api_key = serializers.CharField(max_length=500, required=False, allow_blank=True, write_only=True)

    def validate(self, data):
        if data["dimensions"] != settings.ENGRAM_EMBEDDING_DIM:
            raise serializers.ValidationError(
                {"dimensions": [f"The vector column has {settings.ENGRAM_EMBEDDING_DIM} dimensions."]}
            )
        if data["provider"] == "openai":
            if not data.get("base_url") or not data.get("model"):
                raise serializers.ValidationError("An openai provider needs base_url and model.")
        else:
            data["model"] = "multilingual-e5-small"
            data["base_url"] = ""
        return data


class EmbeddingConfigSerializer(serializers.ModelSerializer):
    has_api_key = serializers.SerializerMethodField()

    class Meta:
        model = EmbeddingConfig
        fields = ["user_id", "provider", "model", "base_url", "dimensions", "has_api_key", "updated_at"]
        read_only_fields = fields

    def get_has_api_key(self, obj) -> bool:
        return bool(obj.api_key_encrypted)


class ReembedJobSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReembedJob
        fields = ["id", "model", "status", "total", "done", "errors", "error", "created_at", "finished_at"]
        read_only_fields = fields


# ---- response shapes for the schema (the views build these bodies) -----------------------------------


class CountsField(serializers.DictField):
    child = serializers.IntegerField()


class MemoryStatsSerializer(serializers.Serializer):
    """GET memories/stats and agents/{agent_id}/memories/stats."""

    total = serializers.IntegerField()
    by_type = CountsField(help_text="Memories per memory_type.")
    by_source = CountsField(help_text="Memories per source.")
    by_status = CountsField(help_text="Memories per status.")
    user_count = serializers.IntegerField(help_text="Distinct subjects (user_id) among them.")


class WriteDecisionSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["duplicate", "update", "distinct"],
        help_text="duplicate: merged into duplicate_of; update: added and supersedes the old memory (kept, "
        "restorable); distinct: added.",
    )
    reason = serializers.CharField(
        help_text="Why, in words (the memory it was compared with and the difference)."
    )


class MemoryWriteSerializer(MemorySerializer):
    """POST memories: the memory stored (201) or merged into (200), and how the write was decided."""

    decision = WriteDecisionSerializer(
        required=False, help_text="With similarity dedup (infer): duplicate, update or distinct, and why."
    )
    duplicate_of = serializers.IntegerField(required=False, help_text="200: the memory it was merged into.")
    supersedes = serializers.IntegerField(
        required=False, help_text="201, an update: the memory this one replaced (now superseded)."
    )
    similarity = serializers.FloatField(required=False, allow_null=True)

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "decision", "duplicate_of", "supersedes", "similarity"]
        read_only_fields = fields


class BatchErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class BatchResultSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="Position of the item in the request.")
    status = serializers.ChoiceField(
        choices=["created", "duplicate", "superseded", "rejected", "paused"],
        help_text="superseded: stored as an update of an older memory (supersedes), which is kept as superseded. "
        "paused: memory is paused for the item's subject or session; nothing stored.",
    )
    id = serializers.IntegerField(required=False, help_text="The memory stored or merged into.")
    duplicate_of = serializers.IntegerField(required=False)
    supersedes = serializers.IntegerField(
        required=False, help_text="superseded: the memory this one replaced."
    )
    decision = WriteDecisionSerializer(required=False)
    similarity = serializers.FloatField(required=False, allow_null=True)
    error = BatchErrorSerializer(required=False, help_text="Why the item was rejected.")


class BatchOutputSerializer(serializers.Serializer):
    """POST memories/batch: counts per status and one result per item, in request order."""

    created = serializers.IntegerField()
    duplicate = serializers.IntegerField()
    superseded = serializers.IntegerField(help_text="Items stored as updates of an older memory.")
    rejected = serializers.IntegerField()
    paused = serializers.IntegerField(
        help_text="Items not stored: memory is paused for their subject or session."
    )
    status = serializers.ChoiceField(
        choices=PAUSED_STATUS,
        required=False,
        help_text="paused: every item's subject or session has memory paused; nothing was stored.",
    )
    results = BatchResultSerializer(many=True)


class PausedSerializer(serializers.Serializer):
    """A write while memory is paused for the subject or the session (memory.pause): nothing was stored."""

    status = serializers.ChoiceField(choices=PAUSED_STATUS)
    paused = serializers.ChoiceField(
        choices=PAUSE_LEVELS, help_text="Paused for the whole subject, or only for this session."
    )
    user_id = serializers.CharField()
    session_id = serializers.CharField(allow_null=True)
    stored = serializers.IntegerField(help_text="Always 0.")
    message = serializers.CharField()


class SplitResultSerializer(MemorySerializer):
    """POST memories/{id}/split: the new memory, and the one it was split from."""

    split_from = serializers.IntegerField(help_text="The memory the merge revision belongs to.")

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "split_from"]
        read_only_fields = fields


class DeletedCountSerializer(serializers.Serializer):
    deleted = serializers.IntegerField(help_text="Memories deleted.")


class AgentDeletedSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    deleted = serializers.IntegerField(required=False, help_text="Memories deleted (delete-all only).")


class EmbeddingEffectiveSerializer(serializers.Serializer):
    model = serializers.CharField()
    provider = serializers.CharField()


class EmbeddingConfigOutputSerializer(serializers.Serializer):
    """GET/PUT/DELETE embedding-config: the stored override (null: none) and the provider in effect."""

    level = serializers.ChoiceField(choices=["org", "user"])
    config = EmbeddingConfigSerializer(allow_null=True)
    effective = EmbeddingEffectiveSerializer()
    reembed_job = ReembedJobSerializer(
        allow_null=True, required=False, help_text="PUT and DELETE: the re-embed job started, if any."
    )
