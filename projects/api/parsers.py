"""JSON bodies with a size limit, text PostgreSQL can store, and no 500s on hostile input."""

import json
import re

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError

from .errors import ApiError, unstorable_error

# NUL and surrogates reach a JSON body only as \u escapes (raw ones fail decoding or parsing): a body
# without such an escape is not walked.
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


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
            data = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.")
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}")
        # PostgreSQL stores neither a NUL nor a lone surrogate, in text or jsonb: refused here, for every
        # endpoint at once, naming the field (e.g. memories[0].metadata.note).
        error = unstorable_error(data) if _SUSPECT_ESCAPE.search(text) else None
        if error is not None:
            where, message = error
            raise ValidationError({where: [message]})
        return data
