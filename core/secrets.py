"""Secret detection and redaction: API keys and tokens, stated passwords and PINs, one-time codes, ID, card,
IBAN and passport numbers, private keys, connection strings with credentials, wallet seed phrases. Used by
the memory gate (a secret is never a memory) and wherever text is kept as it was said (messages,
checkpoints, summaries), which keeps it with each secret replaced by [redacted].

The text is read normalised (core.secret_text: NFKC, zero-width characters dropped, look-alike letters
mapped to Latin, %xx decoded), runs of base64 are read decoded, and a provider key split by one space or
line break is read rejoined. Spans are always reported on the text as it was written. detect-secrets'
provider patterns are the base; the rules about stated secrets (in Chinese, English and Japanese) and the
look-alike exceptions ("the API key is in the vault", "密码策略", order numbers that fail Luhn) are ours.
"""

from __future__ import annotations

import re

from detect_secrets.plugins import (
    aws,
    azure_storage_key,
    discord,
    github_token,
    gitlab_token,
    mailchimp,
    npm,
    openai,
    private_key,
    pypi_token,
    sendgrid,
    slack,
    square_oauth,
    stripe,
    telegram_token,
    twilio,
)
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.keyword import DENYLIST

from core.secret_text import base64_runs, normalise
from core.seed_phrases import seed_phrase_spans

_KEY_CHARS = r"[A-Za-z0-9_-]"
_TOKEN_PATTERNS = [
    ("an API key", re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a bearer token", re.compile(r"\bbearer\s+[A-Za-z0-9._~+/=-]{16,}", re.I)),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an API key", re.compile(r"\beng_[0-9a-f]{8}\.[A-Za-z0-9_-]{20,}")),
    ("a Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("a private key", re.compile(r"PuTTY-User-Key-File-\d|\bAGE-SECRET-KEY-1[0-9A-Z]{40,}")),
    ("a private key", re.compile(r"\bPrivateKey\s*=\s*[A-Za-z0-9+/]{42,43}=")),
    ("HTTP Basic credentials", re.compile(r"\b(?:Proxy-)?Authorization\s*:\s*Basic\s+[A-Za-z0-9+/]{8,}={0,2}", re.I)),
    ("HTTP Basic credentials", re.compile(r"(?:\s|^)(?:-u|--user)[ =]['\"]?[^\s:'\"$]+:[^\s'\"$]{3,}")),
    ("an SSH password", re.compile(r"\bsshpass\s+-p\s*['\"]?[^\s'\"$]{3,}")),
    # chat-bot webhooks: the key is in the URL
    ("a webhook URL with its key", re.compile(r"\boapi\.dingtalk\.com/robot/send\?access_token=[0-9A-Za-z]{16,}")),
    ("a webhook URL with its key", re.compile(r"\bqyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=[0-9A-Za-z-]{16,}")),
    ("a webhook URL with its key", re.compile(r"/open-apis/bot/v2/hook/[0-9A-Za-z-]{16,}")),
    ("a webhook URL with its key", re.compile(r"\bdiscord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{16,}")),
    ("a webhook URL with its key", re.compile(
        r"[?&](?:access_token|token|key|api_?key|apikey|secret|sig|signature|auth|password|pwd|passwd)="
        r"(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}", re.I)),
    # what redact() leaves where a secret was: a text that held one is no memory either
    ("a removed secret", re.compile(r"\[redacted\]")),
]  # fmt: skip

# detect-secrets' provider patterns (those that name a provider; its keyword, entropy, IP and loose
# "AP..." / "key" patterns are not used as such: on prose they refuse UUIDs, hashes and ordinary words).
_DS_PLUGINS = (
    aws.AWSKeyDetector,
    azure_storage_key.AzureStorageKeyDetector,
    discord.DiscordBotTokenDetector,
    github_token.GitHubTokenDetector,
    gitlab_token.GitLabTokenDetector,
    mailchimp.MailchimpDetector,
    npm.NpmDetector,
    openai.OpenAIDetector,
    private_key.PrivateKeyDetector,
    pypi_token.PypiTokenDetector,
    sendgrid.SendGridDetector,
    slack.SlackDetector,
    square_oauth.SquareOAuthDetector,
    stripe.StripeDetector,
    telegram_token.TelegramBotTokenDetector,
    twilio.TwilioKeyDetector,
)
_TOKEN_PATTERNS += [
    (f"a credential ({plugin.secret_type})", re.compile(pattern.pattern, pattern.flags))
    for plugin in _DS_PLUGINS
    for pattern in plugin.denylist
]

# A provider key split by one space or line break: the prefix, a part, the break, the rest.
_SPLIT_KEY = re.compile(
    r"(?<![A-Za-z0-9_-])((?:sk-|[rs]k_live_|gh[pousr]_|github_pat_|glpat-|hf_|xox[abprs]-|AKIA|ASIA|AIza)"
    r"[A-Za-z0-9_-]*)[ \t]?\n?[ \t]?([A-Za-z0-9_-]{4,})"
)
_URL_CREDENTIALS = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]+:(\S+?)@(?=[A-Za-z0-9.-]+(?:[:/?\s]|$))"
)

