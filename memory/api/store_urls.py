"""Routes of the LangGraph store API (the paths LangGraph's client calls, under /api/v1/)."""

from django.urls import path

from . import store_views

urlpatterns = [
    path("store/items", store_views.StoreItemsView.as_view(), name="store-items"),
    path("store/items/search", store_views.StoreSearchView.as_view(), name="store-items-search"),
    path("store/namespaces", store_views.StoreNamespacesView.as_view(), name="store-namespaces"),
]
