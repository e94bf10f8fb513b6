"""Content-Security-Policy on every response (Django 5.2 has none built in).

The pages use only Engram's own scripts and stylesheets: no inline script, handler or style attribute
(static/js/engram.js carries the behaviour, static/css the looks), so the policy can forbid them. The API
docs (Swagger UI at /api/docs/, Redoc at /api/redoc/) load their bundles from the app's static files too
(drf-spectacular-sidecar) and get the docs policy, which adds what those bundles do at run time."""

from django.conf import settings


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            docs = request.path.startswith(settings.ENGRAM_CSP_DOCS_PATHS)
            response["Content-Security-Policy"] = settings.ENGRAM_CSP_DOCS if docs else settings.ENGRAM_CSP
        return response
