from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from projects.api.base import OutboundURLField, StrictSerializer

from ..models import SUBSCRIBABLE, DeliveryStatus, WebhookDelivery, WebhookEndpoint
from ..services import clean_events


class EventsField(serializers.ListField):
    """Event names; an unknown one is refused with the list of valid names."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.CharField(max_length=40), max_length=len(SUBSCRIBABLE), **kwargs)

    def to_internal_value(self, data):
        from django.core.exceptions import ValidationError

        names = super().to_internal_value(data)
        try:
            return clean_events(names)
        except ValidationError as exc:
            raise serializers.ValidationError(exc.message_dict["events"]) from exc


@extend_schema_field({"type": "array", "items": {"type": "string", "enum": SUBSCRIBABLE}})
class EventsSchemaField(EventsField):
    pass


class WebhookEndpointSerializer(serializers.ModelSerializer):
    """An endpoint; its secret is never part of it (only of the create and rotate-secret answers)."""

    active = serializers.BooleanField(source="is_active", read_only=True)
    consecutive_failures = serializers.IntegerField(source="failure_count", read_only=True)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=SUBSCRIBABLE),
        read_only=True,
        help_text="The events it receives; empty: all of them.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "url",
            "description",
            "project",
            "events",
            "include_content",
            "active",
            "disabled_at",
            "disabled_reason",
            "consecutive_failures",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class WebhookEndpointCreatedSerializer(WebhookEndpointSerializer):
    secret = serializers.CharField(
        read_only=True, help_text="whsec_...: the signing secret, shown only in this answer."
    )

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret"]
        read_only_fields = fields


class WebhookEndpointCreateSerializer(StrictSerializer):
    """A new endpoint: where to POST, which events, for the org or one project, with content or not."""

    url = OutboundURLField(max_length=500)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    project = serializers.CharField(
        max_length=100,
        required=False,
        allow_null=True,
        default=None,
        help_text="A project id or slug: the endpoint receives that project's events only. Omit for the org's.",
    )
    events = EventsSchemaField(required=False, default=list, help_text="Event names; empty or omitted: all.")
    include_content = serializers.BooleanField(
        required=False, default=False, help_text="Send a memory's content, tags and metadata too."
    )


class WebhookEndpointUpdateSerializer(StrictSerializer):
    """The fields to change; active: true enables a disabled endpoint again."""

    url = OutboundURLField(max_length=500, required=False)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    events = EventsSchemaField(required=False)
    include_content = serializers.BooleanField(required=False)
    active = serializers.BooleanField(
        source="is_active", required=False, help_text="true enables a disabled endpoint again."
    )


class WebhookSecretSerializer(serializers.Serializer):
    secret = serializers.CharField(read_only=True, help_text="whsec_...: the new secret, shown only now.")


class WebhookDeliverySerializer(serializers.ModelSerializer):
    """One event for one endpoint: how its attempts went (the last error never holds a secret)."""

    status = serializers.ChoiceField(choices=DeliveryStatus.choices, read_only=True)
    response_code = serializers.IntegerField(source="last_status_code", read_only=True, allow_null=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event",
            "message_id",
            "status",
            "attempts",
            "response_code",
            "last_error",
            "next_attempt_at",
            "delivered_at",
            "created_at",
            "updated_at",
            "payload",
        ]
        read_only_fields = fields
