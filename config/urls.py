from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

api_v1 = [
    path("", include("projects.api.urls")),
    path("", include("memory.api.urls")),
    path("", include("memory.api.search_urls")),
    path("", include("memory.api.markdown_urls")),
    path("", include("checkpoints.api.urls")),
    path("", include("memory.api.jobs_urls")),
    path("", include("memory.api.tools_urls")),
    path("", include("memory.api.store_urls")),
    path("", include("profiles.api.urls")),
    path("", include("workspace.api.urls")),
    path("", include("audit.api.urls")),
    path("", include("webhooks.api.urls")),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI and Redoc come from the app's static files (drf-spectacular-sidecar); the split view serves
    # its script from a URL: the Content-Security-Policy allows no inline script.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api/swagger_ui.html"),
        name="api-docs",
    ),
    path(
        "api/redoc/",
        SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html"),
        name="api-redoc",
    ),
    path("i18n/", include("django.conf.urls.i18n")),
    # Mem0's REST API at the root, where mem0ai's client looks for it (README "Mem0 compatibility").
    path("", include("mem0compat.api.urls")),
    path("", include("projects.urls")),
    path("", include("memory.urls")),
    path("", include("profiles.urls")),
    path("", include("workspace.urls")),
    path("", include("audit.urls")),
    path("", include("webhooks.urls")),
]

handler403 = "projects.views.forbidden"
handler404 = "projects.views.not_found"
handler500 = "projects.views.server_error"
