"""Staff see the queue and counts; never the content of a person's memories, messages or extraction input."""

from django.contrib import admin

from projects.admin import ReadOnlyAdmin

from .models import ExtractionJob, MemoryItem, ReembedJob


@admin.register(MemoryItem)
class MemoryItemAdmin(ReadOnlyAdmin):
    """Ids and bookkeeping only: no content, tags or metadata (they may hold a person's private facts)."""

    list_display = [
        "id",
        "org",
        "scope",
        "memory_type",
        "source",
        "status",
        "pinned",
        "version",
        "created_at",
    ]
    list_filter = ["scope", "memory_type", "source", "status", "org"]
    fields = [
        "id",
        "org",
        "scope",
        "user_id",
        "project",
        "memory_type",
        "source",
        "status",
        "pinned",
        "confidence",
        "embedding_model",
        "access_count",
        "version",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields
    search_fields = ["=id", "=user_id"]
    show_full_result_count = False

    def get_queryset(self, request):
        return (
            super().get_queryset(request).defer("content", "embedding", "search_tokens", "tags", "metadata")
        )


@admin.register(ExtractionJob)
class ExtractionJobAdmin(ReadOnlyAdmin):
    """Status, counts and errors; the conversation (messages) and the extracted texts (result) stay hidden."""

    list_display = [
        "id",
        "org",
        "user_id",
        "status",
        "attempts",
        "method",
        "counts",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "method", "org"]
    fields = [
        "id",
        "org",
        "user_id",
        "project",
        "session_id",
        "status",
        "attempts",
        "method",
        "counts",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    ]
    readonly_fields = fields
    search_fields = ["=id", "=user_id"]

    @admin.display(description="added / merged / superseded / rejected")
    def counts(self, obj):
        result = obj.result or {}

        def n(key):
            value = result.get(key) or []
            return len(value) if isinstance(value, list | dict) else value

        return " / ".join(str(n(k)) for k in ("added", "merged", "superseded", "rejected"))

    def get_queryset(self, request):
        return super().get_queryset(request).defer("messages")


@admin.register(ReembedJob)
class ReembedJobAdmin(ReadOnlyAdmin):
    list_display = ["id", "org", "model", "status", "done", "total", "errors", "created_at", "finished_at"]
    list_filter = ["status", "org"]
