"""Mem0's paths, exactly as mem0ai's client sends them (trailing slashes included), at the server's root."""

from django.urls import path

from . import views

urlpatterns = [
    path("v1/ping/", views.PingView.as_view(), name="mem0-ping"),
    path("v3/memories/add/", views.AddView.as_view(), name="mem0-add"),
    path("v3/memories/", views.ListView.as_view(), name="mem0-list"),
    path("v3/memories/search/", views.SearchView.as_view(), name="mem0-search"),
    path("v1/memories/", views.DeleteAllView.as_view(), name="mem0-delete-all"),
    path("v1/memories/<str:memory_id>/", views.MemoryView.as_view(), name="mem0-memory"),
    path("v1/memories/<str:memory_id>/history/", views.HistoryView.as_view(), name="mem0-history"),
    path("v1/entities/", views.EntitiesView.as_view(), name="mem0-entities"),
    path("v2/entities/<str:entity_type>/<str:entity_id>/", views.EntityView.as_view(), name="mem0-entity"),
    path("v1/batch/", views.BatchView.as_view(), name="mem0-batch"),
    path("v1/feedback/", views.FeedbackView.as_view(), name="mem0-feedback"),
]
