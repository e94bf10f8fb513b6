from django.urls import path

from .views import ProjectProfileView, UserProfileView

urlpatterns = [
    path("profiles/users/<str:user_id>", UserProfileView.as_view(), name="user-profile"),
    path("projects/<int:pk>/profile", ProjectProfileView.as_view(), name="project-profile"),
]
