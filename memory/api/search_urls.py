"""Routes of the read path: search, context, injection logs."""

from django.urls import path

from .search_views import ContextView, InjectionListView, MemoryInjectionListView, SearchView

urlpatterns = [
    path("memories/search", SearchView.as_view(), name="memory-search"),
    path("memories/<int:pk>/injections", MemoryInjectionListView.as_view(), name="memory-injections"),
    path("context", ContextView.as_view(), name="context"),
    path("injections", InjectionListView.as_view(), name="injection-list"),
]
