"""Routes of the read path: search, injection logs."""

from django.urls import path

from .search_views import InjectionListView, MemoryInjectionListView, SearchView

urlpatterns = [
    path("memories/search", SearchView.as_view(), name="memory-search"),
    path("memories/<int:pk>/injections", MemoryInjectionListView.as_view(), name="memory-injections"),
    path("injections", InjectionListView.as_view(), name="injection-list"),
]
