"""Build the bilingual search set from its hand-written source, then split it.

    .venv/bin/python bench/bilingual_build.py

bench/data/bilingual_source.txt holds 30 subjects, each with its own memories (`m<N> <date> <type> <text>`)
and questions (`q <kind> <expected keys> | <question>`; `-` for a negative question, a topic the subject
never mentioned). For "now" questions the first key is the version valid now and the second the stale
one; for "past" questions the first is the old version. bench/data/bilingual_pool.txt holds everyday
memories (one Chinese and one English phrasing of each, lines 1-30 and 31-60) that fill every subject's
store as realistic distractors: each subject gets 12 in its own language and 4 in the other, chosen by a
fixed seed, skipping any whose topic words appear in the subject's own memories or questions (so a
negative question never has an answer hidden in the filler).

Writes bench/data/bilingual_memories.jsonl (one subject a line) and bench/data/bilingual_cases.jsonl (one
question a line, `class` = kind), then bilingual_tune.jsonl / bilingual_heldout.jsonl with
bench/split_sets.py's stratified split (seed 16). Rerunning reproduces the files byte for byte.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from split_sets import split, write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench/data"
SEED = 16
KINDS = {
    "paraphrase": "paraphrase",
    "cross": "cross-lingual",
    "multihop": "multi-hop",
    "now": "now",
    "past": "past",
    "keyword": "keyword",
    "mixed": "code-mixed",
    "negative": "negative",
}
# Topic words of the pool lines (by pair number, 0-29): a subject whose own texts contain any of them
# does not get that filler.
POOL_TOPICS = {
    2: ["吸尘", "vacuum", "双十一", "black friday"],
    3: ["电影", "film", "movie", "imax"],
    4: ["生日", "蛋糕", "gift"],
    7: ["快递", "parcel"],
    9: ["火锅", "roast", "hotpot"],
    11: ["流量", "手机", "phone", "mobile"],
    12: ["咖啡", "coffee", "v60", "手冲"],
    13: ["空气炸锅", "air fryer"],
    15: ["话剧", "comedy"],
    16: ["地铁", "通勤", "train", "commut"],
    18: ["牙", "tooth", "dentist"],
    19: ["结婚", "married", "wedding"],
    21: ["课", "podcast", "history"],
    22: ["笔记本", "电脑", "laptop"],
    23: ["奶茶", "bubble tea"],
    25: ["路由", "wi-fi", "wifi"],
    26: ["书", "book", "read"],
    27: ["血压", "blood pressure", "父母", "parents"],
    28: ["专注", "focus", "pomodoro"],
    29: ["颈", "neck", "pillow", "枕"],
}
_MEMORY = re.compile(r"^(m\d+) (\d{4}-\d{2}-\d{2}) (\w+) (.+)$")
_QUESTION = re.compile(r"^q (\w+) ([\w,-]+) \| (.+)$")


def is_chinese(text: str) -> bool:
    return sum("\u4e00" <= c <= "\u9fff" for c in text) * 2 > len(re.sub(r"\s", "", text)) * 0.5


def parse(source: str) -> list[dict]:
    subjects, current = [], None
    for line in source.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("## "):
            current = {"user": line[3:], "memories": [], "questions": []}
            subjects.append(current)
        elif m := _MEMORY.match(line):
            key, date, memory_type, text = m.groups()
            current["memories"].append(
                {"key": key, "content": text, "memory_type": memory_type, "occurred_at": f"{date}T09:00:00Z"}
            )
        elif q := _QUESTION.match(line):
            kind, keys, text = q.groups()
            expected = [] if keys == "-" else keys.split(",")
            known = {m["key"] for m in current["memories"]}
            assert set(expected) <= known, (current["user"], line)
            current["questions"].append({"kind": KINDS[kind], "expected": expected, "query": text})
        else:
            raise ValueError(f"unreadable line: {line!r}")
    return subjects


def add_fillers(subjects: list[dict], pool: list[str], rng: random.Random) -> None:
    zh, en = pool[:30], pool[30:]
    for subject in subjects:
        own = " ".join(
            [m["content"] for m in subject["memories"]] + [q["query"] for q in subject["questions"]]
        )
        own = own.lower()
        allowed = [i for i in range(30) if not any(w in own for w in POOL_TOPICS.get(i, []))]
        rng.shuffle(allowed)
        chinese = sum(is_chinese(m["content"]) for m in subject["memories"]) * 2 > len(subject["memories"])
        first, second = (zh, en) if chinese else (en, zh)
        picks = [(first, i) for i in allowed[:12]] + [(second, i) for i in allowed[12:16]]
        for n, (lines, i) in enumerate(picks):
            month, day = rng.randint(1, 12), rng.randint(1, 28)
            subject["memories"].append(
                {
                    "key": f"f{n + 1}",
                    "content": lines[i],
                    "memory_type": "note" if n % 3 == 0 else "fact",
                    "occurred_at": f"2024-{month:02d}-{day:02d}T20:00:00Z",
                }
            )


def main() -> None:
    subjects = parse((DATA / "bilingual_source.txt").read_text(encoding="utf-8"))
    pool = [line.split(" ", 1)[1] for line in (DATA / "bilingual_pool.txt").read_text().splitlines() if line]
    assert len(pool) == 60
    add_fillers(subjects, pool, random.Random(SEED))
    rows = []
    for subject in subjects:
        for n, question in enumerate(subject.pop("questions")):
            rows.append(
                {
                    "id": f"{subject['user']}-q{n + 1:02d}",
                    "class": question["kind"],
                    "user": subject["user"],
                    "query": question["query"],
                    "expected": question["expected"],
                }
            )
    write(DATA / "bilingual_memories.jsonl", subjects)
    write(DATA / "bilingual_cases.jsonl", rows)
    tune, heldout = split(rows, SEED)
    write(DATA / "bilingual_tune.jsonl", tune)
    write(DATA / "bilingual_heldout.jsonl", heldout)
    memories = sum(len(s["memories"]) for s in subjects)
    kinds = {}
    for row in rows:
        kinds[row["class"]] = kinds.get(row["class"], 0) + 1
    print(f"{len(subjects)} subjects, {memories} memories, {len(rows)} questions: {kinds}")
    print(f"-> {len(tune)} tune, {len(heldout)} held out (seed {SEED})")


if __name__ == "__main__":
    main()
