from django.urls import path

from .users_views import SubjectExportView, SubjectImportView, SubjectView

urlpatterns = [
    path("users/<str:user_id>", SubjectView.as_view(), name="subject"),
    path("users/<str:user_id>/export", SubjectExportView.as_view(), name="subject-export"),
    path("users/<str:user_id>/import", SubjectImportView.as_view(), name="subject-import"),
]
