"""The memory gate (seed 000): confidence, sensitive content (in the text, the tags and the metadata),
length, rate limit.

Duplicates are decided by the services (they need the database and the embedding).
Every rejection carries a code and a message; the content itself is never logged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils.translation import gettext

from core.secrets import secret_kind
from core.text import CJK


@dataclass
class GateRejection(Exception):
    code: str  # sensitive_content | too_short | too_long | low_confidence | rate_limited
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# ---- the checks -------------------------------------------------------------------------------------


# Han, kana and hangul: one character holds about what two Latin letters do (the weighting Twitter's
# length count uses), so "我叫王丹" (4 characters, weight 8) is a memory and "好的" (weight 4) is not.
_WIDE = re.compile(f"[{CJK}\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
WIDE_WEIGHT = 2


def weighted_length(text: str) -> int:
    """The length MEMORY_MIN_LENGTH is measured in: letters and digits count 1, a Chinese, Japanese or Korean
    character counts 2, and the punctuation and symbols around them 0 ("ok!!!" is 2, "好的！" is 4). A text
    of symbols or emoji alone is measured by its characters (each counts 1: "☕🍰🎉☕🍩" is 5)."""
    wordy = sum(WIDE_WEIGHT if _WIDE.match(c) else 1 for c in text if c.isalnum())
    return wordy or sum(1 for c in text if not c.isspace())


def check_length(content: str) -> None:
    """At least MEMORY_MIN_LENGTH in weighted length (see weighted_length); at most MEMORY_MAX_LENGTH characters."""
    n = len(content.strip())
    if weighted_length(content) < settings.MEMORY_MIN_LENGTH:
        raise GateRejection(
            "too_short",
            gettext(
                "A memory needs at least %(minimum)d characters (letters and digits; a Chinese, Japanese or "
                "Korean character counts as two)."
            )
            % {"minimum": settings.MEMORY_MIN_LENGTH},
        )
    if n > settings.MEMORY_MAX_LENGTH:
        raise GateRejection(
            "too_long",
            gettext("A memory may have at most %(limit)d characters (got %(count)d).")
            % {"limit": settings.MEMORY_MAX_LENGTH, "count": n},
        )


def check_confidence(confidence: float) -> None:
    if confidence < settings.MEMORY_MIN_CONFIDENCE:
        raise GateRejection(
            "low_confidence",
            gettext("Confidence %(value).2f is below the minimum %(minimum).2f.")
            % {"value": confidence, "minimum": settings.MEMORY_MIN_CONFIDENCE},
        )


def check_sensitive(content: str) -> None:
    if len(content.strip()) > settings.MEMORY_MAX_LENGTH:
        check_length(content)  # refused anyway; reading 100,000 characters for secrets costs a second
    kind = secret_kind(content)
    if kind:
        raise GateRejection(
            "sensitive_content",
            gettext("Refused: the text %(reason)s; secrets are never stored.")
            % {"reason": _looks_like(kind)},
        )


_ENCODED = " (base64-encoded)"
_PROVIDER_CREDENTIAL = re.compile(r"a credential \((.+)\)")


def _looks_like(kind: str) -> str:
    """core.secrets' kind of secret in the active language ("looks like an API key" / "看起来像 API 密钥")."""
    encoded = kind.endswith(_ENCODED)
    kind = kind.removesuffix(_ENCODED)
    provider = _PROVIDER_CREDENTIAL.fullmatch(kind)
    text = gettext("a credential (%(name)s)") % {"name": provider.group(1)} if provider else gettext(kind)
    if encoded:
        text = gettext("%(kind)s (base64-encoded)") % {"kind": text}
    return gettext("looks like %(kind)s") % {"kind": text}


# The text of a memory's tags and metadata the gate reads at the most (a body of megabytes of metadata would
# cost seconds of CPU to read for secrets).
FIELDS_MAX_CHARS = 20_000


def check_fields(*, tags=None, metadata=None) -> None:
    """The tags and every string in the metadata (at any depth, object keys included) are refused like the
    text when they hold a secret; the message names the field ("tags[2]", "metadata.env.token")."""
    strings: list[tuple[str, str]] = []
    for index, tag in enumerate(tags or ()):
        _strings(tag, f"tags[{index}]", strings)
    _strings(metadata, "metadata", strings)
    total = sum(len(text) for _field, text in strings)
    if total > FIELDS_MAX_CHARS:
        raise GateRejection(
            "too_long",
            gettext("The tags and metadata may hold at most %(limit)d characters of text (got %(count)d).")
            % {"limit": FIELDS_MAX_CHARS, "count": total},
        )
    for field, text in strings:
        kind = secret_kind(text)
        if kind:
            raise GateRejection(
                "sensitive_content",
                gettext("Refused: %(field)s %(reason)s; secrets are never stored.")
                % {"field": field, "reason": _looks_like(kind)},
            )


def _strings(value, field: str, out: list[tuple[str, str]]) -> None:
    """Every string of a JSON value with the name of its field; an object key is named by its position
    (a key that is a secret must not appear in the message)."""
    if isinstance(value, str):
        out.append((field, value))
    elif isinstance(value, dict):
        for number, (key, item) in enumerate(value.items()):
            if isinstance(key, str):
                out.append(
                    (
                        gettext("the key #%(number)d of %(field)s") % {"number": number + 1, "field": field},
                        key,
                    )
                )
            _strings(item, f"{field}.{key}", out)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _strings(item, f"{field}[{index}]", out)


def check_rate_limit(org, session_id: str, *, batch: dict[str, int] | None = None) -> int:
    """Seed 000's rate limit for automatic extraction: at most MEMORY_MAX_EXTRACTIONS per session per 24 h.

    Counts the items with source=auto created in the session in the last 24 hours and returns that
    count; raises GateRejection("rate_limited") when the limit is reached. No session, no limit.
    batch: a batch's running count per session: the stored items are counted once, then every item the
    batch lets through adds one (they are not stored yet when the next one is checked).
    """
    if not session_id:
        return 0
    if batch is not None and session_id in batch:
        used = batch[session_id]
    else:
        used = _auto_created_today(org, session_id)
    if used >= settings.MEMORY_MAX_EXTRACTIONS:
        raise GateRejection(
            "rate_limited",
            gettext(
                "This session already gave its automatic extractions for the last 24 hours (limit %(limit)d,"
                " set by MEMORY_MAX_EXTRACTIONS)."
            )
            % {"limit": settings.MEMORY_MAX_EXTRACTIONS},
        )
    if batch is not None:
        batch[session_id] = used + 1
    return used


def _auto_created_today(org, session_id: str) -> int:
    from django.utils import timezone

    from memory.models import MemoryItem, Source

    since = timezone.now() - timedelta(hours=24)
    return MemoryItem.objects.filter(
        org=org, session_id=session_id, source=Source.AUTO, created_at__gte=since
    ).count()


def check(content: str, confidence: float = 1.0) -> None:
    """Seed 000's order: confidence, sensitive content, length. Raises GateRejection."""
    check_confidence(confidence)
    check_sensitive(content)
    check_length(content)
