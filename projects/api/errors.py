"""Every API error has the body {"error": {"code": ..., "message": ..., "details"?: ...}}."""

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import exceptions, status
from rest_framework.response import Response

from core.text import unstorable

# Paths answered in JSON, errors included: Engram's API and the Mem0-compatible one at the root (mem0compat).
API_PATH_PREFIXES = ("/api/", "/v1/", "/v2/", "/v3/")


def is_api_path(path: str) -> bool:
    return path.startswith(API_PATH_PREFIXES)


class ApiError(exceptions.APIException):
    """An error with an explicit code and status, e.g. ApiError(422, "too_short", "...")."""

    def __init__(self, status_code: int, code: str, message: str, details=None):
        self.status_code = status_code
        self.code = code
        self.details = details
        super().__init__(detail=message, code=code)


def error_text(detail) -> str:
    """A DRF error detail (dict, list or string, nested) as one line: "field: message; other: message"."""
    if isinstance(detail, dict):
        parts = []
        for key, value in detail.items():
            parts.append(f"{key}: {error_text(value)}" if key != "non_field_errors" else error_text(value))
        return "; ".join(parts)
    if isinstance(detail, list):
        return " ".join(error_text(v) for v in detail)
    return str(detail)


NUL_MESSAGE = gettext_lazy("contains a NUL character (\\u0000), which cannot be stored.")


def unstorable_error(value, field: str = "") -> tuple[str, str] | None:
    """(where, message) when a JSON value holds text PostgreSQL cannot store (core.text.unstorable): `where`
    is the field and the path inside it, e.g. "metadata.note" or "memories[0].tags[1]"."""
    found = unstorable(value)
    if found is None:
        return None
    path, char = found
    where = field + ("." if field and path and not path.startswith("[") else "") + path if field else path
    if char == "\\u0000":
        return where or "body", str(NUL_MESSAGE)
    return where or "body", _("contains a lone surrogate (%(char)s), which is not valid Unicode text.") % {
        "char": char
    }


class Answered(Exception):
    """Not an error: a service decided the answer itself (e.g. memory.pause.MemoryPaused: 200, stored
    nothing). Every API surface answers `status_code` with `body()`, whichever view raised it."""

    status_code = 200

    def body(self) -> dict:
        raise NotImplementedError


CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    412: "precondition_failed",
    413: "too_large",
    415: "unsupported_media_type",
    422: "unprocessable",
    429: "throttled",
}


def exception_handler(exc, context):
    # Imported here: importing rest_framework.views loads the parsers, which import this module (and the
    # middleware imports this module before DRF is loaded).
    from rest_framework.views import exception_handler as drf_exception_handler

    if isinstance(exc, Answered):
        return Response(exc.body(), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {
                "error": {
                    "code": "too_large",
                    "message": f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.",
                }
            },
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or "You do not have permission to do this.")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = getattr(exc, "code", None) if isinstance(exc, ApiError) else None
    if code is None:
        code = CODES.get(response.status_code, "error")
        if isinstance(exc, exceptions.ParseError):
            code = "malformed"
    body = {"code": code, "message": error_text(exc.detail)}
    if isinstance(exc, exceptions.ValidationError) and isinstance(exc.detail, dict):
        body["details"] = exc.detail
    if isinstance(exc, ApiError) and exc.details is not None:
        body["details"] = exc.details
    response.data = {"error": body}
    return response


def json_error(status: int, code: str, message: str) -> JsonResponse:
    """An error in the API's body shape, for code that answers before DRF does (handlers, middleware)."""
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def json_404(request, exception=None):
    return json_error(404, "not_found", "Not found.")


def json_500(request):
    return json_error(500, "server_error", "Internal error.")