# ---- stated secrets --------------------------------------------------------------------------------
# Keyword kinds: what follows must look like that kind of value.
_PASSWORD_WORDS = (
    r"password|passwd|passcode|pwd|pw|pass|contrase[ñn]a|master password|"
    r"密码|密碼|口令|パスワード|暗証番号|暗证号码"
)
_PIN_WORDS = r"pin(?:[ \t]*(?:code|码|碼|number))?"
_KEY_WORDS = (
    r"api[ _-]?key|secret[ _-]?key|access[ _-]?token|auth[ _-]?token|token|secret|client[ _-]?secret|"
    r"access[ _-]?key[ _-]?secret|private[ _-]?key|密钥|秘钥|令牌|私钥|密鑰"
)
_PHRASE_WORDS = r"passphrase|pass phrase|口令短语|助记口令"
# detect-secrets' keyword list, with its affixes, for identifiers in code and config
# (AWS_SECRET_ACCESS_KEY=..., AccessKeySecret: ..., db_password = ...): strong connectors only.
_CODE_KEYWORD = r"[A-Za-z0-9_]*(?:" + "|".join(DENYLIST) + r")(?:[A-Za-z0-9_]*[A-Za-z0-9])?"

_BEFORE = r"(?<![A-Za-z0-9_])"
_STRONG = (
    r"(?:\s*(?::=|=>|[:=]|：)"
    r"|\s+(?:is|was)\b(?:\s+(?:literally\s+)?(?:the\s+(?:string|word|text|phrase|value)|set\s+to))?\s*[:：]?"
    r"|\s*(?:是|为|為|设为|设置为|改成|改为|は)\s*[:：]?)\s*"
)
# "the PIN for the Chase card is 5512", "password of my email is ..."
_GAP = r"(?:\s+(?:for|of|on|to|at|in)\s+[^\n.,;:=，。：]{1,25}?)?"
_QUOTE = r"[\"'“「‘`]?"
_VALUE = r"([^\s\"'”」’`,，。;；、)）]{1,80})"


def _stated(words: str, connector: str, flags=re.I) -> re.Pattern:
    return re.compile(rf"{_BEFORE}(?:{words})(?![A-Za-z]){_GAP}{connector}{_QUOTE}{_VALUE}", flags)


