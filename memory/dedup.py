"""Beyond cosine: hard differences that veto merging two similar texts.

Embeddings put "I live in Beijing" and "I live in Shanghai", "two cats" and "three cats", "likes
coffee" and "does not like coffee" very close; a merge would lose a fact. Measured on
bench/data/dedup_pairs.jsonl (see bench/dedup_calibration.py), a merge is vetoed when the two texts
disagree on:

- numbers, after normalising Chinese and English number words ("十二" = "twelve" = 12, "五千" = 5000,
  "5,000" = 5000) and month names ("May 20" = "5 月 20 日");
- weekdays ("周五" = "Friday");
- polarity: negation markers and negative verbs ("不", "没", "not", "dislikes", "讨厌") on one side only;
- a change marker on one side only ("now prefers", "switched to", "no longer", "现在更", "换成", "改到");
- names: each side has a capitalised name / Latin-script product name the other lacks ("Google" vs
  "Microsoft"), or, between two Chinese texts, a place, organisation or person name from a short list.

Which texts are "cross-lingual" (one Chinese, one not) matters too: the local model scores
translations lower than same-language paraphrases, so they get their own threshold (thresholds.py).
"""

from __future__ import annotations

import re

from core.text import CJK, has_cjk

# ---- numbers ----------------------------------------------------------------------------------------

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
# Words that contain a numeral character but are not numbers.
_CN_NOT_NUMBERS = re.compile(
    r"一般|一直|一起|一下|一些|一定|一样|统一|一旦|一向|唯一|万一|一切|一致|一边|一家|一个人|一点点|"
    r"星期[一二三四五六日天]|周[一二三四五六日天]|礼拜[一二三四五六日天]|千万|百分之|十分|万分|一会"
)
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
_EN_NUMBERS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "thousand": 1000, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "twice": 2, "once": 1, "single": 1, "double": 2,
    "a dozen": 12, "dozen": 12,
}  # fmt: skip
_EN_NUMBER = re.compile(r"\b(" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")\b", re.I)
_MONTHS = {
    m.capitalize(): i + 1
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")]
    )
    for m in names
}  # fmt: skip
# A capitalised month name only next to a day number ("May 20", "20 May"): "may" the verb is left alone.
_MONTH_DATE = re.compile(
    r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b"
    r"|\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b"
)
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*(?::\d{2})?")


def _cn_value(text: str) -> int | None:
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
            if unit == 10000:
                total += (section + (digit or 0)) * unit
                section = 0
            else:
                section += (1 if digit is None else digit) * unit
            digit = None
    return total + section + (digit or 0)


def numbers(text: str) -> set[str]:
    """Every number in the text as a canonical string (Chinese numerals and English words included)."""
    text = _CN_NOT_NUMBERS.sub(" ", text)
    found: set[str] = set()

    def month(match: re.Match) -> str:
        name = match.group(1) or match.group(4)
        day = match.group(2) or match.group(3)
        found.update({str(_MONTHS[name]), str(int(day))})
        return " "

    text = _MONTH_DATE.sub(month, text)
    for match in _DIGITS.finditer(text):
        value = match.group()
        if ":" in value:
            hours, minutes = value.split(":")
            found.add(str(int(hours)) if minutes == "00" else f"{int(hours)}:{minutes}")
            continue
        value = value.replace(",", "")
        found.add(value.rstrip("0").rstrip(".") if "." in value else str(int(value)))
    for match in _CN_NUMBER.finditer(text):
        value = _cn_value(match.group())
        if value is not None:
            found.add(str(value))
    for match in _EN_NUMBER.finditer(text):
        found.add(str(_EN_NUMBERS[match.group().lower()]))
    return found


# ---- weekdays -----------------------------------------------------------------------------------------

_WEEKDAYS = {
    "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7,
    "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6, "sun": 7,
}  # fmt: skip
_CN_WEEKDAY = re.compile(r"(?:星期|周|礼拜)([一二三四五六日天])")
_EN_WEEKDAY = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r")s?\b", re.I)


def weekdays(text: str) -> set[int]:
    days = {"一二三四五六日天".index(m) + 1 for m in _CN_WEEKDAY.findall(text)}
    days = {7 if d == 8 else d for d in days}
    days |= {_WEEKDAYS[m.lower()] for m in _EN_WEEKDAY.findall(text)}
    return days


# ---- polarity and change --------------------------------------------------------------------------------

_EN_NEG = re.compile(
    r"\b(?:not|no|never|none|nor|without|don't|doesn't|didn't|isn't|aren't|wasn't|won't|can't|cannot|"
    r"dislikes?|disliked|hates?|hated|avoids?|refuses?)\b|n't\b",
    re.I,
)
_CN_NOT_NEG = re.compile(
    r"而不是|而非|不少|不同|不断|不错|不仅|不过|不久|不管|不但|非常|无论|特别|区别|分别|别人|级别|类别|并非|不单"
)
_CN_NEG = re.compile(r"不|没|别|无|非|勿|讨厌|厌恶|拒绝|避免|未")


