from django.urls import path

from .views import AuditEventViewSet

urlpatterns = [
    path("audit-log", AuditEventViewSet.as_view({"get": "list"}), name="audit-log"),
]
