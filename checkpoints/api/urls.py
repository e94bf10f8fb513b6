"""Routes of sessions (short-term memory) and checkpoints (episodic memory)."""

from django.urls import path

from . import views

urlpatterns = [
    path("sessions", views.SessionListView.as_view(), name="session-list"),
    path("sessions/<str:session_id>", views.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/messages", views.SessionMessagesView.as_view(), name="session-messages"),
    path(
        "sessions/<str:session_id>/checkpoints",
        views.SessionCheckpointsView.as_view(),
        name="checkpoint-list",
    ),
    path(
        "sessions/<str:session_id>/checkpoints/latest",
        views.LatestCheckpointView.as_view(),
        name="checkpoint-latest",
    ),
    path(
        "sessions/<str:session_id>/checkpoints/archived",
        views.SessionArchivedCheckpointsView.as_view(),
        name="checkpoint-archived",
    ),
    path("checkpoints/<int:pk>", views.CheckpointDetailView.as_view(), name="checkpoint-detail"),
    path(
        "checkpoints/<int:pk>/approve",
        views.CheckpointDecisionView.as_view(decision="approve"),
        name="checkpoint-approve",
    ),
    path(
        "checkpoints/<int:pk>/reject",
        views.CheckpointDecisionView.as_view(decision="reject"),
        name="checkpoint-reject",
    ),
    path("checkpoints/<int:pk>/restore", views.CheckpointRestoreView.as_view(), name="checkpoint-restore"),
]
