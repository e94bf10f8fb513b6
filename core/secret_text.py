"""The text the secret detector reads: normalised, with a map back to the text as it was written.

A key hidden behind a zero-width space, written with a Cyrillic "ѕ", in full-width letters or
URL-encoded (%73%6B...) is still a key. `normalise` folds all of those into plain text and keeps, for every
character it produces, the span of the original text it came from, so redaction cuts the original at the
right place. `base64_runs` finds runs that decode to printable text (a key in base64 is still a key).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

# Letters from other scripts that read as Latin ones: the ones a key or a keyword can be spelt with.
_CONFUSABLES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W",
    # Greek
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}  # fmt: skip
_FOLDED: dict[str, str] = {}
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _fold(ch: str) -> str:
    """One non-ASCII character as the detector reads it: format characters (zero-width, BOM) dropped,
    look-alike letters mapped to Latin, the rest NFKC (full-width forms, ligatures, compatibility digits)."""
    folded = _FOLDED.get(ch)
    if folded is None:
        if unicodedata.category(ch) == "Cf":
            folded = ""
        else:
            folded = "".join(
                _CONFUSABLES.get(c, c) for c in unicodedata.normalize("NFKC", _CONFUSABLES.get(ch, ch))
            )
        if len(_FOLDED) < 20000:
            _FOLDED[ch] = folded
    return folded


@dataclass(frozen=True)
class Normalised:
    """The normalised text, and for each of its characters the [start, end) of the original it came from
    (None when the text needed no change: positions are the same)."""

    text: str
    starts: list[int] | None = None
    ends: list[int] | None = None

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        if self.starts is None or self.ends is None:
            return start, end
        if start >= end:
            return self.starts[start], self.starts[start]
        return self.starts[start], self.ends[end - 1]


def normalise(text: str) -> Normalised:
    """NFKC, format characters removed, confusables mapped to Latin, %xx sequences decoded (UTF-8)."""
    if text.isascii() and "%" not in text:
        return Normalised(text)
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "%":
            run = _PERCENT_RUN.match(text, i)
            if run:
                try:
                    decoded = unquote_to_bytes(run.group()).decode("utf-8")
                except UnicodeDecodeError:
                    decoded = None
                if decoded is not None:
                    for c in decoded:
                        out.append(c)
                        starts.append(i)
                        ends.append(run.end())
                    i = run.end()
                    continue
        folded = ch if ch < "\x80" else _fold(ch)
        for c in folded:
            out.append(c)
            starts.append(i)
            ends.append(i + 1)
        i += 1
    joined = "".join(out)
    if joined == text:
        return Normalised(text)
    return Normalised(joined, starts, ends)


_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX_ONLY = re.compile(r"[0-9a-fA-F-]+")


def decode_base64(run: str) -> str | None:
    """The text a base64 (or URL-safe base64) run decodes to, if it is printable text; else None."""
    if _HEX_ONLY.fullmatch(run):
        return None  # hashes and ids: hex, not base64 text
    body = run.rstrip("=")
    body += "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(body, altchars=b"-_" if ("-" in body or "_" in body) else None, validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if len(decoded) < 6 or not all(c.isprintable() or c in "\n\r\t" for c in decoded):
        return None
    return decoded


def base64_runs(text: str):
    """Yield (start, end, decoded) for each run of the text that decodes from base64 to printable text."""
    for match in _BASE64_RUN.finditer(text):
        decoded = decode_base64(match.group())
        if decoded is not None:
            yield match.start(), match.end(), decoded
