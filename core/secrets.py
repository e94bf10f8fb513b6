"""Secret detection and redaction: API keys and tokens, stated passwords, one-time codes, ID, card and
passport numbers. Used by the memory gate (a secret is never a memory) and wherever text is kept as it
was said (messages, checkpoints, summaries), which keeps it with each secret replaced by [redacted]."""

from __future__ import annotations

import re

_TOKEN_PATTERNS = [
    ("an API key", re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a bearer token", re.compile(r"\bbearer\s+[A-Za-z0-9._~+/=-]{16,}", re.I)),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
    ("an API key", re.compile(r"\beng_[0-9a-f]{8}\.[A-Za-z0-9_-]{20,}")),
    # what redact() leaves where a secret was: a text that held one is no memory either
    ("a removed secret", re.compile(r"\[redacted\]")),
]

# "password: hunter2", "密码是 abc123", "my api key is XYZ..." — a secret stated as such.
_STATED_SECRET = re.compile(
    r"(?:password|passwd|passcode|pwd|api[ _-]?key|secret[ _-]?key|access[ _-]?token|auth[ _-]?token|token|"
    r"密码|口令|密钥|秘钥|令牌|私钥)"
    r"\s*(?:is|was|=|:|：|是|为|為|设为|设置为|改成|改为)\s*[\"'“「]?([^\s\"'”」,，。;；]{4,})",
    re.I,
)
_OTP = re.compile(
    r"(?:验证码|校验码|动态码|one[- ]time (?:code|password)|otp|verification code)\D{0,6}(\d{4,8})", re.I
)
_SSN = re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")
_PASSPORT = re.compile(
    r"(?:passport|护照)(?:\s*(?:no\.?|number|号码?|号))?\s*(?:is|:|：|是)?\s*([A-Z]{1,2}\d{6,9})", re.I
)
_DIGIT_RUN = re.compile(r"(?<![\dA-Za-z])\d(?:[ -]?\d){12,18}(?![\dA-Za-z])")
_CN_ID = re.compile(r"(?<!\d)(\d{17}[\dXx])(?!\d)")

# Words that make a stated "secret" really a discussion of one ("password policy", "密码策略",
# "the password is stored in a vault", "password is required").
_POLICY_WORDS = re.compile(
    r"^(?:policy|policies|strength|length|rules?|reset|manager|策略|强度|长度|规则|重置|管理|"
    r"required|requested|needed|optional|mandatory|missing|empty|wrong|incorrect|invalid|correct|"
    r"expired|expiring|changed|updated|rotated|reset|stored|saved|kept|hashed|encrypted|secret|"
    r"private|strong|weak|long|short|too|not|never|always|only|also|still|the|a|an|in|on|at|"
    r"managed|shared|sent|set|case|different|same|unknown|protected|必填|必须|错误|过期|加密|保存)$",
    re.I,
)


def _is_plain_word(value: str) -> bool:
    """A stated value that is an ordinary word about the secret, not the secret itself."""
    return bool(_POLICY_WORDS.match(value) or _POLICY_WORDS.match(value.rstrip(".!?")))


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


_ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
_ID_CHECK = "10X98765432"


def cn_id_ok(number: str) -> bool:
    number = number.upper()
    if not number[:17].isdigit():
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17]


def secret_spans(text: str):
    """Yield (start, end, label) of each secret in the text, strongest kinds first."""
    for label, pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            yield match.start(), match.end(), label
    for match in _STATED_SECRET.finditer(text):
        if not _is_plain_word(match.group(1)):
            yield match.start(1), match.end(1), "a password or secret"
    for match in _OTP.finditer(text):
        yield match.start(1), match.end(1), "a one-time code"
    for match in _SSN.finditer(text):
        yield match.start(), match.end(), "a social security number"
    for match in _PASSPORT.finditer(text):
        yield match.start(1), match.end(1), "a passport number"
    for match in _CN_ID.finditer(text):
        if cn_id_ok(match.group(1)):
            yield match.start(1), match.end(1), "a resident ID number"
    for match in _DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            yield match.start(), match.end(), "a card or bank account number"


def sensitive_reason(text: str) -> str | None:
    """What kind of secret the text contains, or None. Talk *about* secrets is fine."""
    for _start, _end, label in secret_spans(text):
        return f"looks like {label}"
    return None


def redact(text: str) -> str:
    """The text with every secret replaced by [redacted], for conversation history kept as it was said."""
    spans = sorted({(start, end) for start, end, _label in secret_spans(text)})
    out, last = [], 0
    for start, end in spans:
        if start < last:  # overlaps one already cut
            start = last
        if start >= end:
            continue
        out.append(text[last:start])
        out.append("[redacted]")
        last = end
    out.append(text[last:])
    return "".join(out)


def redact_json(value, *, keep: frozenset[str] = frozenset()):
    """A JSON value with every string redacted (see redact) at any depth, object keys included; the values
    of keys in `keep` stay. Two keys that redact alike stay apart ("[redacted]", "[redacted] (2)")."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple):
        return [redact_json(v, keep=keep) for v in value]
    if isinstance(value, dict):
        out: dict = {}
        for key, item in value.items():
            name = redact(key) if isinstance(key, str) else key
            n = 1
            while name in out:
                n += 1
                name = f"{redact(key)} ({n})"
            out[name] = item if key in keep else redact_json(item, keep=keep)
        return out
    return value
