"""Text helpers for every layer: the one definition of a CJK character, hashing, keyword tokens, token
estimates."""

import hashlib
import re
import unicodedata

# CJK unified ideographs, extension A and the compatibility block: what counts as a Chinese character
# everywhere (keyword tokens, token estimates, language guesses, dedup, extraction rules).
CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{CJK}]")
_CJK_RUN = re.compile(f"[{CJK}]+")
_WORD = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
_STOP = frozenset(
    "a an the is are was were be been of to in on at for and or but with by as it its this that these those "
    "i me my we our you your he she they them his her their what which who whom when where why how do does did "
    "have has had not no so if then than there here from about into over under can could would should will shall".split()
)


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


def keyword_tokens(text: str) -> list[str]:
    """Tokens for keyword search in any mix of Chinese and English.

    English: lower-cased words (identifiers like "edu-2291" are kept whole and also split),
    stop words dropped. Chinese has no spaces, so every run of CJK characters gives its
    single characters and its overlapping bigrams ("过敏" matches "对花生过敏").
    """
    text = normalize(text).lower()
    tokens: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        if word not in _STOP:
            tokens.append(word)
        if any(c in word for c in "-_."):
            tokens.extend(p for p in re.split(r"[-_.]", word) if p and p not in _STOP)
    for run in _CJK_RUN.findall(text):
        tokens.extend(run)
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def estimate_tokens(text: str) -> int:
    """A documented offline estimate of LLM tokens (no tokenizer download).

    CJK characters count one token each; other text counts one token per 4 characters
    (OpenAI's rule of thumb for English), rounded up. Errs slightly high, so a budget holds.
    """
    cjk = cjk_count(text)
    rest = len(text) - cjk
    return cjk + (rest + 3) // 4
