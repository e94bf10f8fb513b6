"""Errors as exceptions. The API answers every error with {"error": {"code", "message", "details"?}};
each status has its class, and every one carries `status`, `code`, `message` and `details`."""

from __future__ import annotations

from typing import Any

import httpx


class EngramError(Exception):
    """Base of every error the client raises."""

    status: int | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "error",
        details: Any = None,
        response: httpx.Response | None = None,
    ):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.code = code
        self.details = details
        self.response = response

    def __str__(self) -> str:
        prefix = f"{self.status} {self.code}" if self.status else self.code
        return f"{prefix}: {self.message}"


class ConnectionError(EngramError):  # noqa: A001 (the client's own, as httpx names it)
    """The server could not be reached, or did not answer within the timeout."""


class JobTimeout(EngramError):
    """jobs.wait(): the job did not finish within the time given."""


class APIError(EngramError):
    """The server answered with an error status."""


class ValidationError(APIError):
    """400: bad input; `message` names the field, `details` maps fields to messages."""

    status = 400


class AuthenticationError(APIError):
    """401: no key, a wrong or a revoked one."""

    status = 401


class PermissionDenied(APIError):
    """403: the key or account may not do this (a read-only key writing, a role too low)."""

    status = 403


class NotFound(APIError):
    """404: no such thing, or one of another organization."""

    status = 404


class Conflict(APIError):
    """409: the state changed (a stale Markdown base_version, a checkpoint that is not the latest...)."""

    status = 409


class PreconditionFailed(APIError):
    """412: the memory is at another version than the If-Match / version given."""

    status = 412


class PayloadTooLarge(APIError):
    status = 413


class Unprocessable(APIError):
    """422: refused by the memory gate (`code`: sensitive_content, too_short, too_long, low_confidence,
    rate_limited) or an Idempotency-Key reused with another body."""

    status = 422


class RateLimited(APIError):
    """429 after the client's retries: `retry_after` is the server's Retry-After in seconds (or None)."""

    status = 429

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx (503 after the client's retries)."""

    status = 500


_BY_STATUS: dict[int, type[APIError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def error_for(response: httpx.Response, retry_after: float | None = None) -> APIError:
    """The exception for an error response, read from its {"error": {...}} body when it has one."""
    code, message, details = "error", response.reason_phrase or f"HTTP {response.status_code}", None
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code") or code)
        message = str(error.get("message") or message)
        details = error.get("details")
    elif isinstance(body, dict) and "detail" in body:
        message = str(body["detail"])
    cls = _BY_STATUS.get(response.status_code)
    if cls is None:
        cls = ServerError if response.status_code >= 500 else APIError
    kwargs: dict[str, Any] = {
        "status": response.status_code,
        "code": code,
        "details": details,
        "response": response,
    }
    if cls is RateLimited:
        kwargs["retry_after"] = retry_after
    return cls(message, **kwargs)
