"""Engram runs on any x86-64 CPU of the last ten years, not only on the one the suite happens to run on.

The native code we ship (pgvector in the embedded PostgreSQL, the local embedding engine) is disassembled
and must not use AVX-512 outside functions chosen at run time; the guard itself is shown to catch such
code by compiling some. The start-up self-check stops with a message instead of hundreds of errors.
"""

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
try:
    import devservices
    import isa_check
finally:
    sys.path.pop(0)

x86_only = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 instructions")


@x86_only
def test_it_finds_no_avx512_outside_runtime_dispatch_in_what_we_load():
    libraries = isa_check.engram_libraries()
    names = {path.name for path in libraries}
    assert "vector.so" in names, libraries  # pgvector of the embedded server
    assert any(name.startswith("_engine") for name in names), libraries  # the embedding engine
    for path in libraries:
        report = isa_check.scan(path)
        assert report.ok, f"{path}: AVX-512 outside run-time dispatch in {sorted(report.avx512)[:10]}"


@x86_only
@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc to build the probe library")
def test_it_catches_avx512_that_no_cpu_check_guards(tmp_path):
    source = tmp_path / "probe.c"
    source.write_text(
        """
        #include <immintrin.h>
        __attribute__((target("avx512f"))) float sum_avx512(const float *x) {
            return _mm512_reduce_add_ps(_mm512_loadu_ps(x));
        }
        __attribute__((target("avx512f,avx512vl"))) void scale_fast(float *x) {
            _mm256_storeu_ps(x, _mm256_maskz_mov_ps(0x0f, _mm256_loadu_ps(x)));
        }
        float sum_plain(const float *x) { float s = 0; for (int i = 0; i < 16; i++) s += x[i]; return s; }
        """
    )
    library = tmp_path / "probe.so"
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, capture_output=True
    )
    report = isa_check.scan(library)
    assert not report.ok
    # EVEX-encoded ymm code (AVX-512VL) counts too, not only zmm registers.
    assert set(report.avx512) == {"scale_fast"}
    assert set(report.dispatched) == {"sum_avx512"}
    assert "sum_plain" not in report.avx512
    assert isa_check.main([str(library)]) == 1


def test_it_tells_avx512_instructions_from_others():
    assert isa_check.is_avx512("62 f1 7c 48 10 06 ", "vmovups (%rsi),%zmm0")
    assert isa_check.is_avx512("62 f1 7c 29 28 c1 ", "vmovaps %ymm1,%ymm0{%k1}")  # EVEX without zmm
    assert isa_check.is_avx512("67 62 f1 7c 48 10 06 ", "vmovups (%esi),%zmm0")  # after a prefix
    assert not isa_check.is_avx512("c5 fc 10 04 06 ", "vmovups (%rsi,%rax,1),%ymm0")  # AVX (VEX)
    assert isa_check.is_vex(
        "c4 e2 75 b8 d0 ",
    )
    assert not isa_check.is_avx512("48 89 e5 ", "mov %rsp,%rbp")


def test_it_passes_the_self_check_on_the_test_database():
    devservices.check_postgres(dict(os.environ))
    devservices.check_embedder()


def test_it_stops_with_a_message_naming_the_way_out_when_the_backend_dies():
    with pytest.raises(devservices.SelfCheckFailed) as failed:
        devservices.check_postgres(dict(os.environ), probe="SELECT pg_terminate_backend(pg_backend_pid())")
    message = str(failed.value)
    assert "server process died" in message and "DATABASE_URL" in message and "pgvector 0.8" in message


def test_it_names_the_illegal_instruction_from_the_servers_log(tmp_path):
    (tmp_path / "log").write_text(
        "LOG:  client backend (PID 42) was terminated by signal 4: Illegal instruction\n"
        "DETAIL:  Failed process was running: SELECT v <=> '[1,0,0]'\n"
    )
    env = {**os.environ, "ENGRAM_EMBEDDED_PGDATA": str(tmp_path)}
    with pytest.raises(devservices.SelfCheckFailed) as failed:
        devservices.check_postgres(env, probe="SELECT pg_terminate_backend(pg_backend_pid())")
    assert "illegal instruction" in str(failed.value) and "signal 4" in str(failed.value)


def test_it_says_what_is_missing_when_the_database_has_no_pgvector():
    with pytest.raises(devservices.SelfCheckFailed) as failed:
        devservices.check_postgres(dict(os.environ), probe="SELECT '[1,2]'::no_such_vector_type")
    assert "pgvector" in str(failed.value)
