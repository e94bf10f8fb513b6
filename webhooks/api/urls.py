from django.urls import path
from rest_framework.routers import SimpleRouter

from .views import WebhookDeliveryViewSet, WebhookEndpointViewSet

router = SimpleRouter(trailing_slash=False)
router.register("webhooks", WebhookEndpointViewSet, basename="webhook")

deliveries = WebhookDeliveryViewSet.as_view({"get": "list"})
delivery = WebhookDeliveryViewSet.as_view({"get": "retrieve"})
retry = WebhookDeliveryViewSet.as_view({"post": "retry"})

urlpatterns = router.urls + [
    path("webhooks/<int:webhook_pk>/deliveries", deliveries, name="webhook-deliveries"),
    path("webhooks/<int:webhook_pk>/deliveries/<int:pk>", delivery, name="webhook-delivery"),
    path("webhooks/<int:webhook_pk>/deliveries/<int:pk>/retry", retry, name="webhook-delivery-retry"),
]
