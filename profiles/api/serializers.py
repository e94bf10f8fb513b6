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


# ---- response shapes for the schema (the views build these bodies) -----------------------------------


def _texts(help_text: str = ""):
    return serializers.ListField(child=serializers.CharField(), help_text=help_text)


class ProfileStateSerializer(serializers.Serializer):
    """What both profiles carry besides their fields."""

    edited_fields = serializers.ListField(
        child=serializers.CharField(), help_text="Fields a person set; aggregation leaves them alone."
    )
    sources = serializers.DictField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Field -> ids of the memories aggregation derived it from.",
    )
    aggregated_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True, help_text="null: no profile yet.")
    history = ProfileRevisionSerializer(many=True, help_text="The 20 latest changes, newest first.")


class UserProfileSerializer(ProfileStateSerializer):
    """GET/PATCH profiles/users/{user_id}: every field (empty when unknown), state and recent history."""

    user_id = serializers.CharField()
    username = serializers.CharField()
    background = serializers.CharField()
    profession = serializers.CharField()
    communication_style = serializers.CharField(help_text="concise, detailed, technical or empty.")
    response_format = serializers.CharField(help_text="markdown, plain, code or empty.")
    language_preference = serializers.CharField(help_text="A language tag such as zh-CN, or empty.")
    characteristics = _texts()
    content = serializers.CharField(help_text="Custom instructions.")
    expertise_areas = _texts()
    programming_languages = _texts()
    frequently_used_tools = _texts()


class DecisionOutSerializer(serializers.Serializer):
    decision = serializers.CharField()
    reason = serializers.CharField()
    date = serializers.CharField(help_text="YYYY-MM-DD or empty.")


class ProjectProfileSerializer(ProfileStateSerializer):
    """GET/PATCH projects/{id}/profile: every field (empty when unknown), state and recent history."""

    project = serializers.IntegerField(help_text="The project's id.")
    project_goal = serializers.CharField()
    tech_stack = _texts()
    constraints = _texts()
    key_decisions = DecisionOutSerializer(many=True)
    team_conventions = _texts()
    current_phase = serializers.CharField()
