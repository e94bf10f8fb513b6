"""JSON bodies with a size limit and no 500s on hostile input."""

import json

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from .errors import ApiError


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


class JSONParser(parsers.JSONParser):
    """DRF reads the body straight from the socket, past Django's DATA_UPLOAD_MAX_MEMORY_SIZE; this enforces it."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if limit is not None and declared and str(declared).isdigit() and int(declared) > limit:
            raise ApiError(413, "too_large", f"The request body is larger than {limit} bytes.")
        raw = stream.read(limit + 1) if limit is not None else stream.read()
        if limit is not None and len(raw) > limit:
            raise ApiError(413, "too_large", f"The request body is larger than {limit} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise ParseError(f"The body is not valid {encoding} text: {exc}")
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.")
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}")
