"""Routes of the extraction queue and the chat model configuration."""

from django.urls import path

from . import jobs_views

urlpatterns = [
    path("extraction-jobs", jobs_views.ExtractionJobListView.as_view(), name="extraction-job-list"),
    path(
        "extraction-jobs/<int:pk>", jobs_views.ExtractionJobDetailView.as_view(), name="extraction-job-detail"
    ),
    path(
        "extraction-jobs/<int:pk>/retry",
        jobs_views.ExtractionJobRetryView.as_view(),
        name="extraction-job-retry",
    ),
    path(
        "extraction-jobs/<int:pk>/deferred/accept",
        jobs_views.ExtractionJobDeferredAcceptView.as_view(),
        name="extraction-job-deferred-accept",
    ),
    path("llm-config", jobs_views.LLMConfigView.as_view(), name="llm-config"),
]
