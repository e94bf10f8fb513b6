"""Split a labelled set into a tuning half and a held-out half, stratified by class, by a fixed seed.

    .venv/bin/python bench/split_sets.py [--cases bench/data/gate_cases.jsonl] [--seed 14] [--by class]

Writes <name>_tune.jsonl and <name>_heldout.jsonl next to the input (gate_cases.jsonl -> gate_tune.jsonl,
gate_heldout.jsonl). Within each class the rows are shuffled by random.Random(seed) (one generator, classes
in sorted order); the first half (rounded down) is for tuning, the rest is held out. Rerunning reproduces
the committed files byte for byte. --by names the fields that make a class (comma-separated: the
extraction set is split by "lang,class", so each language keeps half of each class).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def split(rows: list[dict], seed: int, by: tuple[str, ...] = ("class",)) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    by_class: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_class["/".join(str(row[key]) for key in by)].append(row)
    tune, heldout = [], []
    for name in sorted(by_class):
        group = list(by_class[name])
        rng.shuffle(group)
        half = len(group) // 2
        tune += group[:half]
        heldout += group[half:]
    order = {row["id"]: i for i, row in enumerate(rows)}
    return sorted(tune, key=lambda r: order[r["id"]]), sorted(heldout, key=lambda r: order[r["id"]])


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=str(ROOT / "bench/data/gate_cases.jsonl"))
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--by", default="class", help="the fields that make a class, comma-separated")
    args = parser.parse_args()
    source = Path(args.cases)
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    tune, heldout = split(rows, args.seed, tuple(args.by.split(",")))
    stem = source.stem.removesuffix("_cases")
    write(source.with_name(f"{stem}_tune.jsonl"), tune)
    write(source.with_name(f"{stem}_heldout.jsonl"), heldout)
    print(f"{len(rows)} rows -> {len(tune)} tune, {len(heldout)} held out (seed {args.seed})")


if __name__ == "__main__":
    main()
