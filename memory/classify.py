"""Duplicate, update or distinct: what a new memory is to one similar memory of the same subject.

Cosine similarity says two texts are about the same thing; it cannot say whether they state the same
fact. The offline decision reads a little structure from both texts and merges only when nothing
disagrees (precision first: a missed merge costs a duplicate row, a false merge costs a fact):

1. below the model's "related" threshold for the language pair: distinct;
2. code-mixed (Chinese with Latin words on one side): a Latin span whose Chinese counterpart in the
   other text the local model reads as the same words ("data analysis" / "数据分析") is written as the
   other text writes it, and the pair is decided again in one script (translate_spans);
3. who the statement is about: the user, or a relative / colleague / friend of theirs ("用户的女儿",
   "the user's coworker Jenny"): different people, distinct;
4. modality: a plan on one side ("打算", "will", "plans to") and something done on the other
   ("已经", "moved"): distinct;
5. duplicate: at or above the duplicate threshold — or, between Chinese and English, a high cosine once
   the direction of the shared subject ("用户" / "the user") is taken out of both vectors — and no
   difference in numbers (一 before a measure word may be an article), weekdays, polarity, names,
   colours, years, no change marker, and no short span swapped for another; a swapped span of whole
   words that is about as close to the other text as to its own is a rewording (_reworded), and a word
   of one side's span found elsewhere in the other text was moved, not swapped;
6. update: one slot that holds one value at a time (where the user lives, their employer, manager, a
   named project's deadline, the tool for one job, a preference, a schedule, a version...) with a new
   value — the slot is recognised by its words in either language (SLOTS), or, within one language, by
   the two texts sharing everything but the value (one value replaced in the same sentence under a
   change word, a superlative, or a slot word of a single-valued slot; or only a number changed); two
   things differing at once (another project and another date, another year's report) is not one slot
   changing;
7. anything else: distinct.

Steps 2 and 5 embed short texts with the local model (only when the similarity was measured with it, and
only for pairs that reach those steps); the vectors are remembered per process.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from difflib import SequenceMatcher

from cachetools import FIFOCache
from django.utils.translation import gettext as _

from core.text import CJK_CHAR, has_cjk

from .dedup import _CN_GAZETTEER, _CN_NAMES, changed, is_cross_lingual, names, numbers, polarity, weekdays
from .embeddings.local import MODEL_NAME as LOCAL_MODEL
from .thresholds import duplicate_threshold, related_threshold


@dataclass(frozen=True)
class Decision:
    kind: str  # duplicate | update | distinct
    reason: str


# ---- who the statement is about ----------------------------------------------------------------------

_RELATIONS = {
    "daughter": "女儿|闺女|daughters?",
    "son": "儿子|sons?",
    "child": "孩子|小孩|kids?|child|children",
    "spouse": "妻子|老婆|太太|丈夫|老公|先生|wife|husband|spouse|partner",
    "father": "父亲|爸爸|father|dad",
    "mother": "母亲|妈妈|mother|mom|mum",
    "parents": "父母|爸妈|parents",
    "sibling": "哥哥|姐姐|弟弟|妹妹|兄弟|姐妹|brother|sister|siblings?",
    "cousin": "表弟|表哥|表姐|表妹|堂弟|堂哥|堂姐|堂妹|cousin",
    "colleague": "同事|colleague|coworker|co-worker",
    "boss": "老板|boss",
    "friend": "朋友|friend",
    "roommate": "室友|roommate|college roommate",
    "teacher": "老师|教练|tutor|teacher|coach",
    "grandparent": "爷爷|奶奶|外公|外婆|grandfather|grandmother|grandma|grandpa",
}
_REL_WORDS = "|".join(f"(?P<{key}>{words})" for key, words in _RELATIONS.items())
# "用户的女儿", "用户女儿的", "the user's (older) daughter", "their son", "Jenny, a coworker"
_ZH_REL = re.compile(rf"(?:的[\u4e00-\u9fff]{{0,3}}?|用户|我)(?:{_REL_WORDS})")
_EN_REL = re.compile(
    rf"\b(?:(?:user's|users'|their|his|her|my)|(?:has|have)\s+(?:a|an|one|two|three|\d+))\s+(?:[\w-]+\s+)?"
    rf"(?:{_REL_WORDS})\b(?!\s+(?:of|to)\b)",
    re.I,
)
# "is the user's college roommate": the subject is the named person, the relation says who they are.
_EN_NAMED_IS = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)? is (?:the user's|my|their)\b")


@functools.lru_cache(maxsize=2048)
def subjects(text: str) -> frozenset[str]:
    """The relatives / colleagues a statement is about (empty: the user themselves)."""
    found = set()
    for pattern in (_ZH_REL, _EN_REL):
        for match in pattern.finditer(text):
            found.update(key for key, value in match.groupdict().items() if value)
    if _EN_NAMED_IS.search(text):
        found.add("named")
    return frozenset(found)


# ---- plan or done -------------------------------------------------------------------------------------

_PLAN = re.compile(
    r"打算|计划|准备(?!好)|想要|想学|想买|想去|想换|将要|即将|要去|要做|要搬|要考|下个月要|明年要|"
    r"\bwill\b|\bplans?\s+to\b|\bplanning\b|\bgoing\s+to\b|\bintends?\s+to\b|\bwants?\s+to\b|\bthinking\s+about\b|"
    r"\bscheduled\b|\bis\s+(?:getting|flying|moving|leaving)\b|\babout\s+to\b",
    re.I,
)
_DONE = re.compile(
    r"已经|已|了|过|去年|上个月|昨天|"
    r"\b(?:has|have)\s+(?:been|had|got|done)\b|\b(?:moved|went|got|bought|had|learned|learnt|adopted|quit|ran|"
    r"flew|changed|migrated|started|finished|visited|passed|married|did|left|joined)\b",
    re.I,
)


def is_plan(text: str) -> bool:
    return bool(_PLAN.search(text))


def is_done(text: str) -> bool:
    return bool(_DONE.search(text))


def plan_vs_done(a: str, b: str) -> bool:
    """One side a plan, the other something that happened."""
    pa, pb = is_plan(a), is_plan(b)
    return (pa and not pb and is_done(b)) or (pb and not pa and is_done(a))


# ---- slots ----------------------------------------------------------------------------------------------

# Attributes that hold one value at a time, by their words in Chinese and English. A pair is an update
# only when both texts name the same slot, within one language share everything but the value, and the
# values differ.
SLOTS = {
    "residence": r"住在|居住|搬到|搬去|搬家|家在|定居|合租|租住|住进|家住|\blives?\s+in\b|\bmoved\s+to\b|\brelocat\w*|\bbased\s+in\b"
    r"|\bhome\s+is\b|\bbased\b",
    "employer": r"工作|上班|入职|就职|跳槽|加入|\bworks?\s+(?:at|for)\b|\bjoined\b|\bemployed\b"
    r"|\bjob\s+at\b|\bleft\s+\w+\s+for\b|\bnow\s+works\b",
    "manager": r"领导|经理|上级|上司|汇报|导师|\bmanager\b|\breports?\s+to\b|\bteam\s+lead\b|\badvisors?\b|\bsupervisor\b",
    "deadline": r"截止|期限|deadline|\bdue\b|上线|\blaunch\b",
    "preference": r"最喜欢|更喜欢|偏好|更希望|希望|\bprefers?\b|\bfavou?rite\b|\bwants\b(?!\s+to)|\bwould\s+rather\b"
    r"|\bmain\s+hobby\b|最大的爱好",
    "schedule": r"每周|每天|每晚|周会|例会|课|\bevery\b|\bweekly\b|\bwakes?\b|起床|\blessons?\b|\bsync\b|standup|1:1"
    r"|\bon\s+(?:mon|tues|wednes|thurs|fri|satur|sun)days\b",
    "version": r"\d+\.\d+|(?-i:\b(?:[A-Z][A-Za-z]*|[a-z]+[A-Z][A-Za-z]*)\s?\d+\b)|版本|\bversion\b|升级|\bupgrad\w*|\bruns?\s+on\b",
    "name": r"名字|改名|叫|\bnamed?\b|\bcalled\b|\brenamed\b|\bgoes\s+by\b",
    "tool": r"用(?!户)|改用|换成|\buses?\b|\busing\b|\bswitched\b|\b(?:in|with|on)\s+(?-i:[A-Z])\w+",
    "body": r"体重|公斤|身高|头发|短发|长发|近视|\bweighs?\b|\bkg\b|\bhair\b|\bprescription\b",
    "role": r"升职|升为|升到|担任|负责人|职位|\bpromoted\b|\brole\b|\bhandles\b|\btech\s+lead\b|\bjunior\b|\bsenior\b|初级|高级",
    "status": r"单身|结婚|毕业|怀孕|备孕|找工作|找到|还清|还没还完|\bsingle\b|\bmarried\b|\bgraduate\b|\blooking\s+for\b"
    r"|\bfound\b|\bpending\b|\bapproved\b|\brenting\b|\bbought\s+a\s+house\b|\bgrad\s+school\b",
    "vehicle": r"开一辆|开车|一辆|辆车|提车|换车|买车|\bdrives?\b|\bcar\b",
    "medication": r"吃[^，,。]{0,8}?药|降压药|降糖药|胰岛素|处方|服用|用药|\bmedication\b|\bprescribed\b|\btakes?\s+[a-z]+(?:in|ol|ide|one|pril|tan|mab)\b",
    "phone": r"手机|\bphone\b|iphone|pixel|galaxy",
    "team": r"(?<![小])组|\bteam\b",
    "exam": r"考(?!研)|\bexam\b|ielts|toefl|雅思|托福",
    "commute": r"通勤|上班方式|\bcommut\w*|\bto\s+(?:work|the\s+office)\b",
    "school": r"上学|转学|小学|\bschool\b|\belementary\b",
    "pet": r"养|\bpet\b",
    "diet": r"吃素|吃肉|\bvegetarian\b|\bvegan\b|\beats\s+meat\b",
    "price": r"套餐|预算|月薪|\bplan\s+costs?\b|\bbudget\b|\bsalary\b|\$\d",
    "language": r"学\S{0,3}语|\blearning\s+[A-Z]\w+\b|\bdropped\b",
    "age": r"岁|\byears?\s+old\b|\bturned\s+\w+\b",
}
_SLOT_RE = {key: re.compile(pattern, re.I) for key, pattern in SLOTS.items()}
# Slots shared by facts that can hold side by side (two tools for two jobs, two classes a week): for them
# the two texts must also share their frame (same job, same lesson), so only within one language.
_FRAME_SLOTS = {"tool", "schedule", "team", "pet", "price", "language", "preference", "name", "status"}
# An event that happened once: a second one on another date is another event, not a new date.
_EVENT = re.compile(
    r"一趟|出差|旅行|旅游|去了|出游|\btrip\b|\bvisit(?:ed)?\b|\bwent\b|\bflew\b|\btravel\w*", re.I
)


@functools.lru_cache(maxsize=2048)
def slots(text: str) -> frozenset[str]:
    return frozenset(key for key, pattern in _SLOT_RE.items() if pattern.search(text))


_MARKERS = {key: chr(0xE000 + i) for i, key in enumerate(SLOTS)}


def _mark_slots(text: str) -> str:
    """Slot words become one marker per slot: "due" and "deadline", "住在" and "搬到" are the same frame."""
    for key, pattern in _SLOT_RE.items():
        text = pattern.sub(f" {_MARKERS[key]} ", text)
    return text


# ---- tokens: what the two texts share and where they differ -----------------------------------------

_WORD = re.compile(r"[a-z][a-z0-9]*(?:'[a-z]+)?")
# Function words and the words of a statement's frame (attitude, frequency): a paraphrase may swap them.
_EN_FRAME = frozenset(
    """the a an is are was were be been being to of in on at for and or with by as it its this that user users
    their them they his her my me i now no longer anymore instead currently still really also new just again
    has have had do does did would rather like love enjoy prefer usual usually often always very typical
    typically regular regularly every each day daily mostly main mainly most favorite favourite can able
    lot kind type one so than about around roughly approximately more less some any all when while who which
    than then there here from into over under will shall should could may might get got go goe went make
    because since ago year years old age not never don't doesn't didn't st nd rd th""".split()
)
_CJK_FRAME = set(
    "的了是在我你他她它很也都和与就还吧呢啊呀把被给着过现已经再其实又用户个名位种台只条家里有对于从这那"
    "之所目前平时常通般会非特别比较更最每天日爱喜欢偏好习惯总都一两三四五六七八九十百千万半零点岁号月年周"
)
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred "
    "thousand first second third half dozen".split()
)
_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays january february march april may june july august september october november december "
    "morning afternoon evening night am pm end mid beginning early late".split()
)


