"""Response shapes of the top layer's endpoints (context, export, import), for the OpenAPI schema only:
the views build the bodies; tests/test_openapi_contract.py checks that the two agree."""

from rest_framework import serializers

from core.roles import ROLES
from memory.api.schemas import SearchHitSerializer, SearchMemorySerializer

from ..subjects import EXPORT_FORMAT, EXPORT_VERSION


class ContextProfileSerializer(serializers.Serializer):
    user = serializers.DictField(help_text="The user profile's non-empty fields (see UserProfile).")
    project = serializers.DictField(help_text="The project profile's non-empty fields; {} without a project.")


class RecentMessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=ROLES)
    content = serializers.CharField()
    created_at = serializers.DateTimeField()


class ContextSerializer(serializers.Serializer):
    """POST context: what an agent should know before it answers, and the same as a ready prompt."""

    profile = ContextProfileSerializer()
    core = SearchMemorySerializer(many=True, help_text="Every core-type and pinned memory.")
    relevant = SearchHitSerializer(many=True, help_text="The memories that best match the query.")
    summary = serializers.CharField(help_text="The session's rolling summary (empty without a session).")
    recent_messages = RecentMessageSerializer(many=True)
    language = serializers.ChoiceField(choices=["en", "zh"], help_text="The language of the prompt.")
    prompt = serializers.CharField(help_text="The sections above as Markdown, for a system prompt.")
    injection_id = serializers.IntegerField(help_text="The injection log row of this hand-over.")
    took_ms = serializers.FloatField()
    notes = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="What degraded the answer, if anything."
    )


def _rows(help_text: str):
    return serializers.ListField(child=serializers.DictField(), help_text=help_text)


class SubjectExportSerializer(serializers.Serializer):
    """A subject's data in the org as one document: GET users/{user_id}/export answers it and POST
    users/{user_id}/import takes it. Rows are the stored columns (ids, foreign keys as `<name>_id`,
    times in ISO 8601)."""

    format = serializers.ChoiceField(choices=[EXPORT_FORMAT])
    version = serializers.ChoiceField(choices=[EXPORT_VERSION])
    exported_at = serializers.DateTimeField(required=False)
    org = serializers.CharField(required=False, help_text="The org's slug.")
    user_id = serializers.CharField(required=False)
    memories = _rows("Memories, each with project_slug.")
    memory_revisions = _rows("Their revisions.")
    profile = serializers.DictField(allow_null=True)
    profile_revisions = _rows("The profile's revisions.")
    sessions = _rows("Sessions, each with messages, checkpoints and archived_checkpoints.")
    injection_logs = _rows("What was handed to agents about the subject.")
    extraction_jobs = _rows("Extraction jobs of the subject's conversations.")
    embedding_config = serializers.DictField(allow_null=True)
    feedback = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Useful / wrong / outdated the subject said of memories (memory ids, no content); "
        "not imported.",
    )


class RefusedRowSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="memory, profile, session...")
    id = serializers.JSONField(allow_null=True, help_text="The row's id in the file.")
    code = serializers.CharField(help_text="Why: a gate code, no_project, exists, invalid...")
    reason = serializers.CharField()


class ImportReportSerializer(serializers.Serializer):
    """POST users/{user_id}/import: what was taken (per kind), refused (per row), and the new memory ids."""

    user_id = serializers.CharField()
    taken = serializers.DictField(child=serializers.IntegerField(), help_text="Rows taken per kind.")
    refused = RefusedRowSerializer(many=True)
    memory_ids = serializers.DictField(
        child=serializers.IntegerField(), help_text="The file's memory id -> the new memory's id."
    )
