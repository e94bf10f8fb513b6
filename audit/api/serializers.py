from rest_framework import serializers

from audit.models import AuditEvent, TargetType


class AuditActorSerializer(serializers.Serializer):
    kind = serializers.CharField(source="actor_kind")
    label = serializers.CharField(source="actor_label")
    account_id = serializers.IntegerField(source="actor_account_id", allow_null=True)
    key_id = serializers.IntegerField(source="actor_key_id", allow_null=True)


class AuditEventSerializer(serializers.ModelSerializer):
    """One event: ids, names and counts; a forgotten subject's id is blank."""

    actor = AuditActorSerializer(source="*")
    target_type = serializers.ChoiceField(
        choices=TargetType.choices, allow_blank=True, help_text="Empty when the event is about no one row."
    )
    project = serializers.IntegerField(source="project_id", allow_null=True)
    subject = serializers.CharField(source="subject_id")
    details = serializers.DictField()

    class Meta:
        model = AuditEvent
        fields = [
            "id",
            "created_at",
            "action",
            "actor",
            "target_type",
            "target_id",
            "project",
            "subject",
            "ip",
            "user_agent",
            "details",
        ]
        read_only_fields = fields
