"""The Idempotency-Key header: one decorator makes a creating endpoint safe to retry.

    @idempotent
    def create(self, request): ...

A request with the header claims the key (projects.idempotency) before the handler runs. The same key
with the same request (method, path, canonical JSON body and the X-Engram-* context headers) within
24 hours answers the first answer again, status and body, with `Idempotent-Replayed: true`, and writes
nothing; the same key with another request is a 422; while the first request is still running, a 409
(the client retries a moment later). Only 2xx answers are kept: after an error the same key may be
sent again. Without the header nothing changes.
"""

from __future__ import annotations

import functools
import hashlib
import json

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from projects.idempotency import (
    KeyInFlight,
    KeyReused,
    idempotency_claim,
    idempotency_release,
    idempotency_store,
)

from .errors import ApiError

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_LENGTH = 255
# Headers that change what a request does (the MCP tools' caller context): part of the fingerprint.
CONTEXT_HEADERS = ("X-Engram-User-Id", "X-Engram-Project", "X-Engram-Session-Id", "X-Engram-Agent-Id")
KEPT_HEADERS = ("ETag", "Location")

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    HEADER,
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "Any unique string up to 255 characters (a UUID). Retrying with the same key and the same body "
        "within 24 hours answers the first answer again (header Idempotent-Replayed: true) and writes "
        "nothing; the same key with a different body is a 422, and while the first request is still "
        "running a 409. Keys are per org and per API key (or signed-in account). Error answers are not "
        "kept: a failed request may be retried with the same key."
    ),
)


def _checked_key(value: str) -> str:
    if not value.strip() or len(value) > MAX_LENGTH or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ApiError(400, "invalid", _("Idempotency-Key: 1 to 255 characters, without control characters."))
    return value


def fingerprint(request) -> str:
    """SHA-256 of what makes two requests the same: method, path, canonical JSON body, context headers."""
    body = json.dumps(request.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    context = [request.headers.get(name, "") for name in CONTEXT_HEADERS]
    text = "\n".join([request.method, request.path, body, *context])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _user_ids(value, out: set, depth: int = 0) -> None:
    """Every string under a "user_id" key, however deep (the subjects an answer is about)."""
    if depth > 6:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "user_id" and isinstance(inner, str) and inner:
                out.add(inner[:255])
            else:
                _user_ids(inner, out, depth + 1)
    elif isinstance(value, list):
        for inner in value:
            _user_ids(inner, out, depth + 1)


def _subjects(view, request, response) -> list[str]:
    found: set[str] = set()
    _user_ids(request.data, found)
    _user_ids(response.data, found)
    for value in (view.kwargs.get("user_id"), request.headers.get("X-Engram-User-Id"), view.actor.user_id):
        if value:
            found.add(str(value)[:255])
    return sorted(found)


def _replay(row) -> Response:
    data = json.loads(row.body) if row.body else None
    response = Response(data, status=row.status_code, headers=row.headers)
    response[REPLAYED_HEADER] = "true"
    return response


def idempotent(handler=None, *, keep=None):
    """Decorate an API view's creating handler (its actor and org are set: projects.api.base).

    keep(response) -> bool narrows which 2xx answers are kept (MCP answers tool errors with a 200)."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(view, request, *args, **kwargs):
            raw = request.headers.get(HEADER)
            if raw is None:
                return method(view, request, *args, **kwargs)
            key = _checked_key(raw)
            try:
                request_print = fingerprint(request)
            except (
                ParseError,
                ValidationError,
            ):  # a body that cannot be read writes nothing: the handler says why
                return method(view, request, *args, **kwargs)
            try:
                row, fresh = idempotency_claim(actor=view.actor, key=key, fingerprint=request_print)
            except KeyReused:
                raise ApiError(
                    422,
                    "idempotency_key_reused",
                    _(
                        "Idempotency-Key: this key was used for a different request (method, path or "
                        "body) in the last 24 hours; send a new key with a new request."
                    ),
                ) from None
            except KeyInFlight:
                raise ApiError(
                    409,
                    "idempotency_key_in_flight",
                    _("Idempotency-Key: the first request with this key is still running; retry shortly."),
                ) from None
            if not fresh:
                return _replay(row)
            try:
                response = method(view, request, *args, **kwargs)
            except BaseException:
                idempotency_release(row=row)
                raise
            if 200 <= response.status_code < 300 and (keep is None or keep(response)):
                idempotency_store(
                    row=row,
                    status_code=response.status_code,
                    body=JSONRenderer().render(response.data).decode() if response.data is not None else "",
                    headers={name: response[name] for name in KEPT_HEADERS if response.has_header(name)},
                    subjects=_subjects(view, request, response),
                )
            else:
                idempotency_release(row=row)
            return response

        return extend_schema(parameters=[IDEMPOTENCY_PARAMETER])(wrapper)

    return decorate(handler) if handler is not None else decorate
