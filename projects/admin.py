"""Django admin for staff: tenancy rows (read-only where a service owns the writes).
The statistics page spans every app and is added in workspace.admin.

API keys show their prefix only, never the hash. Memberships are read-only: roles are changed through
projects.services, the one writer of the guardian grants.
"""

from django.contrib import admin, messages
from django.db.models import Count
from django.utils import timezone

from .login_throttle import ThrottledAdminAuthenticationForm
from .models import ApiKey, Organization, OrgMembership, Project, ProjectMembership

admin.site.login_form = ThrottledAdminAuthenticationForm  # the admin's sign-in is throttled like the site's


class ReadOnlyAdmin(admin.ModelAdmin):
    """Listing and viewing only: the services own these writes."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "members", "projects_count", "api_rate", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_members=Count("memberships", distinct=True), n_projects=Count("projects", distinct=True)
            )
        )

    @admin.display(ordering="n_members", description="members")
    def members(self, obj):
        return obj.n_members

    @admin.display(ordering="n_projects", description="projects")
    def projects_count(self, obj):
        return obj.n_projects


@admin.register(OrgMembership)
class OrgMembershipAdmin(ReadOnlyAdmin):
    list_display = ["account", "org", "role", "user_id", "created_at"]
    list_filter = ["role", "org"]
    search_fields = ["account__username", "user_id", "org__slug"]


class ProjectMembershipInline(admin.TabularInline):
    model = ProjectMembership
    fields = ["account", "role", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Project)
class ProjectAdmin(ReadOnlyAdmin):
    list_display = ["slug", "name", "org", "members", "created_at"]
    list_filter = ["org"]
    search_fields = ["slug", "name"]
    inlines = [ProjectMembershipInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_members=Count("memberships"))

    @admin.display(ordering="n_members", description="members")
    def members(self, obj):
        return obj.n_members


@admin.register(ProjectMembership)
class ProjectMembershipAdmin(ReadOnlyAdmin):
    list_display = ["account", "project", "role", "created_at"]
    list_filter = ["role", "org"]
    search_fields = ["account__username", "project__slug"]


@admin.register(ApiKey)
class ApiKeyAdmin(ReadOnlyAdmin):
    """Prefix only: the hash is never displayed."""

    list_display = ["prefix", "name", "org", "read_only", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["read_only", "org", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name"]
    fields = [
        "prefix",
        "name",
        "org",
        "read_only",
        "projects",
        "created_by",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    readonly_fields = fields
    actions = ["revoke"]

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        n = queryset.filter(revoked_at=None).update(revoked_at=timezone.now())
        messages.success(request, f"{n} key(s) revoked.")

    def has_change_permission(self, request, obj=None):
        # Allowed only so the revoke action shows; every field stays read-only.
        return request.user.is_staff
