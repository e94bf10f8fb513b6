"""Wallet seed phrases (BIP-39): 12 to 24 consecutive words of one of the standard word lists.

English: a run of at least 12 list words, separated only by spaces, punctuation or numbering ("1. word").
Chinese: 12 to 24 single characters of the list, either separated (spaces, commas), or written together
as one segment of exactly 12/15/18/21/24 characters whose BIP-39 checksum holds and in a text that speaks
of a wallet or a recovery phrase ("助记词", "钱包", "seed", ...). Ordinary Chinese text is made of the same
common characters, and the checksum is only 4 bits for 12 words: one clause of 12 common characters in 16
passes it ("主要为了周末带孩子出去玩" does), so a bare run needs both to count.
"""

from __future__ import annotations

import re

from mnemonic import Mnemonic

_MIN_WORDS = 12
_LENGTHS = (12, 15, 18, 21, 24)
_ENGLISH = frozenset(Mnemonic("english").wordlist)
_CHINESE = {lang: Mnemonic(lang) for lang in ("chinese_simplified", "chinese_traditional")}
_CHINESE_CHARS = frozenset(c for m in _CHINESE.values() for c in m.wordlist)

_WORD = re.compile(r"[A-Za-z]+")
_GAP = re.compile(r"[\s,;.:\-–—\"'()\d]*")
_CJK = "\u4e00-\u9fff"
_ZH_SEPARATED = re.compile(rf"(?<![{_CJK}])[{_CJK}](?![{_CJK}])(?:[\s,、]+[{_CJK}](?![{_CJK}])){{11,}}")
_ZH_TOGETHER = re.compile(rf"(?<![{_CJK}])[{_CJK}]{{12,24}}(?![{_CJK}])")
# What a text around a seed phrase written without separators says of it.
_WALLET_CONTEXT = re.compile(
    r"助记|钱包|种子|恢复词|私钥|密语|mnemonic|seed|wallet|recovery|backup\s+phrase|secret\s+phrase", re.I
)


def _english(text: str):
    count, start, end, last = 0, 0, 0, 0
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word in _ENGLISH and (count == 0 or _GAP.fullmatch(text, last, match.start())):
            if count == 0:
                start = match.start()
            count += 1
            end = match.end()
        else:
            if count >= _MIN_WORDS:
                yield start, end
            count = 1 if word in _ENGLISH else 0
            start, end = match.start(), match.end()
        last = match.end()
    if count >= _MIN_WORDS:
        yield start, end


def _checksum_ok(chars: str) -> bool:
    phrase = " ".join(chars)
    return any(m.check(phrase) for m in _CHINESE.values())


def _chinese(text: str):
    for match in _ZH_SEPARATED.finditer(text):
        chars = [c for c in match.group() if "\u4e00" <= c <= "\u9fff"]
        if sum(c in _CHINESE_CHARS for c in chars) >= _MIN_WORDS and all(c in _CHINESE_CHARS for c in chars):
            yield match.start(), match.end()
    if not _WALLET_CONTEXT.search(text):
        return
    for match in _ZH_TOGETHER.finditer(text):
        chars = match.group()
        if len(chars) in _LENGTHS and all(c in _CHINESE_CHARS for c in chars) and _checksum_ok(chars):
            yield match.start(), match.end()


def seed_phrase_spans(text: str):
    """Yield (start, end) of each seed phrase in the text."""
    if len(text) < _MIN_WORDS:  # twelve Chinese characters written together are the shortest
        return
    yield from _english(text)
    if any("\u4e00" <= c <= "\u9fff" for c in text):
        yield from _chinese(text)
