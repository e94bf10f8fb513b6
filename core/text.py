"""Text helpers for every layer: the one definition of a CJK character, hashing, keyword tokens, token
estimates."""

import functools
import hashlib
import itertools
import re
import unicodedata

# CJK unified ideographs, extension A and the compatibility block: what counts as a Chinese character
# everywhere (keyword tokens, token estimates, language guesses, dedup, extraction rules).
CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{CJK}]")
_STOP = frozenset(
    "a an the is are was were be been of to in on at for and or but with by as it its this that these those "
    "i me my we our you your he she they them his her their what which who whom when where why how do does did "
    "have has had not no so if then than there here from about into over under can could would should will shall "
    # what is left of a contraction or a possessive ("what's", "friend's", "I'm", "didn't", "we'll"): as words
    # they matched any memory with a possessive in it
    "s t d m ll re ve doesn didn isn aren wasn weren".split()
)


@functools.cache
def _to_simplified():
    from opencc import OpenCC

    return OpenCC("t2s")


def simplified(text: str) -> str:
    """The text with traditional Chinese characters in their simplified forms ("我在台中開早餐店" → "我在台中开早餐店");
    any other text as it is. The extraction rules read Chinese in simplified characters, so a user who types
    traditional ones is read as well (OpenCC's character and phrase tables, t2s)."""
    if not has_cjk(text):
        return text
    return _to_simplified().convert(text)


# Written Cantonese: characters Mandarin does not use. A text with one of them is read as Cantonese.
_CANTONESE = re.compile(r"[喺嘅咗唔冇啲嗰哋嚟嘢噉啱攞睇揾搵畀]|佢|係咪|屋企|返工|鍾意|钟意")
# Its common words in Mandarin, longest first within a line; each applies only to a Cantonese text.
_CANTONESE_WORDS = (
    ("喺度", "在"),
    ("喺", "在"),
    ("嘅", "的"),
    ("咗去", "到了"),
    ("咗", "了"),
    ("得唔得", "可以吗"),
    ("好唔好", "好不好"),
    ("唔使", "不用"),
    ("唔駛", "不用"),
    ("唔係", "不是"),
    ("唔識", "不会"),
    ("唔识", "不会"),
    ("唔掂", "不碰"),
    ("唔該", "谢谢"),
    ("唔该", "谢谢"),
    ("係咪", "是不是"),
    ("佢哋", "他们"),
    ("我哋", "我们"),
    ("你哋", "你们"),
    ("佢", "他"),
    ("冇", "没有"),
    ("啲", "些"),
    ("呢個", "这个"),
    ("呢个", "这个"),
    ("呢度", "这里"),
    ("嗰度", "那里"),
    ("嗰頭", "那边"),
    ("嗰头", "那边"),
    ("嗰", "那"),
    ("咁", "那么"),
    ("淨係", "只是"),
    ("净係", "只是"),
    ("净系", "只是"),
    ("攰", "累"),
    ("揸", "开"),
    ("㗎", ""),
    ("喎", ""),
    ("囉", ""),
    ("啩", ""),
    ("嚟", "来"),
    ("乜嘢", "什么"),
    ("嘢", "东西"),
    ("點樣", "怎样"),
    ("點解", "为什么"),
    ("邊度", "哪里"),
    ("邊個", "谁"),
    ("幾多", "多少"),
    ("屋企", "家里"),
    ("返工", "上班"),
    ("放工", "下班"),
    ("鍾意", "喜欢"),
    ("鐘意", "喜欢"),
    ("钟意", "喜欢"),
    ("啱啱", "刚刚"),
    ("而家", "现在"),
    ("宜家", "现在"),
    ("尋日", "昨天"),
    ("琴日", "昨天"),
    ("聽日", "明天"),
    ("噉", "这样"),
    ("睇", "看"),
    ("攞", "拿"),
    ("揾", "找"),
    ("搵", "找"),
    ("畀", "给"),
    ("俾", "给"),
)
_CANTONESE_PATTERN = re.compile("|".join(re.escape(c) for c, _ in _CANTONESE_WORDS))
_CANTONESE_MAP = dict(_CANTONESE_WORDS)
# Words written like Mandarin ones, read as Cantonese only where Mandarin would not use them: 係 (is) outside
# 關係/聯係, 食 (eat) before what is eaten or after who eats, 同 (and) between people, 仲 (still) outside 仲裁,
# 湊 (look after) a child, 唔 (not) as "cannot" before 得 and "don't" where a request starts, 個 (my) after a
# person.
_CANTONESE_IN_PLACE = (
    # 唔好意思: sorry; 唔好: "don't" where a request starts, "not good" after what is not
    (re.compile(r"唔好意思"), "不好意思"),
    (re.compile(r"(?:(?<=^)|(?<=[，,。！!？?\s你請请]))唔好"), "不要"),
    (re.compile(r"唔好"), "不好"),
    (re.compile(r"唔(\S)得"), r"不能\1"),
    (re.compile(r"唔"), "不"),
    # 系 where a Cantonese text typed in simplified characters means 是
    (re.compile(r"(?<=[不我你他都就又即真还净也])系(?![统統列数數])"), "是"),
    (re.compile(r"(?<=[我你他])[個个](?=\s?[A-Za-z\u4e00-\u9fff])"), "的"),
    (re.compile(r"(?<![關关聯联干幹])係(?![數数統统列])"), "是"),
    (re.compile(r"(?<=[我你他要想會会不能始可])食|食(?=[不了飯饭辣素肉魚鱼早晚午])"), "吃"),
    (re.compile(r"(?<=[我你他])同(?![事學学意時时樣样])"), "和"),
    (re.compile(r"仲(?![裁夏介])"), "还"),
    (re.compile(r"湊(?=[仔女孩孫孙BbＢ])|(?<=helper )湊|(?<=helper)湊|(?<=[傭佣]人)湊|(?<=工人)湊"), "带"),
)


