"""Similarity thresholds per embedding model (cosine). Env overrides win.

The seeds' 0.85 / 0.92 were set for OpenAI embeddings; multilingual-e5-small scores unrelated
sentences around 0.82, so its defaults are calibrated on bench/data (see bench/dedup_calibration.py).
"""

from django.conf import settings

# duplicate: same fact -> merge (same language / one Chinese and one not).
# related: same subject, maybe a new value -> candidate for supersede.
# multilingual-e5-small, measured by bench/dedup_calibration.py on 166 labelled pairs (zh/en/cross):
# cosine + dedup veto has its best F1 for "duplicate" at 0.955 within a language; translations score
# lower (0.81-0.90 for true duplicates). The pair set's best cross-lingual F1 is at 0.81-0.82, but it
# holds only 8 distinct cross-lingual pairs, and unrelated Chinese/English memories were seen merging at
# 0.822 (a Chinese skill note into an English habit). A false merge drops the new memory, a missed one
# only keeps two rows, so the cross-lingual threshold is set at 0.88: precision over recall.
# "related" (duplicate or new value vs distinct) has its best F1 at 0.81.
# Since memory.classify reads structure (who, plan or done, slot, value) before merging, the
# cross-lingual duplicate threshold is 0.835 and "related_cross" 0.77: translations of one fact score
# 0.80-0.88 with e5-small (bench/data/dedup_tune.jsonl), and below 0.77 nothing was the same slot.
DEFAULTS = {
    "multilingual-e5-small": {
        "duplicate": 0.955,
        "duplicate_cross": 0.835,
        "related": 0.81,
        "related_cross": 0.77,
    },
}
FALLBACK = {"duplicate": 0.92, "related": 0.85}


def duplicate_threshold(model: str, *, cross_lingual: bool = False) -> float:
    """Cosine at or above which two texts of one subject are the same memory (before the veto)."""
    if settings.MEMORY_DUPLICATE_THRESHOLD is not None:
        return settings.MEMORY_DUPLICATE_THRESHOLD
    values = DEFAULTS.get(model, FALLBACK)
    return values.get("duplicate_cross", values["duplicate"]) if cross_lingual else values["duplicate"]


def related_threshold(model: str, *, cross_lingual: bool = False) -> float:
    """Cosine below which two texts are not about the same thing (no duplicate, no update)."""
    values = DEFAULTS.get(model, FALLBACK)
    return values.get("related_cross", values["related"]) if cross_lingual else values["related"]
