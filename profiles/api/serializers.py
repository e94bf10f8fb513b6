"""Input and output of the profile endpoints."""

from rest_framework import serializers

from projects.api.base import StrictSerializer

from ..selectors import PROJECT_FIELDS, USER_FIELDS

_LANGUAGE_TAG = r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$"


def _strings(max_items: int = 50, max_length: int = 200):
    return serializers.ListField(
        child=serializers.CharField(max_length=max_length, allow_blank=False),
        max_length=max_items,
        required=False,
    )


class UserProfileInputSerializer(StrictSerializer):
    username = serializers.CharField(max_length=200, allow_blank=True, required=False)
    background = serializers.CharField(max_length=5000, allow_blank=True, required=False)
    profession = serializers.CharField(max_length=200, allow_blank=True, required=False)
    communication_style = serializers.ChoiceField(
        choices=["concise", "detailed", "technical"], allow_blank=True, required=False
    )
    response_format = serializers.ChoiceField(
        choices=["markdown", "plain", "code"], allow_blank=True, required=False
    )
    language_preference = serializers.RegexField(
        _LANGUAGE_TAG,
        max_length=20,
        allow_blank=True,
        required=False,
        error_messages={"invalid": "Use a language tag such as zh-CN, en or ja."},
    )
    characteristics = _strings()
    content = serializers.CharField(max_length=5000, allow_blank=True, required=False)
    expertise_areas = _strings()
    programming_languages = _strings()
    frequently_used_tools = _strings()
    clear_edited = serializers.ListField(
        child=serializers.ChoiceField(choices=USER_FIELDS), required=False, max_length=len(USER_FIELDS)
    )


class DecisionSerializer(StrictSerializer):
    decision = serializers.CharField(max_length=1000)
    reason = serializers.CharField(max_length=1000, allow_blank=True, required=False, default="")
    date = serializers.DateField(required=False, allow_null=True, default=None)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        value["date"] = value["date"].isoformat() if value.get("date") else ""
        return value


class ProjectProfileInputSerializer(StrictSerializer):
    project_goal = serializers.CharField(max_length=5000, allow_blank=True, required=False)
    tech_stack = _strings()
    constraints = _strings(max_length=2000)
    key_decisions = serializers.ListField(child=DecisionSerializer(), max_length=100, required=False)
    team_conventions = _strings(max_length=2000)
    current_phase = serializers.CharField(max_length=200, allow_blank=True, required=False)
    clear_edited = serializers.ListField(
        child=serializers.ChoiceField(choices=PROJECT_FIELDS), required=False, max_length=len(PROJECT_FIELDS)
    )


class ProfileRevisionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    actor = serializers.CharField()
    changes = serializers.JSONField()
    created_at = serializers.DateTimeField()
