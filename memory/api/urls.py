"""Routes of the memory API. Ids are digits, so memories/search and memories/markdown stay free."""

from django.urls import path

from .feedback_views import MemoryFeedbackView
from .views import AgentMemoryViewSet, EmbeddingConfigView, MemoryViewSet, ReembedJobViewSet

memories = MemoryViewSet.as_view({"get": "list", "post": "create", "delete": "destroy_all"})
memory = MemoryViewSet.as_view({"get": "retrieve", "patch": "partial_update", "delete": "destroy"})
agent_memories = AgentMemoryViewSet.as_view({"get": "list", "post": "create", "delete": "destroy_all"})
agent_memory = AgentMemoryViewSet.as_view({"patch": "partial_update", "delete": "destroy"})

urlpatterns = [
    path("memories", memories, name="memory-list"),
    path("memories/batch", MemoryViewSet.as_view({"post": "batch"}), name="memory-batch"),
    path("memories/stats", MemoryViewSet.as_view({"get": "stats"}), name="memory-stats"),
    path("memories/<int:pk>", memory, name="memory-detail"),
    path("memories/<int:pk>/history", MemoryViewSet.as_view({"get": "history"}), name="memory-history"),
    path("memories/<int:pk>/restore", MemoryViewSet.as_view({"post": "restore"}), name="memory-restore"),
    path("memories/<int:pk>/split", MemoryViewSet.as_view({"post": "split"}), name="memory-split"),
    path("memories/<int:pk>/feedback", MemoryFeedbackView.as_view(), name="memory-feedback"),
    path("agents/<str:agent_id>/memories", agent_memories, name="agent-memory-list"),
    path(
        "agents/<str:agent_id>/memories/stats",
        AgentMemoryViewSet.as_view({"get": "stats"}),
        name="agent-memory-stats",
    ),
    path("agents/<str:agent_id>/memories/<int:pk>", agent_memory, name="agent-memory-detail"),
    path("embedding-config", EmbeddingConfigView.as_view(), name="embedding-config"),
    path("reembed-jobs", ReembedJobViewSet.as_view({"get": "list"}), name="reembed-job-list"),
    path("reembed-jobs/<int:pk>", ReembedJobViewSet.as_view({"get": "retrieve"}), name="reembed-job-detail"),
]