_STATED = [
    ("password", _stated(_PASSWORD_WORDS, _STRONG)),
    ("pin", _stated(_PIN_WORDS, _STRONG)),
    ("key", _stated(_KEY_WORDS, _STRONG)),
    ("key", re.compile(rf"{_BEFORE}{_CODE_KEYWORD}\s*(?::=|=>|[:=]|：)\s*{_QUOTE}{_VALUE}", re.I)),
    # no connector: "wifi password Ch3rry88", "支付密码 662914", "密码Wd1990"
    ("password weak", _stated(_PASSWORD_WORDS, r"(?:[ \t]+|(?<=[\u3040-\u30ff\u4e00-\u9fff])[ \t]*)")),
    ("pin weak", _stated(_PIN_WORDS, r"(?:[ \t]+|(?<=[码碼])[ \t]*)")),
    ("key weak", _stated(_KEY_WORDS, r"(?:[ \t]+|(?<=[\u4e00-\u9fff])[ \t]*)")),
]
_PASSPHRASE = re.compile(
    rf"{_BEFORE}(?:{_PHRASE_WORDS}){_GAP}{_STRONG}{_QUOTE}([^\n\"'”」’,;，。；]{{4,60}})", re.I
)
# "login for the admin is jsmith / Winter2024!", "credentials admin/Tp-Link9931"
_LOGIN_PAIR = re.compile(
    r"\b(?:login|log-in|credentials?|creds|username|user|account|acct)\b[^\n/]{0,40}?"
    r"[\s:：]([^\s/:：]{2,})[ \t]?/[ \t]?([^\s/,，。]{4,})",
    re.I,
)

