from django.urls import path

from . import mydata_views, views

urlpatterns = [
    path("memories/<int:pk>/", views.memory_detail, name="memory-detail"),
    path("memories/<int:pk>/feedback/", mydata_views.memory_feedback, name="memory-feedback-page"),
    path("memories/<int:pk>/supersede/", mydata_views.memory_supersede, name="memory-supersede"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("my-data/", mydata_views.my_data, name="my-data"),
    path("my-data/export/", mydata_views.my_data_export, name="my-data-export"),
    path("my-data/pause/", mydata_views.my_data_pause, name="my-data-pause"),
    path("my-data/forget/", mydata_views.my_data_forget, name="my-data-forget"),
    path("my-data/forgotten/", mydata_views.my_data_forgotten, name="my-data-forgotten"),
    path("my-data/given/", mydata_views.given, name="given"),
]
