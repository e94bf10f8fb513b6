"""The secret gate on the labelled gate set: what it refuses, per half, per class and language, and how fast.

    .venv/bin/python bench/gate.py [--compare OLD_SECRETS_PY] [--show-misses]

Runs core.secrets.sensitive_reason (what memory.gate.check_sensitive refuses on) over
bench/data/gate_tune.jsonl and bench/data/gate_heldout.jsonl (see bench/split_sets.py) and prints, per half:
secrets refused (overall, per class, per language), look-alikes refused (overall, per class), and the
microseconds per check (p50 / p95). --compare times another version of core/secrets.py on the same rows
(e.g. `git show main:core/secrets.py > /tmp/old_secrets.py`). --show-misses lists the tuning half's
misses and false refusals only: the held-out half is for measuring, not for fixing rows.

Needs no database and no network.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.secrets import sensitive_reason  # noqa: E402

HALVES = ("tune", "heldout")


def load(half: str) -> list[dict]:
    path = ROOT / f"bench/data/gate_{half}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def timings(check, rows: list[dict], repeat: int = 5) -> list[float]:
    """Microseconds per check, the best of `repeat` runs for each row."""
    out = []
    for row in rows:
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            check(row["text"])
            best = min(best, time.perf_counter() - start)
        out.append(best * 1e6)
    return out


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def rate(hits: int, total: int) -> str:
    return f"{hits}/{total} ({hits / total:.1%})" if total else "-"


def report(half: str, rows: list[dict], check, old_check, show_misses: bool) -> None:
    refused = {row["id"]: check(row["text"]) is not None for row in rows}
    secrets = [r for r in rows if r["label"] == "secret"]
    benign = [r for r in rows if r["label"] == "benign"]
    print(f"== {half}: {len(rows)} rows, {len(secrets)} secrets, {len(benign)} look-alikes")
    print(f"secrets refused: {rate(sum(refused[r['id']] for r in secrets), len(secrets))}")
    for title, key, group in (("language", "lang", secrets), ("class", "class", secrets)):
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in group:
            counts[r[key]][0] += refused[r["id"]]
            counts[r[key]][1] += 1
        print(f"  per {title}: " + ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(counts.items())))
    missed_classes = sorted({r["class"] for r in secrets if not refused[r["id"]]})
    print(f"  classes with a miss: {', '.join(missed_classes) or 'none'}")
    print(f"look-alikes refused: {rate(sum(refused[r['id']] for r in benign), len(benign))}")
    counts = defaultdict(lambda: [0, 0])
    for r in benign:
        counts[r["class"]][0] += refused[r["id"]]
        counts[r["class"]][1] += 1
    print("  per class: " + ", ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(counts.items())))
    us = timings(check, rows)
    line = f"us per check: p50 {pct(us, 50):.0f}, p95 {pct(us, 95):.0f}, max {max(us):.0f}"
    if old_check is not None:
        old = timings(old_check, rows)
        line += f" (old: p50 {pct(old, 50):.0f}, p95 {pct(old, 95):.0f}; ratio p50 {pct(us, 50) / pct(old, 50):.1f}x)"
    print(line)
    if show_misses and half == "tune":
        for r in rows:
            if refused[r["id"]] != (r["label"] == "secret"):
                print(
                    f"  {'MISS' if r['label'] == 'secret' else 'FALSE'} {r['id']} {r['class']}: {r['text']!r}"
                )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", help="another core/secrets.py to time against")
    parser.add_argument("--show-misses", action="store_true", help="list the tuning half's errors")
    args = parser.parse_args()
    old_check = None
    if args.compare:
        spec = importlib.util.spec_from_file_location("old_secrets", args.compare)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        old_check = module.sensitive_reason
    for half in HALVES:
        report(half, load(half), sensitive_reason, old_check, args.show_misses)


if __name__ == "__main__":
    main()
