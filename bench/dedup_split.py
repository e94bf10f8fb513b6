"""Split bench/data/dedup_cases.jsonl into a tuning half and a held-out half.

Stratified by label x group, shuffled with random.Random(14): the same input always gives the same
halves. Written once, before the classifier was changed; tune on dedup_tune.jsonl only.

    .venv/bin/python bench/dedup_split.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    rows = [json.loads(line) for line in (DATA / "dedup_cases.jsonl").read_text().splitlines() if line]
    rng = random.Random(14)
    strata: dict[tuple, list] = {}
    for row in rows:
        strata.setdefault((row["label"], row["group"]), []).append(row)
    tune, heldout = [], []
    for key in sorted(strata):
        group = strata[key]
        rng.shuffle(group)
        half = len(group) // 2
        tune.extend(group[:half])
        heldout.extend(group[half:])
    for name, part in (("dedup_tune.jsonl", tune), ("dedup_heldout.jsonl", heldout)):
        part.sort(key=lambda r: r["id"])
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part)
        (DATA / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(part)} pairs")


if __name__ == "__main__":
    main()
