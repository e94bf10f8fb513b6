"""Similarity thresholds per embedding model (cosine). Env overrides win.

The seeds' 0.85 / 0.92 were set for OpenAI embeddings; multilingual-e5-small scores unrelated
sentences around 0.82, so its defaults are calibrated on bench/data (see bench/dedup_calibration.py).
"""

from django.conf import settings

# duplicate: same fact -> merge.  related: same subject, maybe a new value -> candidate for supersede.
DEFAULTS = {
    "multilingual-e5-small": {"duplicate": 0.95, "related": 0.90},
}
FALLBACK = {"duplicate": 0.92, "related": 0.85}


def duplicate_threshold(model: str) -> float:
    if settings.MEMORY_DUPLICATE_THRESHOLD is not None:
        return settings.MEMORY_DUPLICATE_THRESHOLD
    return DEFAULTS.get(model, FALLBACK)["duplicate"]


def related_threshold(model: str) -> float:
    return DEFAULTS.get(model, FALLBACK)["related"]
