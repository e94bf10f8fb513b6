from django.urls import path

from . import views

urlpatterns = [
    path("memories/<int:pk>/", views.memory_detail, name="memory-detail"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
]
