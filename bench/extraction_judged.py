"""Extraction judged by a reader: precision and recall of the rule path by verdicts, not by a similarity threshold.

    .venv/bin/python bench/extraction_judged.py [--set held-out|probe9|...|probe43 ...]
        [--judge a|b] [--show-new] [--show-wrong SET] [--agreement]
    scripts/devservices.py exec -- .venv/bin/python bench/extraction_judged.py --stored post|turns [--set ...]

Why. bench/extraction.py matches a candidate to an expected statement by e5 cosine >= 0.92 plus token
overlap. Hand checks of its false positives found about half of them right statements in other words
(probe5 26 of 42, probe6 15 of 30, probe10 19 of 30), so its precision and recall say as much about the
labels' wording as about the rules. Here every candidate the rules wrote for a set was judged by a reader
who saw the conversation, the expected statements and the must-not list, following
bench/data/extraction_judging_rubric.md (strict: a fragment, a dangling pronoun, task residue, a moment,
a corrected or taken-back value, someone else's taste are wrong; a right fact in other words is right):
- every candidate: correct or wrong, with a short reason;
- every expected statement: the candidates that state it (none: a miss).
The verdicts are in bench/data/extraction_judged_<set>_<judge>.jsonl, keyed by the candidate's text, so the
rules can change: a candidate whose text was judged keeps its verdict, a new text is "unjudged" (counted,
listed by --show-new, left out of precision) until a reader judges it, and an expected statement counts as
found when a candidate that states it is still written (a new candidate may find more: recall is a lower
bound while anything is unjudged).

Judges (readers who saw neither the rules nor the other judge's verdicts): "a" judged every set, "b" the
held-out half and probe12 to probe43 a second time (--agreement prints how often the two agree, and how often the
automatic match of bench/extraction.py agrees with each).

Sets: the held-out half (bench/data/extraction_heldout.jsonl, evidence), probe9 and probe10 (read and tuned
on), probe11 (never read), probe12 to probe15 (written in the judged round, each judged before it was read,
then tuned on), probe16 (never read), probe17 (written in the typed-as-sent round, judged before it was
read, then tuned on), probe18 (never read), probe19 (judged before it was read, then tuned on), probe20
(judged on the start rules of the session that wrote it, then read and tuned on), probe21 (judged when
written, then read and tuned on in the next session), probe22 (judged on the rules of the session that wrote
it, then read and tuned on in the next), probe23 and probe24 (judged before they were read, then tuned on),
probe25 (judged when written, read and tuned on in the next session) and probe26 (never read; judged on the
start rules of the session that wrote it, scored again on its end rules) and probe27 (never read; judged on the
end rules of that session); in the next session probe26 and then probe27 were read and tuned on, probe28 (a new
author's) was judged on the rules after the probe26 round, scored again after the probe27 round and then read and
tuned on, probe29 (never read) was judged after the probe27 round and scored again at the end, and probe30 (never
read) was judged on the final rules. probe31 (a new author's, never read) was judged on the rules of the next
session's end. In the session after, probe29 was read and tuned on, and probe32 (a new author's, never read) was
judged on that session's start rules and its new texts again at the end; so was probe33 (another new author's,
never read), written later in the same session; probe34 (a third new author's, never read) was judged on that
session's end rules. In the next session probe34 was read and tuned on, and probe35 (a fourth new author's, never
read) was judged on that session's end rules. In the session after, probe35 was read and tuned on, and probe36 (a
fifth new author's, never read) was judged on the union of that session's start rules and its rules of mid-session,
and its new texts again at the end; so was probe37 (a sixth new author's, never read), written later in
the same session. In the next session probe36 was read and tuned on, and probe38 (a seventh new author's, never
read) was judged on that session's start rules, and probe39 (an eighth new author's, never read) on its end rules. In
the session after, probe38 was read and tuned on, and probe40 (a ninth new author's, never read) was judged on that
session's end rules. In the next session two new authors wrote sets of corrections and changes (70 conversations each,
with 30 look-alikes): probe41, judged whole on that session's start rules, then read and tuned on, and probe42 (never
read), judged whole on the start rules and its new texts again mid-session and at the end; probe43 (a third such
author's, never read) was judged whole on the end rules. In the session after, probe40 was read and tuned on (its
three new texts judged by both judges).
No database: the rules run in this process (the model is loaded only with --agreement). With --stored, what
is scored is what stays active after the whole write path (the gate, duplicates, supersedes, the session cap,
take-backs), each conversation posted to a new user's session as one post or turn by turn (each user message
with the replies after it), in Django's test database; a memory text no judge has seen counts as unjudged.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ.setdefault("OMP_NUM_THREADS", "1")
DATA = ROOT / "bench" / "data"
SETS = {
    "held-out": "extraction_heldout",
    "probe9": "extraction_probe9",
    "probe10": "extraction_probe10",
    "probe11": "extraction_probe11",
    "probe12": "extraction_probe12",
    "probe13": "extraction_probe13",
    "probe14": "extraction_probe14",
    "probe15": "extraction_probe15",
    "probe16": "extraction_probe16",
    "probe17": "extraction_probe17",
    "probe18": "extraction_probe18",
    "probe19": "extraction_probe19",
    "probe20": "extraction_probe20",
    "probe21": "extraction_probe21",
    "probe22": "extraction_probe22",
    "probe23": "extraction_probe23",
    "probe24": "extraction_probe24",
    "probe25": "extraction_probe25",
    "probe26": "extraction_probe26",
    "probe27": "extraction_probe27",
    "probe28": "extraction_probe28",
    "probe29": "extraction_probe29",
    "probe30": "extraction_probe30",
    "probe31": "extraction_probe31",
    "probe32": "extraction_probe32",
    "probe33": "extraction_probe33",
    "probe34": "extraction_probe34",
    "probe35": "extraction_probe35",
    "probe36": "extraction_probe36",
    "probe37": "extraction_probe37",
    "probe38": "extraction_probe38",
    "probe39": "extraction_probe39",
    "probe40": "extraction_probe40",
    "probe41": "extraction_probe41",
    "probe42": "extraction_probe42",
    "probe43": "extraction_probe43",
}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def verdicts(name: str, judge: str) -> dict[str, dict] | None:
    path = DATA / f"{SETS[name].replace('extraction_', 'extraction_judged_')}_{judge}.jsonl"
    return {row["id"]: row for row in load(path)} if path.is_file() else None


def rule_texts(row: dict) -> list[str]:
    """What the rules write for the conversation, read as one post (not the candidates they hold for a person to
    accept, `unsure`: see held_texts)."""
    from memory.extraction.rules import extract_rules

    return list(dict.fromkeys(c.content for c in extract_rules(row["messages"]) if not c.unsure))


def held_texts(row: dict) -> list[str]:
    """The candidates the rules hold on the job for a person to accept (not worded as a statement)."""
    from memory.extraction.rules import extract_rules

    return list(dict.fromkeys(c.content for c in extract_rules(row["messages"]) if c.unsure))


def turns(messages: list[dict]) -> list[list[dict]]:
    """The conversation as an agent posts it: each user message with the replies after it."""
    out: list[list[dict]] = []
    for message in messages:
        if not out or (message["role"] == "human" and any(m["role"] == "human" for m in out[-1])):
            out.append([])
        out[-1].append(message)
    return out


class Stored:
    """What stays active after the whole write path (gate, duplicates, supersede, the session cap, take-backs):
    each conversation posted to its own session of a new user, as one post or turn by turn, its jobs run."""

    def __init__(self, by_turn: bool):
        from memory.models import MemoryItem, Status
        from projects.models import Organization

        self.by_turn = by_turn
        self.org = Organization.objects.create(name="Judged", slug=f"judged-{'turns' if by_turn else 'post'}")
        self.active = lambda user: list(
            MemoryItem.objects.filter(org=self.org, user_id=user, status=Status.ACTIVE).values_list(
                "content", flat=True
            )
        )

    def __call__(self, row: dict) -> list[str]:
        from checkpoints.services import messages_append
        from memory.extraction.services import extraction_job_run

        user = f"{row['id']}-{'turns' if self.by_turn else 'post'}"
        for part in turns(row["messages"]) if self.by_turn else [row["messages"]]:
            _, _, job = messages_append(
                org=self.org, session_id=f"s-{user}", user_id=user, messages=part, extract=True
            )
            if job is not None:
                assert extraction_job_run(job_id=job.pk) == "done"
        return self.active(user)


def score(
    name: str, judge: str, show_new: bool, show_wrong: bool, written_of=rule_texts, title: str = ""
) -> None:
    from extraction import must_not_hit

    judged = verdicts(name, judge)
    if judged is None:
        print(f"{name}: no verdicts of judge {judge}")
        return
    groups: dict[str, Counter] = defaultdict(Counter)
    for row in load(DATA / f"{SETS[name]}.jsonl"):
        verdict = judged[row["id"]]
        written = written_of(row)
        written_set = set(written)
        judged_texts = [verdict["candidates"][text] for text in written if text in verdict["candidates"]]
        counts = Counter(
            convs=1,
            written=len(written),
            unjudged=len(written) - len(judged_texts),
            correct=sum(v["verdict"] == "correct" for v in judged_texts),
            expected=len(verdict["expected"]),
            found=sum(bool(written_set.intersection(stating)) for stating in verdict["expected"].values()),
        )
        counts["must-not"] = int(must_not_hit(written, row["must_not"]))
        if written_of is rule_texts:
            held = held_texts(row)
            counts["held"] = len(held)
            counts["held-right"] = sum(
                verdict["candidates"].get(text, {}).get("verdict") == "correct" for text in held
            )
        for key in ("all", row["lang"]):
            groups[key].update(counts)
        if show_new:
            for text in written:
                if text not in verdict["candidates"]:
                    print(f"  new  {row['id']}: {text}")
        if show_wrong:
            for text in written:
                if (v := verdict["candidates"].get(text)) and v["verdict"] == "wrong":
                    print(f"  wrong  {row['id']}: {text}  ({v['reason']})")
    print(f"\n{name}, judge {judge}{title}")
    print(
        f"{'group':<8}{'convs':>6}{'written':>9}{'unjudged':>10}{'precision':>11}{'recall':>8}{'must-not':>10}"
    )
    if groups["all"]["held"]:
        print(
            f"(held on the job for a person to accept, not counted above: {groups['all']['held']} texts, "
            f"{groups['all']['held-right']} of them judged right)"
        )
    for key in ("all", "zh", "en", "mixed"):
        g = groups[key]
        if not g["convs"]:
            continue
        judged_n = g["written"] - g["unjudged"]
        precision = g["correct"] / judged_n if judged_n else 1.0
        recall = g["found"] / g["expected"] if g["expected"] else 1.0
        print(
            f"{key:<8}{g['convs']:>6}{g['written']:>9}{g['unjudged']:>10}{precision:>11.3f}{recall:>8.3f}"
            f"{g['must-not'] / g['convs']:>10.3f}"
        )


def agreement(name: str) -> None:
    """How often judge a and b agree, and how often the automatic match agrees with each (on the judged texts)."""
    from extraction import Scorer

    scorer = Scorer()
    judges = {j: v for j in ("a", "b") if (v := verdicts(name, j)) is not None}
    counts: Counter = Counter()
    for row in load(DATA / f"{SETS[name]}.jsonl"):
        first = judges["a"][row["id"]]
        texts = list(first["candidates"])
        expected = list(first["expected"])
        pairs = scorer.match(texts, expected)
        auto_ok = scorer.supported(texts, expected)
        for i, _j in pairs:
            auto_ok[i] = True
        auto_found = {expected[j] for _i, j in pairs}
        for judge, verdict in judges.items():
            mine = verdict[row["id"]]
            for text, ok in zip(texts, auto_ok, strict=True):
                counts[f"candidate auto={judge}"] += ok == (mine["candidates"][text]["verdict"] == "correct")
            for statement in expected:
                counts[f"expected auto={judge}"] += (statement in auto_found) == bool(
                    mine["expected"][statement]
                )
        if "b" in judges:
            second = judges["b"][row["id"]]
            for text in texts:
                counts["candidate a=b"] += (
                    first["candidates"][text]["verdict"] == second["candidates"][text]["verdict"]
                )
            for statement in expected:
                counts["expected a=b"] += bool(first["expected"][statement]) == bool(
                    second["expected"][statement]
                )
        counts["candidates"] += len(texts)
        counts["expected"] += len(expected)
    print(
        f"\n{name}: agreement on {counts['candidates']} candidates and {counts['expected']} expected statements"
    )
    for key in sorted(k for k in counts if "=" in k):
        total = counts["candidates" if key.startswith("candidate") else "expected"]
        print(f"  {key:<22}{counts[key] / total:>7.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=list(SETS), help="default: all of them")
    parser.add_argument("--judge", default="a", choices=["a", "b"])
    parser.add_argument("--show-new", action="store_true", help="list the candidates no judge has seen")
    parser.add_argument(
        "--show-wrong",
        metavar="SET",
        help="list the candidates judged wrong of one set (not held-out while tuning)",
    )
    parser.add_argument(
        "--agreement", action="store_true", help="judge a against judge b and the automatic match"
    )
    parser.add_argument(
        "--stored",
        choices=["post", "turns"],
        help="score what stays active after the write path (needs the database: scripts/devservices.py exec), "
        "each conversation sent as one post or turn by turn, instead of what the rules write",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    import django

    django.setup()
    names = args.set or ([args.show_wrong] if args.show_wrong else list(SETS))
    if not args.stored:
        for name in names:
            score(name, args.judge, args.show_new, args.show_wrong == name)
            if args.agreement:
                agreement(name)
        return
    from bench.ingest import owned_test_databases

    with owned_test_databases():
        stored = Stored(by_turn=args.stored == "turns")
        title = f", stored ({'turn by turn' if stored.by_turn else 'one post'})"
        for name in names:
            score(name, args.judge, args.show_new, args.show_wrong == name, written_of=stored, title=title)


if __name__ == "__main__":
    main()
