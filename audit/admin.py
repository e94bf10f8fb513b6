"""Staff see the audit log read-only: nobody adds, changes or deletes an event here."""

from django.contrib import admin

from projects.admin import ReadOnlyAdmin

from .models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "org",
        "actor_kind",
        "actor_label",
        "action",
        "target_type",
        "target_id",
        "ip",
    ]
    list_filter = ["action", "actor_kind", "org"]
    search_fields = ["actor_label", "target_id", "subject_id", "org__slug"]
    date_hierarchy = "created_at"
    list_select_related = ["org"]
