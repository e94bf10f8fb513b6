from rest_framework import serializers

from projects.models import ApiKey, Project, ProjectMembership, ProjectRole

from .base import StrictModelSerializer, StrictSerializer


class ProjectSerializer(StrictModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["id", "name", "slug", "description", "created_at", "updated_at", "role"]
        read_only_fields = ["id", "created_at", "updated_at", "role"]
        extra_kwargs = {"slug": {"required": False, "validators": []}, "name": {"max_length": 200}}

    def get_role(self, obj) -> str | None:
        from projects.access import project_role

        actor = self.context.get("actor")
        return project_role(actor, obj) if actor else None


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="account.username", read_only=True)
    account = serializers.IntegerField(source="account_id", read_only=True)

    class Meta:
        model = ProjectMembership
        fields = ["id", "account", "username", "role", "created_at"]


class MemberAddSerializer(StrictSerializer):
    account = serializers.IntegerField(required=False)
    username = serializers.CharField(required=False, max_length=150)
    role = serializers.ChoiceField(choices=ProjectRole.choices)

    def validate(self, attrs):
        if "account" not in attrs and "username" not in attrs:
            raise serializers.ValidationError("Give 'account' (id) or 'username'.")
        return attrs


class MemberRoleSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=ProjectRole.choices)


class ApiKeySerializer(serializers.ModelSerializer):
    projects = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "read_only", "projects", "created_at", "last_used_at", "revoked_at"]


class ApiKeyCreatedSerializer(ApiKeySerializer):
    secret = serializers.CharField(read_only=True, help_text="Shown once; only its hash is stored.")

    class Meta(ApiKeySerializer.Meta):
        fields = [*ApiKeySerializer.Meta.fields, "secret"]


class ApiKeyCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=100)
    read_only = serializers.BooleanField(default=False)
    projects = serializers.ListField(
        child=serializers.IntegerField(), required=False, default=list, max_length=1000
    )