# Words that make a stated "secret" really a discussion of one ("password policy", "密码策略",
# "the password is stored in a vault", "password is required").
_POLICY_WORDS = re.compile(
    r"^(?:policy|policies|strength|length|rules?|reset|manager|策略|强度|长度|规则|重置|管理|"
    r"required|requested|needed|optional|mandatory|missing|empty|wrong|incorrect|invalid|correct|"
    r"expired|expiring|changed|updated|rotated|reset|stored|saved|kept|hashed|encrypted|secret|"
    r"private|strong|weak|long|short|too|not|never|always|only|also|still|the|a|an|in|on|at|"
    r"managed|shared|sent|set|case|different|same|unknown|protected|必填|必须|错误|过期|加密|保存|"
    r"for|to|of|with|from|by|and|or|must|should|will|can|has|had|being|been|here|there|this|that|"
    r"hidden|masked|redacted|none|null|n/a|tbd|todo|strict|disabled|enabled|blank|same)$",
    re.I,
)
# A Chinese or Japanese value that is a clause about the secret ("密码：首次登录时设置", "密码已重置").
_CJK_CLAUSE = re.compile(
    r"^(?:待|已|未|不|没|要|需|须|必|应|在|由|请|可|会|被|太|很|过|首次|初始|默认|空|忘|错|正确|相同|一样|统一|随机|自动|"
    r"什么|多少|哪|几|怎|如何|啥|"
    r"和|与|或|都|也|还|就|是|的|了|吗|呢|を|が|の|に|で|と|も)"
)
_PLACEHOLDER = re.compile(
    r"^(?:[<{\[($%]|\$\{|your[_-]|<)|(?:[_-]here|[_-]placeholder)$|\*{3,}|•{3,}|x{4,}|X{4,}|\.{3}|…", re.I
)
_CODE_REF = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:[\[(].*)?$|^[A-Za-z_]\w*[\[(]")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_ENTROPY = Base64HighEntropyString()


def _is_plain_word(value: str) -> bool:
    """A stated value that is an ordinary word about the secret, not the secret itself."""
    return bool(_POLICY_WORDS.match(value) or _POLICY_WORDS.match(value.rstrip(".!?")))


def _not_a_value(value: str) -> bool:
    """Placeholders, masks, references to where the secret lives, words about it."""
    return bool(
        _is_plain_word(value)
        or _PLACEHOLDER.search(value)
        or _CODE_REF.match(value)
        or _CJK_CLAUSE.match(value)
        or value.lower().startswith(("http://", "https://"))
    )


def _looks_stated(kind: str, value: str) -> bool:
    if _not_a_value(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    if kind == "pin":
        return 4 <= len(value) <= 12 and has_digit
    if kind == "key":
        mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
        return len(value) >= 8 and value.isascii() and (has_digit or mixed) and not value.isdigit()
    if kind == "password":
        return len(value) >= 4
    # no connector: the value itself must look like one (ASCII, with a digit, not a year)
    if not (value.isascii() and has_digit and len(value) >= 4) or _YEAR.match(value):
        return False
    if kind == "key weak":
        return len(value) >= 16 and _ENTROPY.calculate_shannon_entropy(value) >= 3.0
    if kind == "pin weak":
        return len(value) <= 12
    return True


def _password_keyword_is_loose(match: re.Match) -> bool:
    """ "pass" and "pw" are ordinary words too ("boarding pass: gate B"): they need a value with a digit."""
    keyword = match.group(0)[: match.start(1) - match.start(0)].strip().lower()
    return keyword.startswith(("pass ", "pass:", "pass=", "pw ", "pw:", "pw=")) or keyword in ("pass", "pw")


# ---- numbers ---------------------------------------------------------------------------------------
_OTP = re.compile(
    r"(?:验证码|校验码|动态码|动态口令|短信码|登录码|安全码|确认码|one[- ]time (?:code|password|passcode)|otp|"
    r"(?:verification|login|log-in|sign[- ]in|2fa|mfa|security|access|auth(?:entication)?|confirmation) code)"
    r"[^\d\n.;。]{0,20}?(\d{4,8})(?!\d)",
    re.I,
)
_CODE_TO_VERIFY = re.compile(
    r"\bcode\s*:?\s*(\d{4,8})\b(?=[^\n.]{0,30}\b(?:verify|log ?in|sign ?in|confirm))", re.I
)
_SSN = re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")
_SSN_STATED = re.compile(
    r"\b(?:ssn|social security(?: number| no\.?)?|social)\b[#:：=\s]*(?:is\s*:?\s*)?"
    r"((?!000|666|9\d\d)\d{3}[ ]?(?!00)\d{2}[ ]?(?!0000)\d{4})(?!\d)",
    re.I,
)
_PASSPORT = re.compile(
    r"(?:passport|护照)(?:\s*(?:no\.?|number|号码?|号))?\s*(?:is|:|：|是)?\s*([A-Z]{1,2}\d{6,9})", re.I
)
_DIGIT_RUN = re.compile(r"(?<![\dA-Za-z])\d(?:[ -]?\d){12,18}(?![\dA-Za-z])")
_DOTTED_CARD = re.compile(r"(?<![\d.])\d{4}\.\d{4,6}\.\d{4,5}(?:\.\d{1,4})?(?![\d.])")
_CN_ID = re.compile(r"(?<!\d)(\d{17}[\dXx])(?!\d)")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


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


def iban_ok(compact: str) -> bool:
    """ISO 13616 check digits (mod 97 == 1)."""
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _looks_random(token: str) -> bool:
    """Not a placeholder like ghp_XXXXXXXXXXXXXXXX or AKIAXXXXXXXXXXXXXXXX."""
    return len(set(token)) >= 8


# ---- the detector ----------------------------------------------------------------------------------


def _spans(text: str):
    """(start, end, label) of each secret in already-normalised text."""
    for label, pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            if _looks_random(match.group()) or label == "a removed secret":
                yield match.start(), match.end(), label
    for match in _URL_CREDENTIALS.finditer(text):
        if not _not_a_value(match.group(1)) and match.group(1).lower() not in ("password", "pass", "pwd"):
            yield match.start(), match.end(), "a connection string with a password"
    for kind, pattern in _STATED:
        for match in pattern.finditer(text):
            value = match.group(1)
            if _looks_stated(kind, value) and (
                not _password_keyword_is_loose(match) or any(c.isdigit() for c in value)
            ):
                yield match.start(1), match.end(1), "a password or secret"
    for match in _PASSPHRASE.finditer(text):
        if not _not_a_value(match.group(1).split()[0] if match.group(1).split() else ""):
            yield match.start(1), match.end(1), "a password or secret"
    for match in _LOGIN_PAIR.finditer(text):
        secret = match.group(2)
        if (
            not _not_a_value(secret)
            and any(not c.isalpha() for c in secret)
            and not (secret.isdigit() and match.group(1).isdigit())  # 2023/2024, 3/4: numbers, not a login
            and "://" not in match.group(0)
        ):
            yield match.start(1), match.end(2), "a login and password"
    for pattern in (_OTP, _CODE_TO_VERIFY):
        for match in pattern.finditer(text):
            yield match.start(1), match.end(1), "a one-time code"
    for match in _SSN.finditer(text):
        yield match.start(), match.end(), "a social security number"
    for match in _SSN_STATED.finditer(text):
        yield match.start(1), match.end(1), "a social security number"
    for match in _PASSPORT.finditer(text):
        yield match.start(1), match.end(1), "a passport number"
    for match in _CN_ID.finditer(text):
        if cn_id_ok(match.group(1)):
            yield match.start(1), match.end(1), "a resident ID number"
    for pattern in (_DIGIT_RUN, _DOTTED_CARD):
        for match in pattern.finditer(text):
            digits = re.sub(r"\D", "", match.group())
            if 13 <= len(digits) <= 19 and luhn_ok(digits):
                yield match.start(), match.end(), "a card or bank account number"
    for match in _IBAN.finditer(text):
        compact = match.group().replace(" ", "")
        if any(iban_ok(compact[:n]) for n in range(len(compact), 14, -1)):
            yield match.start(), match.end(), "an IBAN"
    for start, end in seed_phrase_spans(text):
        yield start, end, "a wallet seed phrase"


def _split_key_spans(text: str):
    """A provider key written in two parts (a space or line break inside): read rejoined."""
    for match in _SPLIT_KEY.finditer(text):
        joined = match.group(1) + match.group(2)
        if not any(c.isdigit() for c in joined[4:]) or any(
            p.match(match.group(1)) for _l, p in _TOKEN_PATTERNS
        ):
            continue  # no key, or a whole key already (what follows it is the next word)
        for label, pattern in _TOKEN_PATTERNS:
            found = pattern.match(joined)
            if found and found.end() > len(match.group(1)) and _looks_random(found.group()):
                yield match.start(), match.end(), label
                break


def _encoded_spans(text: str):
    """Runs of base64 whose decoded text holds a secret; an Authorization: Basic user:password."""
    for start, end, decoded in base64_runs(text):
        for _s, _e, label in _spans(decoded):
            yield start, end, f"{label} (base64-encoded)"
            break


def secret_spans(text: str):
    """Yield (start, end, label) of each secret, on the text as written, strongest kinds first."""
    norm = normalise(text)
    for finder in (_spans, _split_key_spans, _encoded_spans):
        for start, end, label in finder(norm.text):
            yield (*norm.original_span(start, end), label)


def secret_kind(text: str) -> str | None:
    """The kind of the first secret in the text ("an API key"), or None. Talk *about* secrets is fine."""
    for _start, _end, label in secret_spans(text):
        return label
    return None


def sensitive_reason(text: str) -> str | None:
    """What kind of secret the text contains ("looks like an API key"), or None."""
    kind = secret_kind(text)
    return f"looks like {kind}" if kind else None


def redact(text: str) -> str:
    """The text with every secret replaced by [redacted], for conversation history kept as it was said."""
    merged: list[list[int]] = []
    for start, end in sorted({(start, end) for start, end, _label in secret_spans(text)}):
        if merged and start <= merged[-1][1]:  # overlaps or touches one already cut: one cut
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, last = [], 0
    for start, end in merged:
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
