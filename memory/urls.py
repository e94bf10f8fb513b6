from django.urls import path

from . import dashboard_views, markdown_views, views

urlpatterns = [
    path("memories/", views.memory_list, name="memory-list"),
    path("memories/add/", views.memory_add, name="memory-add"),
    path("memories/suggest-type/", views.memory_suggest_type, name="memory-suggest-type"),
    path("memories/<int:pk>/row/", views.memory_row, name="memory-row"),
    path("memories/<int:pk>/edit/", views.memory_edit, name="memory-edit"),
    path("memories/<int:pk>/pin/", views.memory_pin, name="memory-pin"),
    path("memories/<int:pk>/delete/", views.memory_delete, name="memory-delete"),
    path("memories/<int:pk>/undo/", views.memory_undo, name="memory-undo"),
    path("memories/<int:pk>/purge/", views.memory_purge, name="memory-purge"),
    path("memories/<int:pk>/revisions/<int:number>/restore/", views.memory_restore, name="memory-restore"),
    path("memories/<int:pk>/revisions/<int:number>/split/", views.memory_split, name="memory-revision-split"),
    path(
        "projects/<slug:slug>/memories/<int:pk>/visibility/",
        views.memory_visibility,
        name="project-memory-visibility",
    ),
    path("queue/", dashboard_views.queue, name="queue"),
    path("queue/<int:pk>/", dashboard_views.queue_job, name="queue-job"),
    path("queue/<int:pk>/retry/", dashboard_views.queue_retry, name="queue-retry"),
    path("usage/", dashboard_views.usage, name="usage"),
    path("markdown/", markdown_views.markdown_editor, name="markdown"),
    path("markdown/skills/<str:skill>/", markdown_views.markdown_editor, name="markdown-skill"),
    path("markdown/preview/", markdown_views.markdown_preview, name="markdown-preview"),
]
