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


ERROR_STATUSES = {
    400: "Invalid input; the message names the field.",
    401: "No or an invalid API key or session.",
    403: "The caller's role or key may not do this.",
    404: "No such object, or one the caller may not see.",
    405: "The operation does not support this method.",
    406: "The Accept header asks for a format the API does not offer.",
    409: "Conflicts with the current state.",
    412: "If-Match names an older version.",
    413: "The request body is too large.",
    415: "The body is not JSON.",
    422: "Refused by the memory gate.",
    429: "Too many requests; see Retry-After.",
}
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"description": "Per-field problems, or what the code needs to explain itself."},
            },
        }
    },
}


def document_errors(result, generator, request, public):
    """Postprocessing hook: every operation answers errors with the one error body (projects.api.errors)."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in ERROR_STATUSES.items():
                responses.setdefault(str(code), {"description": description, "content": error})
    return result
