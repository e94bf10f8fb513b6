"""Duplicate / update / distinct on labelled pairs: the old write-time decision next to the classifier.

Embeds every pair (existing text a, incoming text b) with multilingual-e5-small, passage side as stored
memories are, and prints for each pair file, per label, hard-negative class / update slot and language
group:
- false merges: pairs merged that are not duplicates, as % of the distinct + update pairs;
- duplicate recall: duplicates merged;
- updates recognised: update pairs classified "update" (superseded: not merged, not left side by side);
- distinct kept: distinct pairs classified "distinct";
- the confusion matrix (label x decision).
Three decisions side by side: "add" (the single add and batch before the classifier: cosine at the old
thresholds 0.955 / 0.88 + memory.dedup.differs_materially, merge or add), "reconcile" (extraction's
threshold decision before the classifier, frozen in this file: merge / supersede / add) and "classify" (memory.classify.classify, now used by all three).

The files: bench/data/dedup_tune.jsonl (tuned on), bench/data/dedup_heldout.jsonl (never tuned on: the
evidence), bench/data/dedup_pairs.jsonl (the older set). Both halves come from dedup_cases.jsonl
(bench/dedup_split.py, seed 14).

    .venv/bin/python bench/dedup_calibration.py [--pairs FILE ...] [--show-errors] [--sweep]
        [--same 0.955 --cross 0.88]   cosine + veto at these thresholds, as the old report did
        [--veto-from OLD_DEDUP.py]    the old decision with another module's differs_materially

Needs no database and no network.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

from core.text import CJK_CHAR  # noqa: E402
from memory import classify as classify_module  # noqa: E402
from memory import dedup  # noqa: E402
from memory.classify import classify  # noqa: E402
from memory.embeddings.local import LocalE5Provider  # noqa: E402

DATA = ROOT / "bench/data"
DEFAULT_FILES = ("dedup_tune.jsonl", "dedup_heldout.jsonl", "dedup_pairs.jsonl")
LABELS = ("duplicate", "update", "distinct")
METHODS = ("add", "reconcile", "classify")


# The duplicate thresholds of e5-small before memory.classify (main at 9beb8db), for the old decision.
OLD_THRESHOLDS = {"duplicate": 0.955, "duplicate_cross": 0.88}


def decide_add(row, model, veto) -> str:
    cross = dedup.is_cross_lingual(row["a"], row["b"])
    threshold = OLD_THRESHOLDS["duplicate_cross" if cross else "duplicate"]
    merge = row["cos"] >= threshold and not veto(row["a"], row["b"])
    return "duplicate" if merge else "distinct"


# Extraction's threshold decision before the classifier (main at 9beb8db, without its correction
# handling, which is unchanged), frozen here as the baseline.
_CHANGE_WORDS = {
    "actually",
    "now",
    "no",
    "longer",
    "anymore",
    "instead",
    "currently",
    "still",
    "really",
    "also",
}
_CJK_FUNCTION = set("的了是在我你他她它很也都和与就还吧呢啊呀把被给着过现已经再其实又")


def _swaps_value(old: str, new: str) -> bool:
    def value_tokens(text):
        text = text.lower()
        words = {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in re.findall(r"[a-z0-9]+", text)}
        return (words - _CHANGE_WORDS) | (set(CJK_CHAR.findall(text)) - _CJK_FUNCTION)

    a, b = value_tokens(old), value_tokens(new)
    return bool(a - b) and bool(b - a)


def decide_reconcile(row, veto) -> str:
    a, b, cos = row["a"], row["b"], row["cos"]
    cross = dedup.is_cross_lingual(a, b)
    if cos >= OLD_THRESHOLDS["duplicate_cross" if cross else "duplicate"]:
        return "update" if veto(a, b) or (not cross and _swaps_value(a, b)) else "duplicate"
    if cos >= OLD_THRESHOLDS["duplicate"] - 0.055 and veto(a, b):
        return "update"
    return "distinct"


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else 0.0


def kind(row) -> str:
    """The hard-negative class or update slot of a row (older files: their "hard" field)."""
    return row.get("class") or row.get("slot") or row.get("hard") or "-"


def metrics(rows, method) -> dict:
    dups = [r for r in rows if r["label"] == "duplicate"]
    upds = [r for r in rows if r["label"] == "update"]
    dist = [r for r in rows if r["label"] == "distinct"]
    nondup = upds + dist
    merged = [r for r in nondup if r[method] == "duplicate"]

    def pct(part, whole):
        return f"{100 * len(part) / len(whole):5.1f}%" if whole else "    -"

    return {
        "n": len(rows),
        "false_merge": pct(merged, nondup),
        "false_merge_n": f"{len(merged)}/{len(nondup)}",
        "dup_recall": pct([r for r in dups if r[method] == "duplicate"], dups),
        "upd_recognised": pct([r for r in upds if r[method] == "update"], upds),
        "distinct_kept": pct([r for r in dist if r[method] == "distinct"], dist),
    }


def line(title, rows, methods) -> str:
    cells = []
    for method in methods:
        m = metrics(rows, method)
        cells.append(
            f"{m['false_merge']} ({m['false_merge_n']:>7}) {m['dup_recall']} {m['upd_recognised']} {m['distinct_kept']}"
        )
    return f"  {title:28} {len(rows):4d}  " + "  |  ".join(cells)


def report(name, rows, methods, show_errors: bool) -> None:
    print(f"\n=== {name}: {len(rows)} pairs ===")
    head = "false merges       dup rec  upd rec  kept  "
    print(f"  {'':28} {'n':>4}  " + "  |  ".join(f"{m:>9}: {head}" for m in methods))
    print(line("all", rows, methods))
    print(" by group")
    for group in sorted({r["group"] for r in rows}):
        print(line(group, [r for r in rows if r["group"] == group], methods))
    for label in LABELS:
        sub = [r for r in rows if r["label"] == label]
        if not sub:
            continue
        print(f" {label} by {'class' if label == 'distinct' else 'slot' if label == 'update' else 'kind'}")
        for key in sorted({kind(r) for r in sub}):
            print(line(key, [r for r in sub if kind(r) == key], methods))
        if label != "duplicate":
            for group in sorted({r["group"] for r in sub}):
                print(line(f"{label}/{group}", [r for r in sub if r["group"] == group], methods))
    for method in methods:
        print(f" confusion ({method}): rows = label, columns = decision")
        print(f"  {'':10} " + " ".join(f"{d:>9}" for d in LABELS))
        for label in LABELS:
            counts = [sum(1 for r in rows if r["label"] == label and r[method] == d) for d in LABELS]
            print(f"  {label:10} " + " ".join(f"{c:9d}" for c in counts))
    if show_errors:
        print(" misjudged by classify:")
        for r in rows:
            if r["classify"] != r["label"]:
                print(
                    f"  {r.get('id', '-'):14} {r['group']:5} {r['label']:9}->{r['classify']:9} cos {r['cos']:.3f}"
                    f" [{r['reason']}] {r['a']} | {r['b']}"
                )


def sweep(rows) -> None:
    """Cosine alone, per language pair: where each label lies (for choosing the thresholds)."""
    print("\ncosine by label and language pair (min / 10th pct / median / max)")
    for cross in (False, True):
        for label in LABELS:
            cos = sorted(r["cos"] for r in rows if r["label"] == label and (r["group"] == "cross") == cross)
            if cos:
                print(
                    f"  {'cross' if cross else 'same ':5} {label:9} {cos[0]:.3f} {cos[len(cos) // 10]:.3f}"
                    f" {cos[len(cos) // 2]:.3f} {cos[-1]:.3f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", nargs="+", help="pair files (default: tune, held-out, old set)")
    parser.add_argument("--show-errors", action="store_true", help="print the pairs classify misjudges")
    parser.add_argument("--sweep", action="store_true", help="print the cosine distribution per label")
    parser.add_argument("--same", type=float, help="old decision at this same-language threshold")
    parser.add_argument("--cross", type=float, help="old decision at this cross-lingual threshold")
    parser.add_argument("--threshold", type=float, help="old decision at this threshold for both")
    parser.add_argument("--veto-from", help="take differs_materially from this .py file (an older dedup.py)")
    args = parser.parse_args()

    veto = dedup.differs_materially
    if args.veto_from:
        import importlib.util

        spec = importlib.util.spec_from_file_location("veto_module", args.veto_from)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        veto = module.differs_materially
    same = args.same or args.threshold
    cross = args.cross or args.threshold
    if same or cross:
        from django.conf import settings

        settings.MEMORY_DUPLICATE_THRESHOLD = None
        from memory import thresholds

        values = dict(thresholds.DEFAULTS.get("multilingual-e5-small", thresholds.FALLBACK))
        values.update({k: v for k, v in (("duplicate", same), ("duplicate_cross", cross)) if v})
        thresholds.DEFAULTS["multilingual-e5-small"] = values
        OLD_THRESHOLDS.update({k: v for k, v in (("duplicate", same), ("duplicate_cross", cross)) if v})

    provider = LocalE5Provider()
    model = provider.model_name
    files = [Path(p) for p in args.pairs] if args.pairs else [DATA / name for name in DEFAULT_FILES]
    for path in files:
        rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        started = time.perf_counter()
        va = provider.embed_passages([r["a"] for r in rows])
        vb = provider.embed_passages([r["b"] for r in rows])
        for r, a, b in zip(rows, va, vb, strict=True):
            r["cos"] = sum(x * y for x, y in zip(a, b, strict=True))
            r["add"] = decide_add(r, model, veto)
            r["reconcile"] = decide_reconcile(r, veto)
        embedded_ms, plain_ms = [], []
        for r in rows:
            classify_module._VECTORS.clear()  # each pair pays for its own span / text embeddings
            t0 = time.perf_counter()
            decision = classify(r["a"], r["b"], r["cos"], model)
            (embedded_ms if classify_module._VECTORS else plain_ms).append((time.perf_counter() - t0) * 1000)
            r["classify"], r["reason"] = decision.kind, decision.reason
        print(
            f"\n{path.name}: {len(rows)} pairs embedded with {model} in {time.perf_counter() - started:.1f}s"
        )
        print(
            f"classify per pair: {len(plain_ms)} pairs without embedding p50 {_median(plain_ms):.2f} ms; "
            f"{len(embedded_ms)} pairs embedding short texts (code-mixed spans, reworded spans, the "
            f"subject-free cross-lingual cosine) p50 {_median(embedded_ms):.1f} ms, max "
            f"{max(embedded_ms, default=0):.1f} ms (load {os.getloadavg()[0]:.1f})"
        )
        if args.sweep:
            sweep(rows)
        report(path.name, rows, METHODS, args.show_errors)


if __name__ == "__main__":
    main()