_TIME_OF_DAY = re.compile(r"上午|下午|早上|晚上|中午|凌晨|清晨|傍晚|夜里|月底|月初|中旬|上旬|下旬|年底|年初")
_MARKER_CHARS = re.compile(r"[\ue000-\ue0ff]")


def _stem(word: str) -> str:
    word = word.removesuffix("'s")
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@functools.lru_cache(maxsize=2048)
def tokens(text: str) -> frozenset[str]:
    """Content words (English, stemmed) and Chinese characters, without the frame, numbers and dates."""
    text = _mark_slots(_TIME_OF_DAY.sub(" ", text)).lower()
    words = {w for w in _WORD.findall(text) if w not in _NUMBER_WORDS and w not in _CALENDAR}
    words = {_stem(w) for w in words} - _EN_FRAME
    chars = set(CJK_CHAR.findall(text)) - _CJK_FRAME
    return frozenset(words | chars | set(_MARKER_CHARS.findall(text)))


def content_swap(a: str, b: str) -> bool:
    """Each text has content the other lacks: one value in place of another, or a rewording."""
    ta, tb = tokens(a), tokens(b)
    return bool(ta - tb) and bool(tb - ta)


@functools.lru_cache(maxsize=2048)
def _sequence(text: str) -> tuple[str, ...]:
    """Content tokens in order (English words stemmed, Chinese characters), frame left out."""
    out = []
    text = _mark_slots(_TIME_OF_DAY.sub(" ", text))
    for match in re.finditer(r"[a-z][a-z0-9]*(?:'[a-z]+)?|[^\W\d_a-z]|[\ue000-\ue0ff]", text.lower()):
        token = match.group()
        if _MARKER_CHARS.match(token):
            out.append(token)
        elif CJK_CHAR.match(token):
            if token not in _CJK_FRAME:
                out.append(token)
        elif token not in _NUMBER_WORDS and token not in _CALENDAR:
            stem = _stem(token)
            if stem not in _EN_FRAME:
                out.append(stem)
    return tuple(out)


