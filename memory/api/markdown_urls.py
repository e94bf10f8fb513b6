from django.urls import path

from .markdown_views import MarkdownDocumentView

urlpatterns = [path("memories/markdown", MarkdownDocumentView.as_view(), name="memory-markdown")]