def polarity(text: str) -> int:
    """Parity of negations: 1 when the text says something is not so."""
    count = len(_EN_NEG.findall(text))
    count += len(_CN_NEG.findall(_CN_NOT_NEG.sub(" ", text)))
    return count % 2


_CHANGE = re.compile(
    r"(?<!right )\bnow\b|\bswitched\b|\bmoved\b|\bchanged\b|\bno longer\b|\banymore\b|\bany more\b|"
    r"\bnowadays\b|\bthese days\b|现在|如今|换成|换了|改到|改成|改为|改用|不再|已经不|转而",
    re.I,
)


def changed(text: str) -> bool:
    return bool(_CHANGE.search(text))


# ---- names ------------------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+#-]*[A-Za-z0-9+#]|[A-Za-z]")
# Capitalised words that are not names (sentence starts, the subject, acronyms everyone shares).
_COMMON = frozenset(
    """the a an this that these those we our they their he she his her it its i my you your user user's users
    every each all some any on in at for of to by with from and or but if when while after before since
    code rent logs log release password prefers prefer likes like loves enjoys wants has have is are was
    team project projects api apis meeting standup budget customer supplier please remember note always
    usually often never sometimes currently today tomorrow yesterday now also mostly""".split()
)

# Chinese names the local model cannot tell apart, with their Latin spelling for cross-lingual pairs.
_CN_GAZETTEER = {
    "北京": "beijing", "上海": "shanghai", "广州": "guangzhou", "深圳": "shenzhen", "杭州": "hangzhou",
    "南京": "nanjing", "成都": "chengdu", "重庆": "chongqing", "武汉": "wuhan", "西安": "xian",
    "天津": "tianjin", "苏州": "suzhou", "长沙": "changsha", "厦门": "xiamen", "青岛": "qingdao",
    "大连": "dalian", "香港": "hong kong", "澳门": "macau", "台北": "taipei", "日本": "japan",
    "韩国": "korea", "美国": "usa", "英国": "uk", "法国": "france", "德国": "germany", "意大利": "italy",
    "西班牙": "spain", "加拿大": "canada", "澳大利亚": "australia", "新加坡": "singapore", "泰国": "thailand",
    "俄罗斯": "russia", "印度": "india", "阿里巴巴": "alibaba", "阿里": "alibaba", "腾讯": "tencent",
    "百度": "baidu", "字节": "bytedance", "华为": "huawei", "小米": "xiaomi", "京东": "jd", "美团": "meituan",
    "网易": "netease", "金蝶": "kingdee", "用友": "yonyou", "苹果": "apple", "微软": "microsoft",
    "谷歌": "google", "亚马逊": "amazon", "特斯拉": "tesla", "腾讯云": "tencent cloud", "阿里云": "alibaba cloud",
    "华为云": "huawei cloud",
}  # fmt: skip
_CN_NAMES = re.compile(
    "|".join(sorted(_CN_GAZETTEER, key=len, reverse=True))
    # person names: a common surname and one or two given-name characters before a role or verb
    + r"|(?:张|王|李|刘|陈|杨|赵|黄|吴|徐|孙|胡|朱|高|林|何|郭|马|罗|梁|宋|郑|谢|韩|唐|冯|于|董|萧|程)"
    f"[{CJK}]{{1,2}}(?=是|在|的|负责|担任|说|和|与|，|,|。|$)"
)


def names(text: str, *, latin: bool = False) -> set[str]:
    """Names in the text; latin=True spells the Chinese ones in Latin letters (for cross-lingual pairs)."""
    out = set()
    for word in _WORD.findall(text):
        if any(c.isupper() for c in word) and word.lower().removesuffix("'s") not in _COMMON:
            out.add(word.lower())
    for name in _CN_NAMES.findall(text):
        if not latin:
            out.add(name)
        elif name in _CN_GAZETTEER:
            out.add(_CN_GAZETTEER[name])
    return out


# ---- the decision -----------------------------------------------------------------------------------------


def is_cross_lingual(a: str, b: str) -> bool:
    """One text Chinese, the other not."""
    return has_cjk(a) != has_cjk(b)


def differs_materially(a: str, b: str) -> bool:
    """True when the two texts disagree on numbers, weekdays, polarity, a change, or names."""
    na, nb = numbers(a), numbers(b)
    if na and nb and na != nb:
        return True
    wa, wb = weekdays(a), weekdays(b)
    if wa and wb and wa != wb:
        return True
    if polarity(a) != polarity(b):
        return True
    if changed(a) != changed(b):
        return True
    cross = is_cross_lingual(a, b)
    names_a, names_b = names(a, latin=cross), names(b, latin=cross)
    return bool(names_a - names_b) and bool(names_b - names_a)
