"""core.text.keyword_tokens: one Unicode method for every script (words, bigrams where there are no spaces,
Korean words and bigrams), never an empty token, none too long for PostgreSQL."""

import pytest

from core.text import MAX_TOKEN_CHARS, keyword_tokens
from memory.search.ranking import MAX_QUERY_TERMS, query_terms

TABLE = [
    # (script, text, tokens that must be there, tokens that must not)
    ("english", "The user's id is EDU-2291", ["user", "edu-2291", "edu", "2291"], ["the", "is"]),
    ("chinese", "对花生过敏", ["对", "花", "过敏", "花生", "生过"], []),
    ("cyrillic", "Пользователь любит КОФЕ", ["пользователь", "любит", "кофе"], []),
    ("greek", "Ο χρήστης αγαπά τον καφέ", ["χρήστησ", "αγαπά", "καφέ"], []),  # final sigma folds to σ
    ("arabic", "المستخدم يحب القهوة", ["المستخدم", "يحب", "القهوة"], []),
    ("hebrew", "המשתמש אוהב קפה", ["המשתמש", "אוהב", "קפה"], []),
    ("korean", "사용자는 커피를 좋아한다", ["사용자는", "커피를", "커피", "피를", "좋아한다"], []),
    ("thai", "ผู้ใช้ชอบกาแฟ", ["กา", "าแ", "แฟ", "ชอ"], ["ผู้ใช้ชอบกาแฟ"]),
    ("hindi", "उपयोगकर्ता को कॉफ़ी पसंद है", ["उपयोगकर्ता", "कॉफ़ी", "पसंद"], ["क", "फ"]),  # vowel signs stay
    ("tamil", "பயனர் காபியை விரும்புகிறார்", ["பயனர்", "காபியை", "விரும்புகிறார்"], ["ப", "ர"]),
    ("japanese", "ユーザーはコーヒーが好きです", ["コー", "ーヒ", "ヒー", "好", "好き"], []),
    ("lao", "ຂ້ອຍມັກກາເຟ", ["ກາ", "ເຟ"], []),
    ("khmer", "ខ្ញុំចូលចិត្តកាហ្វេ", ["កា"], []),
    ("myanmar", "ကော်ဖီကြိုက်တယ်", ["ဖီ"], []),
    ("emoji only", "☕🍰 ❤️", ["☕", "🍰", "❤"], ["\ufe0f"]),
    ("emoji in words", "I love ☕", ["love", "☕"], []),
    ("punctuation only", "?!?! …", ["?", "!", "."], []),
    ("full width", "ＡＢＣ１２３", ["abc123"], []),  # NFKC
    ("german", "STRASSE Straße", ["strasse"], ["straße"]),  # casefold
    ("accents", "café naïve", ["café", "naïve"], ["caf"]),
    # what is left of a contraction or a possessive is no word of its own
    (
        "contractions",
        "What's my friend's plan? I'm sure we'll see; didn't say",
        ["friend", "plan", "sure"],
        ["s", "m", "ll", "didn", "t"],
    ),
]


@pytest.mark.parametrize("script,text,wanted,unwanted", TABLE, ids=[row[0] for row in TABLE])
def test_it_tokenises_every_script(script, text, wanted, unwanted):
    tokens = keyword_tokens(text)
    assert tokens and all(tokens), tokens  # never empty, never an empty token
    for token in wanted:
        assert token in tokens, (token, tokens)
    for token in unwanted:
        assert token not in tokens, (token, tokens)


@pytest.mark.parametrize("text", ["", "   ", "\u200b\u200d", "\ufe0f"])
def test_it_gives_no_tokens_rather_than_an_empty_one(text):
    assert "" not in keyword_tokens(text)


def test_it_bounds_every_token_and_keeps_long_words_findable():
    long_word = "z" * 3000
    stored = keyword_tokens(f"a key {long_word} and a url https://example.com/{'a' * 500}")
    assert max(len(t.encode()) for t in stored) <= MAX_TOKEN_CHARS * 4
    [hashed] = keyword_tokens(long_word)
    assert hashed.startswith("#") and hashed in stored  # the same word hashes the same way
    assert keyword_tokens("ж" * 5000) == keyword_tokens("Ж" * 5000)
    assert max(len(t) for t in keyword_tokens("한" * 3000 + " " + "ก" * 3000)) <= MAX_TOKEN_CHARS


def test_it_finds_ascii_words_as_the_general_unicode_path_does():
    """ASCII text takes a fast path: the same tokens as the Unicode method gives them."""
    text = "Caroline went to the LGBTQ support-group on 7 May 2023; e.g. v2.3.1 of foo_bar."
    assert keyword_tokens(text) == [t for t in keyword_tokens(text + " é") if t != "é"]


def test_it_bounds_the_terms_of_a_query():
    terms = query_terms(" ".join(f"word{i}" for i in range(1000)))
    assert len(terms) == MAX_QUERY_TERMS
    assert query_terms("z" * 3000) == [(keyword_tokens("z" * 3000)[0], False)]
    assert query_terms("painted walls") == [("paint", True), ("wall", True)]
