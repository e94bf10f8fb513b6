"""memory.classify on pairs written for these tests (not the benchmark's), with the real local model: a
moved word is a rewording, a replaced one a value; names, numbers and colours read without their traps; a
code-mixed pair read in one script; reworded spans of whole words merged; one value replaced in the same
sentence recognised as an update."""

import pytest

from memory import classify as c
from memory.embeddings.local import LocalE5Provider

MODEL = "multilingual-e5-small"


def similarity(a: str, b: str) -> float:
    va, vb = LocalE5Provider().embed_passages([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=True))


def kind(a: str, b: str, model: str = MODEL) -> str:
    return c.classify(a, b, similarity(a, b), model).kind


def test_a_moved_word_is_a_rewording_and_a_replaced_one_a_value():
    assert not c.substitution("用户不抽烟", "用户烟一根不抽")
    assert not c.substitution("The user hates crowded trains", "Trains that are crowded annoy the user")
    assert c.substitution("用户喜欢喝茶", "用户喜欢喝可乐")
    assert c.substitution("The user is allergic to cats", "The user is allergic to dust")


def test_names_leave_out_calendar_words_units_and_capitalised_common_words():
    # the first word of a sentence is capitalised; the other text writes it as a common word
    assert c._name_pair("Snakes frighten the user", "The user is scared of snakes", False) == (set(), set())
    # a numeral before a gazetteer name makes a number and a unit: 五百度 is 500 degrees, not Baidu
    assert c._names("用户近视五百度", False) == set()
    assert c._names("用户在百度工作", False) == {"百度"}
    # weekdays are read by weekdays(), in the singular or the plural
    assert c._names("The user swims on Mondays", False) == set()
    assert c._name_pair("The user uses Figma", "The user uses Sketch", False) == ({"figma"}, {"sketch"})


def test_one_before_a_measure_word_may_be_an_article():
    da, db = c._dates_pair("用户开一辆蓝色的 Mini 3", "The user drives a blue Mini 3")
    assert da == db == {"n3"}
    assert not c._numbers_differ("用户开一辆蓝色的 Mini 3", "The user drives a blue Mini 3")
    da, db = c._dates_pair("用户有一个孩子", "用户有两个孩子")
    assert da != db
    assert c._numbers_differ("用户有一个孩子", "用户有两个孩子")


def test_colours_are_read_in_both_languages():
    assert c.colours("用户的车是红色的") == {"red"} == c.colours("The user's car is red")
    assert c.colours("用户喜欢深色模式") == {"dark"} == c.colours("The user likes dark mode")
    assert c.colours("用户喜欢喝红茶") == set()
    assert kind("用户的车是红色的", "The user's car is black") != "duplicate"
    assert kind("用户的车是红色的", "The user's car is red") == "duplicate"


def test_a_code_mixed_pair_is_read_in_one_script():
    a, b = "用户用 Excel 做 budget planning", "用户用 Excel 做预算规划"
    assert c.translate_spans(a, b) == "用户用Excel做预算规划"
    assert kind(a, b) == "duplicate"
    # another language in the other script is another value, not a translation
    a, b = "用户希望回复用 English", "用户希望回复用日语"
    assert c.translate_spans(a, b) is None
    assert kind(a, b) != "duplicate"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The user is scared of snakes", "Snakes frighten the user"),
        ("The user is fond of jazz", "The user really likes jazz music"),
        ("The user is learning to bake bread", "The user is practising baking bread"),
        ("The user's son is ten", "The user has a ten-year-old son"),
    ],
)
def test_reworded_spans_of_whole_words_are_merged(a, b):
    assert kind(a, b) == "duplicate"
    assert kind(b, a) == "duplicate"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The user likes tea", "The user likes coffee"),
        ("用户喜欢喝茶", "用户喜欢喝可乐"),
        ("The user is allergic to cats", "The user is allergic to dust"),
        ("The user is learning to bake bread", "The user's daughter is learning to bake bread"),
    ],
)
def test_a_replaced_value_is_never_merged(a, b):
    assert kind(a, b) != "duplicate"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("用户的工位在 3 楼", "用户的工位在 7 楼"),  # only the number differs
        ("用户最常用的浏览器是 Chrome", "用户最常用的浏览器是 Firefox"),  # under a superlative
    ],
)
def test_one_value_replaced_in_the_same_sentence_is_an_update(a, b):
    assert kind(a, b) == "update"


def test_spans_are_embedded_only_for_the_local_model():
    a, b = "The user is learning to bake bread", "The user is practising baking bread"
    assert c.substitution(a, b)  # one span replaced: read as a rewording only by embedding the spans
    c._VECTORS.clear()
    c.classify(a, b, 0.99, "text-embedding-3-small")
    assert a not in c._VECTORS and b not in c._VECTORS
    # the write path embeds only for its nearest candidates (memory.write_decision.EMBED_CANDIDATES)
    assert c.classify(a, b, 0.99, MODEL, embed=False).kind != "duplicate"
    assert a not in c._VECTORS and b not in c._VECTORS
    c.classify(a, b, 0.99, MODEL)
    assert a in c._VECTORS and b in c._VECTORS


def test_a_translation_below_the_cross_lingual_threshold_is_read_without_the_shared_subject():
    a, b = "用户会弹吉他", "The user plays the guitar"
    assert similarity(a, b) < 0.835  # the plain cross-lingual duplicate threshold
    assert c._without_subject(a, b) >= c.CROSS_WITHOUT_SUBJECT
    assert kind(a, b) == "duplicate"
    # another instrument: what is left besides the subject differs
    assert c._without_subject(a, "The user plays the piano") < c.CROSS_WITHOUT_SUBJECT
    assert kind(a, "The user plays the piano") == "distinct"
    assert kind(a, "The user's brother plays the guitar") == "distinct"


def test_a_new_value_across_languages_is_an_update_without_a_change_word():
    assert kind("The user works at a hospital", "用户在一家银行上班") == "update"
    assert kind("The user lives in a small town", "用户住在市中心") == "update"
    # the same employer in the other language stays one memory
    assert kind("The user works at a hospital", "用户在一家医院工作") == "duplicate"
    # a Chinese name spelt in Latin letters scores low without the subject too: not read as a new value
    assert kind("用户的经理是张伟", "The user's manager is Zhang Wei") != "update"


def test_spans_closer_to_their_own_text_are_other_things_and_never_merged():
    a, b = "用户晚上喝豆浆", "用户晚上吃面包"
    assert similarity(a, b) >= 0.955  # above the duplicate threshold, and no token rule sees a swap
    assert not c.substitution(a, b)
    assert c._says_other_things(a, b)
    assert kind(a, b) == "distinct"
    # a rewording's spans are as close to the other text as to their own
    assert not c._says_other_things("The user is fond of jazz", "The user really likes jazz music")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a change word and one shared name or word do not make one slot: what is said differs
        ("Atlas launch is moved to March, keep it quiet", "Atlas launch checklist lives in the wiki"),
        ("The office moved to floor 7", "The office parking pass is blue"),
        ("The office moved to floor 7", "The office is closed this week for painting"),
    ],
)
def test_a_change_word_and_a_shared_name_are_not_an_update(a, b):
    assert kind(a, b) == "distinct"