def mandarin(text: str) -> str:
    """Written Cantonese read as Mandarin ("我喺香港做 nurse，屋企養咗隻 corgi" → "我在香港做 nurse，家里養了隻
    corgi"): its common words and particles in their Mandarin forms, the rest as it is; any other text as it is.
    Run before simplified (whose tables turn 嗰 into an unrelated character), so the extraction rules, written
    for Mandarin, read a Cantonese speaker's self-description too."""
    if not _CANTONESE.search(text):
        return text
    text = _CANTONESE_PATTERN.sub(lambda m: _CANTONESE_MAP[m.group()], text)
    for pattern, word in _CANTONESE_IN_PLACE:
        text = pattern.sub(word, text)
    return text


def has_cjk(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


def cjk_count(text: str) -> int:
    return len(CJK_CHAR.findall(text))


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def content_hash(text: str) -> str:
    """Hash of the normalised text: case, width and runs of white space do not matter."""
    folded = re.sub(r"\s+", " ", normalize(text).lower())
    return hashlib.sha256(folded.encode()).hexdigest()


# Scripts written without spaces between words: Han (the CJK definition), kana, Thai, Lao, Khmer and
# Myanmar. Their runs are cut into overlapping character bigrams.
_SPACELESS = (
    CJK + r"\u3040-\u30ff\u31f0-\u31ff\u0e00-\u0eff\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f"
    r"\u1780-\u17ff\u19e0-\u19ff"
)
_HANGUL = r"\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
_SEGMENT = re.compile(f"([{_SPACELESS}]+)|([{_HANGUL}]+)|([^{_SPACELESS}{_HANGUL}]+)")
_NEEDS_SEGMENTS = re.compile(f"[{_SPACELESS}{_HANGUL}]")
_JOINERS = "-_."
_JOINER = re.compile(f"[{re.escape(_JOINERS)}]")
# In ASCII text (case-folded) the letters and numbers are a-z and 0-9, and there are no marks or
# pictographs: _patterns() finds the same words, only slower.
_ASCII_WORDS = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
# PostgreSQL refuses lexemes over 2047 bytes ("word is too long"); a longer token is stored as a hash.
MAX_TOKEN_CHARS = 100


def _char_classes(codes: list[int]) -> str:
    """An alternation of regex classes matching these code points: one for the BMP, one for the rest, since
    Python's re looks characters up in a table only for a class that stays in the BMP."""
    classes = []
    for part in ([c for c in codes if c <= 0xFFFF], [c for c in codes if c > 0xFFFF]):
        spans: list[list[int]] = []
        for code in part:
            if spans and spans[-1][1] == code - 1:
                spans[-1][1] = code
            else:
                spans.append([code, code])
        ranges = "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in spans)
        if ranges:
            classes.append(f"[{ranges}]")
    return "|".join(classes)


@functools.cache
def _patterns() -> tuple[re.Pattern, re.Pattern]:
    """(words, pictographs), from the Unicode categories; built once, lazily (the scan of the code points
    takes about a tenth of a second).

    A word starts with a letter or number (re's [^\\W_]) and goes on with letters, numbers and combining
    marks (Devanagari, Tamil and Thai vowel signs are marks); words joined by - _ . make one identifier.
    """
    marks, pictographs = [], []
    # Planes 0-3 and the variation selectors of plane 14: the others hold no marks or symbols.
    for code in itertools.chain(range(0x40000), range(0xE0100, 0xE01F0)):
        category = unicodedata.category(chr(code))
        if category[0] == "M":
            marks.append(code)
        elif category == "So":
            pictographs.append(code)
    word = rf"[^\W_](?:[^\W_]|{_char_classes(marks)})*"
    joined = f"{word}(?:[{re.escape(_JOINERS)}]{word})*"
    return re.compile(joined), re.compile(_char_classes(pictographs))


def _bounded(token: str) -> str:
    if len(token) <= MAX_TOKEN_CHARS:
        return token
    return "#" + hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _word_tokens(word: str, tokens: list[str]) -> None:
    """The tokens of one word without joiners: itself, or per script segment its words and bigrams."""
    if not _NEEDS_SEGMENTS.search(word):
        if word not in _STOP:
            tokens.append(_bounded(word))
        return
    for spaceless, hangul, other in _SEGMENT.findall(word):
        if spaceless:
            tokens.extend(CJK_CHAR.findall(spaceless))
            if len(spaceless) == 1 and not CJK_CHAR.match(spaceless):
                tokens.append(spaceless)
            tokens.extend(spaceless[i : i + 2] for i in range(len(spaceless) - 1))
        elif hangul:
            tokens.append(_bounded(hangul))
            if len(hangul) > 2:
                tokens.extend(hangul[i : i + 2] for i in range(len(hangul) - 1))
        elif _patterns()[0].match(other) and other not in _STOP:
            tokens.append(_bounded(other))


def keyword_tokens(text: str) -> list[str]:
    """Tokens for keyword search in any script; never an empty one, none over MAX_TOKEN_CHARS.

    The text is NFKC-normalised and case-folded. Words are runs of Unicode letters, numbers and the
    combining marks that follow them; identifiers like "edu-2291" are kept whole and also split;
    English stop words are dropped. Scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer,
    Myanmar) give overlapping character bigrams, and Chinese characters count alone too ("过敏" matches
    "对花生过敏"). Korean words are kept whole and also as syllable bigrams, so "커피" matches "커피를"
    (a particle is written onto its noun). Pictographs (emoji) are tokens of their own; a text with
    nothing else (punctuation only) gives its distinct characters, so it can still be found.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    tokens: list[str] = []
    ascii_only = text.isascii()
    words = _ASCII_WORDS if ascii_only else _patterns()[0]
    segmented = not ascii_only and _NEEDS_SEGMENTS.search(text) is not None
    for word in words.findall(text):
        if "-" in word or "." in word or "_" in word:
            if word not in _STOP:
                tokens.append(_bounded(word))
            for part in _JOINER.split(word):
                _word_tokens(part, tokens)
        elif segmented:
            _word_tokens(word, tokens)
        elif word not in _STOP:
            tokens.append(_bounded(word))
    if not ascii_only:
        tokens.extend(_patterns()[1].findall(text))
    if not tokens:
        tokens = sorted({c for c in text if not c.isspace() and unicodedata.category(c)[0] in "PS"})
    return tokens


def estimate_tokens(text: str) -> int:
    """A documented offline estimate of LLM tokens (no tokenizer download).

    CJK characters count one token each; other text counts one token per 4 characters
    (OpenAI's rule of thumb for English), rounded up. Errs slightly high, so a budget holds.
    """
    cjk = cjk_count(text)
    rest = len(text) - cjk
    return cjk + (rest + 3) // 4


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(value) -> tuple[str, str] | None:
    """The first key or string of a JSON value that PostgreSQL cannot store, as (path, character): a NUL
    (text and jsonb refuse it) or a lone surrogate (not UTF-8). The path reads like `memories[0].metadata.x`
    and the character like `\\u0000`, both safe to show. None when everything can be stored.

    A loop, not recursion: a body nested as deeply as the JSON parser allows must not overflow here."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            found = _UNSTORABLE.search(item)
            if found:
                return path, _escaped(found.group())
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                name = _UNSTORABLE.sub(lambda m: _escaped(m.group()), str(key)[:100])
                child_path = f"{path}.{name}" if path else name
                found = _UNSTORABLE.search(str(key))
                if found:
                    return child_path, _escaped(found.group())
                stack.append((child_path, child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def _escaped(char: str) -> str:
    return f"\\u{ord(char):04x}"
