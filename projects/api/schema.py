"""OpenAPI: describe the Bearer API key so /api/docs/ offers it under Authorize."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "projects.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An org API key: `Authorization: Bearer eng_xxxxxxxx.<secret>`.",
        }
