import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("engram")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Task modules below the app level.
app.autodiscover_tasks(["memory.extraction"])


@worker_init.connect
def one_math_thread_per_worker(**kwargs):
    """The local embedding model's OpenMP threads busy-wait: worker processes sharing cores slowed each
    other 5-10x (bench/extraction.py). One thread per process; scale with processes (one per core).
    Set before the model loads (lazily, on the first embedding); an explicit OMP_NUM_THREADS wins."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
