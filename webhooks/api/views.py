"""/api/v1/webhooks: endpoints that receive signed events, their secrets and delivery logs (org owners and
admins; a project's Admins for the project's endpoints; never API keys)."""

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from projects.access import project_by_ref
from projects.api.base import EngramViewSet
from projects.api.errors import ApiError

from .. import services
from ..models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from ..selectors import webhook_deliveries, webhook_endpoint, webhook_endpoints
from .serializers import (
    WebhookDeliverySerializer,
    WebhookEndpointCreatedSerializer,
    WebhookEndpointCreateSerializer,
    WebhookEndpointSerializer,
    WebhookEndpointUpdateSerializer,
    WebhookSecretSerializer,
)

TAG = ["webhooks"]


@extend_schema_view(
    list=extend_schema(tags=TAG, summary="List webhook endpoints"),
    retrieve=extend_schema(tags=TAG, summary="Get a webhook endpoint"),
    destroy=extend_schema(tags=TAG, summary="Delete a webhook endpoint and its delivery log"),
)
class WebhookEndpointViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, EngramViewSet):
    """Endpoints that receive the org's (or a project's) events, signed per Standard Webhooks."""

    serializer_class = WebhookEndpointSerializer
    queryset = WebhookEndpoint.objects.none()  # for the schema; get_queryset() is the real one
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return WebhookEndpoint.objects.none()
        return webhook_endpoints(self.actor)

    def get_object(self):
        return webhook_endpoint(self.actor, self.kwargs["pk"])

    @extend_schema(
        tags=TAG,
        summary="Create a webhook endpoint",
        request=WebhookEndpointCreateSerializer,
        responses={201: WebhookEndpointCreatedSerializer},
    )
    def create(self, request):
        data = WebhookEndpointCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        project = project_by_ref(self.actor, values["project"]) if values["project"] else None
        endpoint, secret = services.endpoint_create(
            actor=self.actor,
            url=values["url"],
            project=project,
            description=values["description"],
            events=values["events"],
            include_content=values["include_content"],
        )
        body = WebhookEndpointCreatedSerializer(endpoint).data
        body["secret"] = secret
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})

    @extend_schema(
        tags=TAG,
        summary="Change a webhook endpoint (active: true enables it again)",
        request=WebhookEndpointUpdateSerializer,
        responses=WebhookEndpointSerializer,
    )
    def partial_update(self, request, pk=None):
        endpoint = self.get_object()
        data = WebhookEndpointUpdateSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        endpoint = services.endpoint_update(actor=self.actor, endpoint=endpoint, **data.validated_data)
        return Response(WebhookEndpointSerializer(endpoint).data)

    def destroy(self, request, pk=None):
        services.endpoint_delete(actor=self.actor, endpoint=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        tags=TAG, summary="Replace the signing secret", request=None, responses=WebhookSecretSerializer
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, pk=None):
        secret = services.endpoint_rotate_secret(actor=self.actor, endpoint=self.get_object())
        return Response({"secret": secret}, headers={"Cache-Control": "no-store"})

    @extend_schema(
        tags=TAG,
        summary="Send a webhook.test event",
        request=None,
        responses={202: WebhookDeliverySerializer},
    )
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        try:
            delivery = services.endpoint_test(actor=self.actor, endpoint=self.get_object())
        except services.EndpointDisabled as exc:
            raise ApiError(409, "endpoint_disabled", str(exc)) from exc
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


@extend_schema_view(
    list=extend_schema(
        tags=TAG,
        summary="The endpoint's delivery log, newest first",
        parameters=[
            OpenApiParameter("status", enum=[s for s, _ in DeliveryStatus.choices], required=False),
            OpenApiParameter("event", str, required=False),
        ],
    ),
    retrieve=extend_schema(tags=TAG, summary="One delivery, with its payload"),
)
class WebhookDeliveryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, EngramViewSet):
    """Every event sent (or being sent) to one endpoint: status, attempts, the last response code."""

    serializer_class = WebhookDeliverySerializer
    queryset = WebhookDelivery.objects.none()  # for the schema
    lookup_value_regex = r"\d+"

    def get_endpoint(self) -> WebhookEndpoint:
        return webhook_endpoint(self.actor, self.kwargs["webhook_pk"])

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return WebhookDelivery.objects.none()
        qs = webhook_deliveries(self.get_endpoint())
        wanted = self.request.query_params.get("status")
        if wanted:
            if wanted not in DeliveryStatus.values:
                raise ApiError(
                    400,
                    "invalid",
                    _("status: '%(value)s' is not one of %(valid)s.")
                    % {"value": wanted, "valid": ", ".join(DeliveryStatus.values)},
                )
            qs = qs.filter(status=wanted)
        if self.request.query_params.get("event"):
            qs = qs.filter(event=self.request.query_params["event"])
        return qs

    def get_object(self):
        return get_object_or_404(self.get_queryset(), pk=self.kwargs["pk"])

    @extend_schema(
        tags=TAG,
        summary="Send a failed or abandoned delivery again",
        request=None,
        responses={202: WebhookDeliverySerializer},
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, webhook_pk=None, pk=None):
        delivery = self.get_object()
        try:
            delivery = services.delivery_retry(actor=self.actor, delivery=delivery)
        except services.EndpointDisabled as exc:
            raise ApiError(409, "endpoint_disabled", str(exc)) from exc
        except services.NotRetryable as exc:
            raise ApiError(409, "conflict", str(exc)) from exc
        return Response(WebhookDeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)


__all__ = ["WebhookDeliveryViewSet", "WebhookEndpointViewSet"]
