"""The staff statistics page (figures from every app), served under the organization admin."""

from django.contrib import admin
from django.template.response import TemplateResponse
from django.urls import path

from projects.admin import OrganizationAdmin
from projects.models import Organization

from .statistics import statistics


class OrganizationStatisticsAdmin(OrganizationAdmin):
    """The organization admin plus admin/projects/organization/statistics/."""

    def get_urls(self):
        view = self.admin_site.admin_view(self.statistics_view)
        return [path("statistics/", view, name="engram-statistics")] + super().get_urls()

    def statistics_view(self, request):
        context = {**self.admin_site.each_context(request), "title": "Statistics", "stats": statistics()}
        return TemplateResponse(request, "admin/engram_statistics.html", context)


admin.site.unregister(Organization)
admin.site.register(Organization, OrganizationStatisticsAdmin)
