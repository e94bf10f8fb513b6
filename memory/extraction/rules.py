"""The rule-based extractor: explicit markers and corrections in Chinese and English (seeds 002, 003).

It turns the user's own sentence into a memory. It reads only the user's messages, skips messages
under 10 characters (seed 004) and questions, and never guesses: a sentence without a marker is
not remembered. It is always available and is the only path when no chat model is configured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.roles import USER_ROLES
from core.text import has_cjk

MIN_MESSAGE_CHARS = 10


@dataclass
class Candidate:
    """One statement worth remembering, before the gate and reconciliation."""

    content: str
    memory_type: str
    confidence: float
    scope: str = "user"
    correction: bool = False
    source_message_id: str = ""
    rule: str = ""

    def as_dict(self) -> dict:
        return {
            "content": self.content,
            "memory_type": self.memory_type,
            "confidence": self.confidence,
            "scope": self.scope,
            "correction": self.correction,
            "rule": self.rule,
        }


_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")
_QUESTION = re.compile(r"(?:[?？]\s*$)|(?:[吗呢么][。.!！]?\s*$)")
_ASK_TO_REMEMBER = re.compile(r"(?:can|could|would|will) you (?:please )?remember|请|帮我|麻烦", re.I)

# "记住 / 请记住 / 记一下 / remember that ..." — the text after the marker is what to keep.
_REMEMBER = re.compile(
    r"^.{0,8}?(?:请你?|麻烦你?|帮我|你要|要)?(?:记住|记一下|记下|记着|牢记|备注一下)(?:了|一下)?"
    r"(?:这件事|这一点|一点|这个)?[\s，,：:、]*"
    r"|^.{0,20}?\b(?:remember|note|keep in mind|don'?t forget|do not forget)\b(?:\s+that)?[\s,:]*",
    re.I,
)
# A correction that opens the sentence: "不对，我现在…", "Actually, I …"; the rest is the new value.
_CORRECTION_PREFIX = re.compile(
    r"^(?:不对|不是这样的?|错了|不是的|说错了|纠正一下|更正一下|更正|我说错了)[\s，,。！!：:、]*"
    r"|^(?:no|nope|sorry|wait)?[\s,]*(?:actually|correction)\b[\s,:]*",
    re.I,
)
# Corrections inside the sentence: a changed value of something already said.
_CORRECTION_INNER = re.compile(
    r"我现在|我已经不|我不再|我搬到|我换成|改成了|换成了|已经换|现在改|"
    r"\bI now\b|\bI no longer\b|\bnot anymore\b|\bno longer\b|\bI(?:'ve| have) (?:moved|switched|changed)\b|"
    r"\bI(?:'m| am) now\b|\bnow I\b",
    re.I,
)
_STARTS_FIRST_PERSON = re.compile(r"^(?:我|I\b|I'm|I've|my\b)", re.I)
_FIRST_PERSON = re.compile(r"我|\b(?:I|I'm|I've|I'd|my|me)\b", re.I)

# Identity (seed 004 "core"): name and role.
_IDENTITY = re.compile(
    r"我叫|我的名字|叫我|我是(?![说不想觉在来问要因怎真刚第否这那个么])|"
    r"^作为(?:一名|一个)?.{1,12}[，,]|"
    r"\bcall me\b|\bmy name is\b|\bI(?:'m| am) (?:now |currently |also )?(?:a|an)\b(?! (?:bit|little|lot)\b)|"
    r"\bI work as\b|^as an? [a-z]+(?: [a-z]+){0,3},",
    re.I,
)
_PREFERENCE = re.compile(
    r"我(?:比较|更|最|很|也|还是|一直)?(?:不)?(?:喜欢|偏好|偏爱|爱用|讨厌|倾向)|我的偏好|"
    r"\bI (?:really |also |much |strongly )?(?:prefer|like|love|enjoy|hate|dislike)\b|"
    r"\bI (?:don't|do not) (?:like|want|enjoy)\b|\bmy favou?rite\b|"
    r"我(?:不再)?吃素|素食|我不(?:能)?吃|我不喝|\bI(?:'m| am) (?:a )?(?:vegetarian|vegan)\b|\bI (?:don't|do not|never) eat\b",
    re.I,
)
# Standing instructions: they only count when addressed to the assistant ("以后用中文回复" / "always answer...").
_STANDING_ZH = re.compile(
    r"(?:以后|下次|默认|始终|一律|总是|每次)(?:都|请|你|给我|也)*.{0,6}?"
    r"(?:用|回复|回答|叫我|称呼|给我|写|输出|先|要|别|不要|使用|加上|附上)|"
    r"(?:不要|别再|别(?![人的处])|永远不要|不用)(?:再|总是|每次)?.{0,10}?"
    r"(?:给我|帮我|用|回复|写|输出|加|叫我|发|使用|推荐|提醒)|"
    r"请(?:你)?(?:以后|总是|始终|默认|每次)"
)
_STANDING_EN = re.compile(
    r"^(?:please |and |also |so )?(?:always|never|don'?t ever|do not ever|from now on|going forward|"
    r"in the future|by default|next time)\b|\b(?:from now on|going forward|by default|next time)\b|"
    r"\byou should (?:always|never)\b|\bplease (?:always|never)\b|\bdon'?t (?:ever )?(?:use|call|send|write|"
    r"reply|answer|add|include)\b",
    re.I,
)
_HABIT = re.compile(
    r"我(?:通常|一般|每天|每周|平时|经常|总是|习惯)|\bI (?:usually|always|often|normally|typically|tend to)\b|"
    r"\bevery (?:day|morning|week)\b",
    re.I,
)
_FACT = re.compile(
    r"我(?:的)?(?:女儿|儿子|孩子|老婆|妻子|老公|丈夫|爸爸|妈妈|父母)|我住在|我来自|我在.{1,20}(?:工作|上班|上学|读书)|我的.{1,8}是|我对.{1,10}过敏|我有|我们公司|我们团队|"
    r"\bI live in\b|\bI(?:'m| am) from\b|\bI work (?:at|for|in|on)\b|\bI(?:'m| am) allergic\b|"
    r"\bmy [a-z]+(?: [a-z]+)? is\b|\bI have (?:a|an|two|three)\b|\bour (?:team|company)\b",
    re.I,
)
# Types of a kept sentence, in order of precedence.
_TYPE_CONSTRAINT = re.compile(
    r"不要|别|禁止|不能|不许|永远不|\bnever\b|\bdon'?t\b|\bdo not\b|\bavoid\b", re.I
)
_TYPE_STYLE = re.compile(
    r"回复|回答|输出|格式|语言|中文|英文|风格|简洁|表格|列表|\b(?:reply|answer|respond|format|language|style|"
    r"tone|concise|brief|bullet|table)\b",
    re.I,
)

# A changed tool or habit of choice is a preference ("我现在改用 Windows", "I've switched to Python").
_TYPE_CHOICE = re.compile(
    r"改用|换成|换用|\bswitched to\b|\binstead of\b|\bno longer (?:drink|eat|use)\b", re.I
)
_CLAUSE = re.compile(r"[，,]")

_LEAD_PUNCT = re.compile(r"^[\s，,。.!！：:、;；\"'“”]+")
_TRAIL_PUNCT = re.compile(r"[\s，,：:、;；。.!！]+$")


def split_sentences(text: str) -> list[str]:
    parts = [p.strip() for p in _SENTENCE_END.split(text)]
    return [p for p in parts if p]


def _clean(text: str) -> str:
    return _TRAIL_PUNCT.sub("", _LEAD_PUNCT.sub("", text)).strip()


def memory_type_of(text: str) -> str:
    """The memory type of a kept sentence: its first clause decides when it is specific."""
    first = _CLAUSE.split(text, maxsplit=1)[0]
    if first != text and _IDENTITY.search(first):
        return "core"
    if first != text and (_FACT.search(first) or _HABIT.match(first)):
        return "habit" if _HABIT.match(first) else "fact"
    return _type_of(text)


def _type_of(text: str) -> str:
    if _PREFERENCE.search(text) or _TYPE_CHOICE.search(text):
        return "preference"
    if _IDENTITY.search(text):
        return "core"
    if _TYPE_CONSTRAINT.search(text):
        return "constraint"
    if _HABIT.search(text):
        return "habit"
    if _STANDING_ZH.search(text) or _STANDING_EN.search(text) or _TYPE_STYLE.search(text):
        return "preference"
    return "fact"


def _standing(sentence: str) -> bool:
    if _STANDING_EN.search(sentence):
        return True
    return bool(_STANDING_ZH.search(sentence))


def sentence_candidate(sentence: str) -> Candidate | None:
    """The memory a single user sentence yields, or None."""
    sentence = sentence.strip()
    asked = _ASK_TO_REMEMBER.search(sentence)
    if _QUESTION.search(sentence) and not (asked and _REMEMBER.search(sentence)):
        # "I live in Toronto, what should I pack?": the statement before the question still counts.
        clauses = _CLAUSE.split(sentence)
        if len(clauses) < 2:
            return None
        return sentence_candidate("，".join(clauses[:-1]) if has_cjk(sentence) else ", ".join(clauses[:-1]))
    remember = _REMEMBER.search(sentence)
    if remember:
        rest = _clean(sentence[remember.end() :])
        if len(rest) < 4:
            return None
        return Candidate(
            rest, memory_type_of(rest), 0.95, correction=bool(_CORRECTION_INNER.search(rest)), rule="remember"
        )
    prefix = _CORRECTION_PREFIX.search(sentence)
    if prefix and prefix.end() > 0:
        rest = _clean(sentence[prefix.end() :])
        while (again := _CORRECTION_PREFIX.search(rest)) and again.end() > 0:
            rest = _clean(rest[again.end() :])
        if len(rest) >= 4 and (
            _STARTS_FIRST_PERSON.search(rest) or _standing(rest) or _IDENTITY.search(rest)
        ):
            return Candidate(rest, memory_type_of(rest), 0.9, correction=True, rule="correction")
        return None
    text = _clean(sentence)
    if _CORRECTION_INNER.search(text) and _FIRST_PERSON.search(text):
        return Candidate(text, memory_type_of(text), 0.9, correction=True, rule="correction")
    if _IDENTITY.search(text):
        return Candidate(text, memory_type_of(text), 0.9, rule="identity")
    if _PREFERENCE.search(text):
        return Candidate(text, "preference", 0.85, rule="preference")
    if _standing(text):
        return Candidate(text, memory_type_of(text), 0.9, rule="instruction")
    if _HABIT.search(text):
        return Candidate(text, "habit", 0.8, rule="habit")
    if _FACT.search(text):
        return Candidate(text, "fact", 0.8, rule="fact")
    return None


def message_too_short(content: str) -> bool:
    return len(content.strip()) < MIN_MESSAGE_CHARS


def extract_rules(messages: list[dict]) -> list[Candidate]:
    """Candidates from the user's messages of one turn, in order, without repeats."""
    out: list[Candidate] = []
    seen: set[str] = set()
    for message in messages:
        if message.get("role") not in USER_ROLES or message.get("context"):
            continue  # context messages belong to earlier turns, already extracted
        content = message.get("content") or ""
        if message_too_short(content):
            continue
        for sentence in split_sentences(content):
            candidate = sentence_candidate(sentence)
            if candidate is None:
                continue
            key = candidate.content.lower()
            if key in seen:
                continue
            seen.add(key)
            candidate.source_message_id = message.get("message_id") or ""
            out.append(candidate)
    return out
