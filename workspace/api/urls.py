"""Routes of the top layer: context for an agent, a subject's data as a whole."""

from django.urls import path

from .context_views import ContextView
from .mcp_views import McpView
from .subjects_views import MemoryPauseView, SubjectExportView, SubjectImportView, SubjectView

urlpatterns = [
    path("context", ContextView.as_view(), name="context"),
    path("mcp", McpView.as_view(), name="mcp"),
    path("users/<str:user_id>", SubjectView.as_view(), name="subject"),
    path("users/<str:user_id>/export", SubjectExportView.as_view(), name="subject-export"),
    path("users/<str:user_id>/import", SubjectImportView.as_view(), name="subject-import"),
    path("users/<str:user_id>/memory-pause", MemoryPauseView.as_view(), name="subject-memory-pause"),
]
