"""Routes of the agent tools."""

from django.urls import path

from . import tools_views

urlpatterns = [
    path("tools", tools_views.ToolListView.as_view(), name="tool-list"),
    path("tools/<str:name>/invoke", tools_views.ToolInvokeView.as_view(), name="tool-invoke"),
]
