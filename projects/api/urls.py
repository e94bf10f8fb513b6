from django.urls import path
from rest_framework.routers import SimpleRouter

from . import schema  # noqa: F401  (registers the Bearer key with drf-spectacular)
from .views import ApiKeyViewSet, ProjectMemberViewSet, ProjectViewSet

router = SimpleRouter(trailing_slash=False)
router.register("projects", ProjectViewSet, basename="project")
router.register("api-keys", ApiKeyViewSet, basename="apikey")

members = ProjectMemberViewSet.as_view({"get": "list", "post": "create"})
member = ProjectMemberViewSet.as_view({"patch": "partial_update", "delete": "destroy"})

urlpatterns = router.urls + [
    path("projects/<int:project_pk>/members", members, name="project-members"),
    path("projects/<int:project_pk>/members/<int:pk>", member, name="project-member"),
]
