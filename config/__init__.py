import os

# numpy's OpenBLAS keeps a thread per core busy-waiting for a while after each call. Search ranks with small
# matrix products (a hundred or so vectors of 384 dimensions), which gain nothing from threads, and the spinning
# threads then took the cores from the query embedder's OpenMP threads: the next query's embedding took p50
# 30.7 ms instead of 9.9 (bench/embed_threads.py), 73 ms after a LoCoMo search in the web process. One BLAS
# thread per process; set here, before anything loads numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .celery import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
