"""Calibrate the duplicate threshold of the local embedding model on labelled pairs.

Embeds every pair of bench/data/dedup_pairs.jsonl with multilingual-e5-small (passage side, as stored
memories are), sweeps cosine thresholds and prints precision / recall / F1 of "duplicate" per language
group (zh, en, cross) for cosine alone and for cosine + memory.dedup.differs_materially (the veto).
Also the "related" threshold (duplicate or same subject with a new value vs distinct).

    .venv/bin/python bench/dedup_calibration.py [--pairs FILE] [--threshold 0.93] [--step 0.005]

Needs no database and no network.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.dedup import differs_materially  # noqa: E402
from memory.embeddings.local import LocalE5Provider  # noqa: E402

GROUPS = ("zh", "en", "cross", "all")


def prf(rows, predicate) -> tuple[float, float, float, int, int, int]:
    tp = sum(1 for r in rows if predicate(r) and r["label"] == "duplicate")
    fp = sum(1 for r in rows if predicate(r) and r["label"] != "duplicate")
    fn = sum(1 for r in rows if not predicate(r) and r["label"] == "duplicate")
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f, tp, fp, fn


def related_prf(rows, t):
    pos = {"duplicate", "update"}
    tp = sum(1 for r in rows if r["cos"] >= t and r["label"] in pos)
    fp = sum(1 for r in rows if r["cos"] >= t and r["label"] not in pos)
    fn = sum(1 for r in rows if r["cos"] < t and r["label"] in pos)
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def subset(rows, group):
    return rows if group == "all" else [r for r in rows if r["group"] == group]


def sweep(rows, use_veto: bool, step: float):
    """The threshold with the best F1 of "duplicate" on these rows (ties: the higher threshold)."""
    best = (0.0, -1.0)
    steps = int(round((0.995 - 0.80) / step))
    for i in range(steps + 1):
        t = round(0.80 + i * step, 3)
        f = prf(rows, lambda r, t=t: r["cos"] >= t and not (use_veto and r["veto"]))[2]
        if f >= best[1] - 1e-9:
            best = (t, f)
    return best


def merged(row, same: float, cross: float, use_veto: bool) -> bool:
    t = cross if row["group"] == "cross" else same
    return row["cos"] >= t and not (use_veto and row["veto"])


def report(rows, same, cross, use_veto, title):
    print(f"\n{title}: same-language threshold {same:.3f}, cross-lingual {cross:.3f}")
    print(f"  {'group':6} {'pairs':>5} {'P':>6} {'R':>6} {'F1':>6}   tp  fp  fn")
    for group in GROUPS:
        sub = subset(rows, group)
        p, r, f, tp, fp, fn = prf(sub, lambda x: merged(x, same, cross, use_veto))
        print(f"  {group:6} {len(sub):5d} {p:6.3f} {r:6.3f} {f:6.3f}  {tp:3d} {fp:3d} {fn:3d}")
    wrong = [x for x in rows if merged(x, same, cross, use_veto) and x["label"] != "duplicate"]
    by_kind: dict[str, int] = {}
    for x in wrong:
        kind = f"{x['label']}/{x['hard']}" if x["hard"] else x["label"]
        by_kind[kind] = by_kind.get(kind, 0) + 1
    print(f"  false merges by kind: {by_kind or '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", default=str(ROOT / "bench/data/dedup_pairs.jsonl"))
    parser.add_argument("--threshold", type=float, help="also report at this threshold")
    parser.add_argument("--step", type=float, default=0.005)
    parser.add_argument("--same", type=float, help="report at this same-language threshold (with --cross)")
    parser.add_argument("--cross", type=float, help="report at this cross-lingual threshold (with --same)")
    parser.add_argument(
        "--veto-from", help="take differs_materially from this .py file (e.g. an older dedup.py)"
    )
    parser.add_argument(
        "--show-errors", action="store_true", help="print misjudged pairs at the chosen threshold"
    )
    args = parser.parse_args()

    veto = differs_materially
    if args.veto_from:
        import importlib.util

        spec = importlib.util.spec_from_file_location("veto_module", args.veto_from)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        veto = module.differs_materially
    rows = [json.loads(line) for line in Path(args.pairs).read_text().splitlines() if line.strip()]
    provider = LocalE5Provider()
    started = time.perf_counter()
    va = provider.embed_passages([r["a"] for r in rows])
    vb = provider.embed_passages([r["b"] for r in rows])
    for r, a, b in zip(rows, va, vb, strict=True):
        r["cos"] = sum(x * y for x, y in zip(a, b, strict=True))
        r["veto"] = veto(r["a"], r["b"])
    print(f"{len(rows)} pairs embedded with {provider.model_name} in {time.perf_counter() - started:.1f}s")
    counts: dict[tuple, int] = {}
    for r in rows:
        counts[(r["group"], r["label"])] = counts.get((r["group"], r["label"]), 0) + 1
    print("pairs:", ", ".join(f"{g}/{lbl}={n}" for (g, lbl), n in sorted(counts.items())))
    for label in ("duplicate", "update", "distinct"):
        cos = sorted(r["cos"] for r in rows if r["label"] == label)
        print(f"cosine of {label:9}: min {cos[0]:.3f}  median {cos[len(cos) // 2]:.3f}  max {cos[-1]:.3f}")
    vetoed = {
        label: sum(1 for r in rows if r["veto"] and r["label"] == label)
        for label in ("duplicate", "update", "distinct")
    }
    print(f"veto fires on: {vetoed}")

    same_rows = [r for r in rows if r["group"] != "cross"]
    cross_rows = subset(rows, "cross")
    chosen = {}
    for use_veto, title in ((False, "cosine alone"), (True, "cosine + veto")):
        same, _ = sweep(same_rows, use_veto, args.step)
        cross, _ = sweep(cross_rows, use_veto, args.step)
        chosen[use_veto] = (same, cross)
        report(rows, same, cross, use_veto, f"{title} (best F1 per language pair)")
    if args.threshold:
        report(rows, args.threshold, args.threshold, False, f"cosine alone at {args.threshold}")
        report(rows, args.threshold, args.threshold, True, f"cosine + veto at {args.threshold}")
    if args.same and args.cross:
        report(rows, args.same, args.cross, False, "cosine alone at the configured defaults")
        report(rows, args.same, args.cross, True, "cosine + veto at the configured defaults")

    best_rel = max(
        ((round(0.80 + i * args.step, 3),) + related_prf(rows, 0.80 + i * args.step) for i in range(40)),
        key=lambda x: x[3],
    )
    print(
        f"\nrelated (duplicate or update vs distinct), cosine alone: best F1 {best_rel[3]:.3f} at {best_rel[0]:.3f}"
        f" (P {best_rel[1]:.3f} R {best_rel[2]:.3f})"
    )
    if args.show_errors:
        print("\nmisjudged by cosine + veto at its chosen thresholds:")
        for r in rows:
            if merged(r, *chosen[True], True) != (r["label"] == "duplicate"):
                print(
                    f"  {r['group']:5} {r['label']:9} cos {r['cos']:.3f} veto {r['veto']!s:5} {r['a']} | {r['b']}"
                )


if __name__ == "__main__":
    main()
