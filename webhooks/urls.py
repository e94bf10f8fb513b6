from django.urls import path

from . import views

urlpatterns = [
    path("webhooks/", views.webhook_list, name="webhook-list"),
    path("webhooks/<int:pk>/", views.webhook_detail, name="webhook-detail"),
    path("webhooks/<int:pk>/test/", views.webhook_test, name="webhook-test"),
    path("webhooks/<int:pk>/active/", views.webhook_active, name="webhook-active"),
    path("webhooks/<int:pk>/rotate/", views.webhook_rotate, name="webhook-rotate"),
    path("webhooks/<int:pk>/delete/", views.webhook_delete, name="webhook-delete"),
    path("webhooks/<int:pk>/deliveries/<int:delivery_pk>/retry/", views.delivery_retry, name="webhook-retry"),
]