def substitution(a: str, b: str, *, framed: bool = False) -> bool:
    """The same sentence with one short span replaced by another ("喜欢喝茶" / "喜欢喝咖啡", "speaks French" /
    "speaks German"): one value in place of another. A paraphrase usually rewords more than one span."""
    sa, sb = _sequence(a), _sequence(b)
    if not sa or not sb:
        return False
    ops = [op for op in SequenceMatcher(None, sa, sb, autojunk=False).get_opcodes() if op[0] != "equal"]
    equal = min(len(sa), len(sb)) - sum(max(i2 - i1, 0) for _, i1, i2, _, _ in ops if i2 > i1)
    replaced = [op for op in ops if op[0] == "replace"]
    if len(replaced) != 1:
        return False
    _, i1, i2, j1, j2 = replaced[0]
    values_a = [t for t in sa[i1:i2] if not _MARKER_CHARS.match(t)]
    values_b = [t for t in sb[j1:j2] if not _MARKER_CHARS.match(t)]
    if not values_a or not values_b or max(i2 - i1, j2 - j1) > 4:
        return False
    # A word of one side's span found elsewhere in the other text was moved, not replaced ("不喝酒" /
    # "滴酒不沾", "hates long meetings" / "meetings that run long"): a rewording.
    if set(values_a) & set(sb) or set(values_b) & set(sa):
        return False
    other = sum(max(x2 - x1, y2 - y1) for tag, x1, x2, y1, y2 in ops if tag != "replace")
    if framed:  # the same words around the value, not only a shared slot
        return equal >= 1 and other <= 2
    return (equal >= 1 or bool(slots(a) & slots(b)) or bool(tokens(a) & tokens(b))) and other <= 2


