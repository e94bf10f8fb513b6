from django.urls import path

from . import views

urlpatterns = [
    path("profile/", views.my_profile, name="profile"),
    path("projects/<slug:slug>/profile/", views.project_profile_edit, name="project-profile-edit"),
]
