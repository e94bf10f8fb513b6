"""Beyond cosine: hard differences that veto merging two similar texts.

Embeddings put "I live in Beijing" and "I live in Shanghai" very close; a merge would lose a fact.
"""

import re

_NUM = re.compile(r"\d+(?:[.,:/-]\d+)*")
_NEG = re.compile(
    r"\b(?:not|no|never|don't|doesn't|didn't|isn't|aren't|won't|can't|dislikes?|hates?)\b|不|没|别|无|非|勿",
    re.I,
)
_CAP = re.compile(r"\b[A-Z][a-zA-Z]+\b")


def _numbers(text: str) -> set[str]:
    return set(_NUM.findall(text))


def _negated(text: str) -> bool:
    return bool(_NEG.search(text))


def differs_materially(a: str, b: str) -> bool:
    """True when the two texts disagree on numbers, negation or proper names."""
    if _numbers(a) != _numbers(b):
        return True
    if _negated(a) != _negated(b):
        return True
    caps_a, caps_b = set(_CAP.findall(a)), set(_CAP.findall(b))
    if caps_a and caps_b and caps_a != caps_b and not (caps_a & caps_b):
        return True
    return False