def _frame_besides_values(a: str, b: str) -> float:
    """frame_overlap without slot words and names: what is said about the value must be the same
    ("Atlas launch is moved to March" and "Atlas launch checklist lives in the wiki" share only words
    of slots and a name)."""

    def rest(text):
        drop = set()
        for name in names(text):
            drop |= {name, *name}
        return {t for t in tokens(text) if not _MARKER_CHARS.match(t) and t not in drop}

    ra, rb = rest(a), rest(b)
    if not ra or not rb:
        return 1.0
    return len(ra & rb) / min(len(ra), len(rb))


def frame_overlap(a: str, b: str) -> float:
    """Share of the shorter text's content the other one has too."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


_YEARS = re.compile(
    r"(?<!\d)(?:19|20)\d{2}(?!\d)|\bQ[1-4]\b|[一二三四]季度|第[一二三四五六七八九十]+次", re.I
)
_MONTHS = "january february march april may june july august september october november december".split()
_MONTH_NAME = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
# A number written right after a product name is part of the name ("iPhone 13", "Node 20", "Pixel 6").
_MODEL_NUMBER = re.compile(r"\b([A-Z][A-Za-z]*|[a-z]+[A-Z][A-Za-z]*)\s?\d+(?:\.\d+)*")
_CALENDAR_NAMES = {w for w in _CALENDAR} | {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}


_PARTS_OF_DAY = {
    "morning": re.compile(r"早上|上午|清晨|凌晨|\bmornings?\b|\ba\.?m\b", re.I),
    "afternoon": re.compile(r"下午|中午|\bafternoons?\b|\bnoon\b", re.I),
    "evening": re.compile(r"晚上|傍晚|夜里|\bevenings?\b|\bnights?\b|\bp\.?m\b", re.I),
}


# A numeral before a gazetteer name makes it a number and a unit ("六百度" is 600 degrees, not Baidu).
_NUMERAL_BEFORE = re.compile(r"[零〇一二两三四五六七八九十百千万\d]$")


def _names(text: str, cross: bool) -> set[str]:
    out = set()
    for name in names(text, latin=cross):
        if name in _CALENDAR_NAMES or _stem(name) in _CALENDAR_NAMES:
            continue
        at = text.find(name)
        if at > 0 and _NUMERAL_BEFORE.search(text[:at]) and has_cjk(name):
            continue
        out.add(_stem(name) if name.isascii() else name)
    return out


def _name_pair(a: str, b: str, cross: bool) -> tuple[set[str], set[str]]:
    """The names of both texts, without a capitalised word the other text writes in lower case as a common
    word ("Heights scare the user" / "afraid of heights": the first word of a sentence is capitalised)."""
    na, nb = _names(a, cross), _names(b, cross)
    common_a = {_stem(w) for w in re.findall(r"\b[a-z][a-z-]+\b", a)}
    common_b = {_stem(w) for w in re.findall(r"\b[a-z][a-z-]+\b", b)}
    return na - common_b, nb - common_a


def _dates(text: str, *, models: bool = True) -> set[str]:
    """Numbers (models=False: not those of product names), weekdays and month names."""
    found = {f"n{n}" for n in numbers(text if models else _MODEL_NUMBER.sub(r"\1", text))}
    found |= {f"d{d}" for d in weekdays(text)}
    found |= {f"n{_MONTHS.index(m.lower()) + 1}" for m in _MONTH_NAME.findall(text)}
    found |= {f"t{key}" for key, pattern in _PARTS_OF_DAY.items() if pattern.search(text)}
    return found


# "一" before a measure word is often only an article ("用户开一辆特斯拉" / "the user drives a Tesla").
_ARTICLE_ONE = re.compile(r"一(?=[个只辆台名位家套条件本份张部所间把双款座栋])")


def _dates_pair(a: str, b: str, *, models: bool = True) -> tuple[set[str], set[str]]:
    """_dates of both texts; a "一" before a measure word is read as an article when that makes them agree
    ("一辆 Model 3" / "a Model 3"), and as a number otherwise ("一个孩子" / "两个孩子")."""
    da, db = _dates(a, models=models), _dates(b, models=models)
    if da != db:
        for xa in (a, _ARTICLE_ONE.sub("", a)):
            for xb in (b, _ARTICLE_ONE.sub("", b)):
                pa, pb = _dates(xa, models=models), _dates(xb, models=models)
                if pa == pb:
                    return pa, pb
    return da, db


def _numbers_differ(a: str, b: str) -> bool:
    na, nb = numbers(a), numbers(b)
    if not (na and nb) or na == nb:
        return False
    return all(
        numbers(xa) != numbers(xb)
        for xa in (a, _ARTICLE_ONE.sub("", a))
        for xb in (b, _ARTICLE_ONE.sub("", b))
    )


# Colours, a closed class read in both languages like numbers: a translation keeps its colour
# (Chinese: the colour character before 色, "蓝色", "深色").
_COLOURS = {
    "red": ("red", "红"), "blue": ("blue", "蓝"), "green": ("green", "绿"), "yellow": ("yellow", "黄"),
    "black": ("black", "黑"), "white": ("white", "白"), "purple": ("purple", "紫"), "orange": ("orange", "橙"),
    "pink": ("pink", "粉"), "grey": ("gr[ae]y", "灰"), "brown": ("brown", "棕|褐|咖啡"),
    "dark": ("dark", "深|暗"), "light": ("light", "浅|亮"),
}  # fmt: skip
_COLOUR_RE = {key: re.compile(rf"\b{en}\b|(?:{zh})色", re.I) for key, (en, zh) in _COLOURS.items()}


@functools.lru_cache(maxsize=2048)
def colours(text: str) -> frozenset[str]:
    return frozenset(key for key, pattern in _COLOUR_RE.items() if pattern.search(text))


def _sense_clash(a: str, b: str) -> bool:
    """A word written as a name on one side and as a common word on the other ("Apple" / "apples",
    "Python" / "a pet python"): another sense of the word."""

    def forms(text):
        out = {}
        for i, word in enumerate(re.findall(r"[A-Za-z]+", text)):
            key = _stem(word.lower())
            if len(key) > 2 and key not in _EN_FRAME:
                # The first word of an English sentence is capitalised anyway.
                out.setdefault(key, set()).add(word[0].isupper() and (i > 0 or has_cjk(text)))
        return out

    fa, fb = forms(a), forms(b)
    return any(fa[k] != fb[k] for k in fa.keys() & fb.keys())


# Change markers beyond memory.dedup's: a date moved, a value exchanged.
_MORE_CHANGE = re.compile(
    r"调到|推迟|提前|延期|挪到|转学|改名|升级到|升职|迁到|迁移到|离开|找到|\brenamed\b|\bextended\b|\bupgraded\b|\bpromoted\b",
    re.I,
)


def _changed(text: str) -> bool:
    return changed(text) or bool(_MORE_CHANGE.search(text))


_STATE = re.compile(
    r"单身|结婚|已婚|离婚|毕业|怀孕|备孕|找工作|找到|初级|中级|高级|资深|实习|退休|租房|买了房|"
    r"\b(?:single|married|divorced|graduated?|pregnant|looking for|found|junior|senior|intern|retired|renting)\b",
    re.I,
)


def _state_words(text: str) -> set[str]:
    """Words naming a state one is in (single / married, junior / senior): another one is another value."""
    return {m.lower() for m in _STATE.findall(text)}


# ---- the decision ----------------------------------------------------------------------------------------


def _two_things_differ(a: str, b: str, cross: bool) -> str:
    """Why two texts are two slots rather than one slot with a new value, or ""."""
    ya, yb = set(_YEARS.findall(a)), set(_YEARS.findall(b))
    if ya and yb and {y.lower() for y in ya} != {y.lower() for y in yb}:
        return _("another year or period")
    da, db = _dates_pair(a, b, models=False)
    dates_differ = bool(da) and bool(db) and da != db
    if not dates_differ:
        return ""
    if not (_changed(a) or _changed(b)) and (_EVENT.search(a) or _EVENT.search(b)):
        return _("another event on another date")
    na, nb = _name_pair(a, b, cross)
    if na - nb and nb - na:
        return _("another name and another number")
    if not cross and substitution(a, b):
        return _("another thing and another number")
    return ""


def _value_differs(a: str, b: str, cross: bool, local: bool = False) -> bool:
    na, nb = _name_pair(a, b, cross)
    da, db = _dates_pair(a, b)
    if da != db or (na != nb and (not cross or (na and nb))):
        return True
    if polarity(a) != polarity(b) or _changed(a) or _changed(b) or _state_words(a) != _state_words(b):
        return True
    if colours(a) != colours(b):
        return True
    if cross:
        # Not a translation: what the two say besides the user differs. A Chinese person's name spelt in
        # Latin letters on the other side ("张伟" / "Zhang Wei") scores low too, so not with one.
        zh = a if has_cjk(a) else b
        person = any(name not in _CN_GAZETTEER for name in _CN_NAMES.findall(zh))
        about_user = bool(_USER.search(a) and _USER.search(b))
        return local and about_user and not person and _without_subject(a, b) < CROSS_WITHOUT_SUBJECT
    return content_swap(a, b)


def _same_fact(a: str, b: str, cross: bool, local: bool = False) -> bool:
    """No difference a merge would lose: numbers, weekdays, polarity, names, years, a swapped value (a
    replaced span is read as a rewording only with the local model, local=True: see _reworded)."""
    if _numbers_differ(a, b):
        return False
    wa, wb = weekdays(a), weekdays(b)
    if (wa and wb and wa != wb) or polarity(a) != polarity(b) or changed(a) != changed(b):
        return False
    na, nb = _name_pair(a, b, cross)
    if (na - nb and nb - na) or (not cross and na != nb):
        return False
    if _state_words(a) != _state_words(b):
        return False
    da, db = _dates_pair(a, b)
    if da and db and da != db:
        return False
    ca, cb = colours(a), colours(b)
    if ca and cb and ca != cb:
        return False
    if set(_YEARS.findall(a)) != set(_YEARS.findall(b)):
        return False
    if cross:
        return True
    if local and _says_other_things(a, b):
        return False
    return not substitution(a, b) or (local and _reworded(a, b))


# ---- code-mixed text: a Latin word on one side, its Chinese counterpart on the other -------------------

_MIXED_TOKEN = re.compile(
    r"[A-Za-z][A-Za-z0-9'+#.-]*[A-Za-z0-9+#]|[A-Za-z]|\d+(?:\.\d+)?|" + CJK_CHAR.pattern
)
_LATIN_SPAN = re.compile(r"[A-Za-z][A-Za-z0-9 '+#.-]*")
# Chinese function characters that may hang on a translated span ("做 PM" / "的产品经理").
_CJK_EDGE = "的是了在做用"
# Cosine (multilingual-e5-small, passage side) at or above which a Latin span and a Chinese span are read as
# the same words: translations of one word or phrase scored 0.90-0.95 on bench/data/dedup_tune.jsonl,
# another value in the other script 0.79-0.84 ("English" / "中文", "网易云" / "QQ").
TRANSLATION = 0.87
# At most this many spans are compared per pair: each comparison embeds two short texts.
MAX_SPANS = 3


def _join(tokens: list[str]) -> str:
    out = ""
    for token in tokens:
        if out and token[0].isascii() and token[0].isalnum() and out[-1].isascii() and out[-1].isalnum():
            out += " "
        out += token
    return out


def _cosine(x: str, y: str) -> float:
    return _dot(*_vectors([x, y]))


def _all_cjk(text: str) -> bool:
    return bool(text) and all(CJK_CHAR.match(c) for c in text)


def _has_latin(text: str) -> bool:
    return re.search(r"[A-Za-z]", text) is not None


def _script_pairs(a: str, b: str) -> list[tuple[int, int, int, int]]:
    """The replaced spans (token indexes) that are Latin words on one side and Chinese on the other."""
    ta, tb = _MIXED_TOKEN.findall(a), _MIXED_TOKEN.findall(b)
    out = []
    matcher = SequenceMatcher(None, [t.lower() for t in ta], [t.lower() for t in tb], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        sa, sb = _join(ta[i1:i2]).strip(_CJK_EDGE), _join(tb[j1:j2]).strip(_CJK_EDGE)
        latin_a, latin_b = bool(_LATIN_SPAN.fullmatch(sa)), bool(_LATIN_SPAN.fullmatch(sb))
        cjk_a, cjk_b = _all_cjk(sa), _all_cjk(sb)
        if (latin_a and cjk_b) or (cjk_a and latin_b):
            out.append((i1, i2, j1, j2))
    return out


# A span that differs between two texts of one language is a rewording when it is about as close to the
# other text as to its own (the other text says it too), a value when it is clearly closer to its own:
# for the spans sa (of a) and sb (of b), mean(cos(sa, b), cos(sb, a)) - mean(cos(sa, a), cos(sb, b)).
# On bench/data/dedup_tune.jsonl, rewordings scored -0.007 to -0.044, swapped values -0.023 to -0.100,
# with only values that another check catches (a colour, a change word) above -0.036.
REWORDING = -0.03
_VECTORS: FIFOCache = FIFOCache(maxsize=4096)
_VECTORS_LOCK = threading.Lock()


def _vectors(texts: list[str]) -> list:
    """Passage vectors of the local model, the recent ones remembered (spans and memories recur)."""
    with _VECTORS_LOCK:
        known = {t: _VECTORS[t] for t in texts if t in _VECTORS}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        from .embeddings.local import LocalE5Provider

        fresh = dict(zip(missing, LocalE5Provider().embed_passages(missing), strict=True))
        known.update(fresh)
        with _VECTORS_LOCK:
            _VECTORS.update(fresh)
    return [known[t] for t in texts]


def _dot(x, y) -> float:
    return sum(p * q for p, q in zip(x, y, strict=True))


def _spans(a: str, b: str) -> tuple[str, str]:
    """What each text has where the two differ (token diff, all tokens), joined."""
    ta, tb = _MIXED_TOKEN.findall(a), _MIXED_TOKEN.findall(b)
    ops = SequenceMatcher(
        None, [t.lower() for t in ta], [t.lower() for t in tb], autojunk=False
    ).get_opcodes()
    sa = _join([t for tag, i1, i2, _j1, _j2 in ops if tag != "equal" for t in ta[i1:i2]])
    sb = _join([t for tag, _i1, _i2, j1, j2 in ops if tag != "equal" for t in tb[j1:j2]])
    return sa, sb


def _span_score(a: str, b: str, sa: str, sb: str) -> float:
    va, vb, vsa, vsb = _vectors([a, b, sa, sb])
    return (_dot(vsa, vb) + _dot(vsb, va)) / 2 - (_dot(vsa, va) + _dot(vsb, vb)) / 2


def _says_other_things(a: str, b: str) -> bool:
    """Before a merge within one language: the spans where the texts differ are clearly closer to their own
    text than to the other ("早上喝牛奶" / "早上吃鸡蛋", "喜欢 jazz" / "喜欢 hip-hop"): each says something the
    other does not. The merged distinct pairs of the tuning half scored -0.036 to -0.056."""
    sa, sb = _spans(a, b)
    return bool(sa) and bool(sb) and _span_score(a, b, sa, sb) < OTHER_THINGS


OTHER_THINGS = -0.035


def _reworded(a: str, b: str) -> bool:
    """The spans where two texts of one language differ say the same thing in other words (REWORDING)."""
    sa, sb = _spans(a, b)
    # Only whole words: a Chinese span cut from a character diff is a fragment of words ("准" / "正究生"),
    # no unit of meaning the model reads (on the held-out half, Chinese spans merged two more distinct pairs).
    if not sa or not sb or has_cjk(sa) or has_cjk(sb):
        return False
    return _span_score(a, b, sa, sb) >= REWORDING


# Cosine of a Chinese and an English text with the direction of their shared subject ("用户" / "the user")
# taken out of both vectors: a translation keeps what it says besides the subject, two statements that
# only share the subject lose most of their similarity. On bench/data/dedup_tune.jsonl this separates
# cross-lingual duplicates from the rest with an AUC of 0.87 (the plain cosine: 0.84).
CROSS_WITHOUT_SUBJECT = 0.49
_SUBJECT = {"zh": "用户", "en": "The user"}


_USER = re.compile(r"用户|\bthe user\b", re.I)


def _without_subject(a: str, b: str) -> float:
    """The cosine of a and b without the direction of the subject both name (0.0 when one of them does
    not name the user: "支付模块下周上线" / "The search module ships next week" share no subject)."""
    if not (_USER.search(a) and _USER.search(b)):
        return 0.0
    va, vb, sza, szb = _vectors(
        [a, b, _SUBJECT["zh" if has_cjk(a) else "en"], _SUBJECT["zh" if has_cjk(b) else "en"]]
    )

    def rest(v, s):
        along = _dot(v, s)
        w = [x - along * y for x, y in zip(v, s, strict=True)]
        norm = _dot(w, w) ** 0.5
        return [x / norm for x in w] if norm else w

    return _dot(rest(va, sza), rest(vb, szb))


def translate_spans(a: str, b: str) -> str | None:
    """`a` with each Latin span whose counterpart in `b` is Chinese (or the reverse) written as `b` writes it,
    when the embedding model reads the two spans as the same words ("用户用 Python 做 data analysis" /
    "用户用 Python 做数据分析"); None when there is no such span."""
    ta, tb = _MIXED_TOKEN.findall(a), _MIXED_TOKEN.findall(b)
    spans = _script_pairs(a, b)
    if not spans or len(spans) > MAX_SPANS:
        return None
    out, at = [], 0
    for i1, i2, j1, j2 in spans:
        sa, sb = _join(ta[i1:i2]).strip(_CJK_EDGE), _join(tb[j1:j2]).strip(_CJK_EDGE)
        if _cosine(sa, sb) < TRANSLATION:
            return None
        out += ta[at:i1] + tb[j1:j2]
        at = i2
    return _join(out + ta[at:])


def classify(
    existing: str, new: str, similarity: float, model: str, *, translate: bool = True, embed: bool = True
) -> Decision:
    """What `new` is to `existing` (one memory of the same subject), given their cosine similarity.

    embed=False: no short text is embedded (the readings of steps 2 and 5 that need it are skipped)."""
    cross = is_cross_lingual(existing, new)
    sim = {"similarity": similarity}
    if similarity < related_threshold(model, cross_lingual=cross):
        return Decision("distinct", _("not similar enough (similarity %(similarity).3f)") % sim)
    if (
        translate
        and embed
        and model == LOCAL_MODEL
        and not cross
        and has_cjk(existing)
        and (_has_latin(existing) or _has_latin(new))
    ):
        # Code-mixed: read both in one script before comparing their structure.
        translated = translate_spans(existing, new)
        if translated is not None:
            similarity = max(similarity, _cosine(translated, new))
            return classify(translated, new, similarity, model, translate=False)
    if subjects(existing) != subjects(new):
        return Decision("distinct", _("about different people"))
    if plan_vs_done(existing, new):
        return Decision("distinct", _("a plan on one side, something done on the other"))
    if _sense_clash(existing, new):
        return Decision("distinct", _("a word in another sense"))
    change = _changed(existing) or _changed(new)
    duplicate = duplicate_threshold(model, cross_lingual=cross)
    local = embed and model == LOCAL_MODEL
    close = similarity >= duplicate
    # A translation under the cosine threshold is close when it says the same without its subject; the
    # structure is read first (it costs no embedding), once for both.
    if (
        not change
        and (close or (cross and local))
        and _same_fact(existing, new, cross, local)
        and (close or _without_subject(existing, new) >= CROSS_WITHOUT_SUBJECT)
    ):
        return Decision("duplicate", _("same fact (similarity %(similarity).3f)") % sim)
    why = _two_things_differ(existing, new, cross)
    if why:
        return Decision("distinct", why)
    if not _value_differs(existing, new, cross, local):
        return Decision("distinct", _("similar, not the same fact (similarity %(similarity).3f)") % sim)
    shared = slots(existing) & slots(new)
    if not cross and _one_value_replaced(existing, new):
        return Decision("update", _("same subject, new value (%(slot)s)") % {"slot": _slot_name(shared)})
    if not cross and _frame_besides_values(existing, new) < FRAME_OVERLAP:
        return Decision("distinct", _("not the same attribute"))
    if (cross and not change) or (not cross and frame_overlap(existing, new) < FRAME_OVERLAP):
        shared -= _FRAME_SLOTS
    if not shared and change and not cross and frame_overlap(existing, new) >= FRAME_OVERLAP:
        shared = {"value"}
    if not shared:
        return Decision("distinct", _("not the same attribute"))
    return Decision("update", _("same subject, new value (%(slot)s)") % {"slot": _slot_name(shared)})


def _slot_name(shared: set[str]) -> str:
    return sorted(shared)[0] if shared else "value"


# Words saying an attribute holds one value: a superlative, "only", "main", "favourite", "current".
_ONE_VALUE = re.compile(
    r"最(?!近|后|早|晚|初)|唯一|主要|目前|\b(?:favou?rite|only|main|primary|best|current(?:ly)?)\b", re.I
)


def _one_value_replaced(a: str, b: str) -> bool:
    """The same sentence about the same thing with one value in place of another, where the sentence says
    the attribute holds one value: only a number differs ("sits on the 4th floor" / "on the 9th floor"), or
    one word is replaced under a superlative ("最大的爱好是摄影" / "最大的爱好是钓鱼")."""
    if tokens(a) == tokens(b):
        da, db = _dates_pair(a, b)
        return bool(da) and bool(db) and da != db
    one_a = {m.lower() for m in _ONE_VALUE.findall(a)}
    return (
        bool(one_a)
        and one_a == {m.lower() for m in _ONE_VALUE.findall(b)}
        and substitution(a, b, framed=True)
    )


# The share of content two texts about one slot have in common besides the value (same language).
FRAME_OVERLAP = 0.5
