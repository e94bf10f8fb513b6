"""core.shared: versions in Redis that tell every process its local copy is stale, and what happens
when Redis cannot be reached (no cache: slower, never wrong). The multi-process behaviour itself is
tests/test_multiprocess.py's."""

import pytest

from core import shared
from memory.embeddings import cached_provider_for
from memory.embeddings.resolve import _version_name
from memory.models import EmbeddingConfig, MemoryItem
from memory.search.access_counts import AccessRecorder

from .factories import MemoryItemFactory

UNREACHABLE = "redis://127.0.0.1:9/0"  # the discard port: nothing listens


def org_config(org, model: str) -> EmbeddingConfig:
    return EmbeddingConfig.objects.create(
        org=org, user_id="", provider="openai", model=model, base_url="http://127.0.0.1:9/v1", dimensions=384
    )


def test_a_new_version_makes_the_process_read_again(org_a):
    config = org_config(org_a, "first-embed")
    assert cached_provider_for(org_a, "u1").model_name == "first-embed"
    # What another process does: the row changes (no signal here) and the version is replaced.
    EmbeddingConfig.objects.filter(pk=config.pk).update(model="second-embed")
    assert cached_provider_for(org_a, "u1").model_name == "first-embed"  # cached: same version
    shared._set_new(_version_name(org_a.pk))
    assert cached_provider_for(org_a, "u1").model_name == "second-embed"


def test_a_version_redis_lost_reads_as_a_change(org_a):
    config = org_config(org_a, "first-embed")
    assert cached_provider_for(org_a, "u1").model_name == "first-embed"
    EmbeddingConfig.objects.filter(pk=config.pk).update(model="second-embed")
    shared.redis_client().delete(shared.key(f"version:{_version_name(org_a.pk)}"))  # evicted, flushed
    assert cached_provider_for(org_a, "u1").model_name == "second-embed"


def test_without_redis_nothing_is_cached_and_answers_stay_right(org_a, settings):
    config = org_config(org_a, "first-embed")
    settings.REDIS_URL = UNREACHABLE
    assert shared.version("anything") is None
    assert cached_provider_for(org_a, "u1").model_name == "first-embed"
    EmbeddingConfig.objects.filter(pk=config.pk).update(model="second-embed")
    assert cached_provider_for(org_a, "u1").model_name == "second-embed"


def test_the_keys_are_the_databases_own(settings):
    assert shared.key("x") == f"engram:{settings.DATABASES['default']['NAME']}:x"


@pytest.mark.django_db(transaction=True)
def test_recall_counts_wait_in_redis_until_a_flush_takes_them(org_a, settings):
    settings.SEARCH_ACCESS_FLUSH_SECONDS = 3600  # no flush of its own in this test
    item = MemoryItemFactory(org=org_a)
    first, second = AccessRecorder(), AccessRecorder()  # two processes' recorders
    first.record([item.pk, item.pk])
    first.record([item.pk])
    assert MemoryItem.objects.get(pk=item.pk).access_count == 0
    assert second.flush() >= 1  # any recorder takes every pending count
    assert MemoryItem.objects.get(pk=item.pk).access_count == 3
    assert second.flush() == 0


@pytest.mark.django_db(transaction=True)
def test_recall_counts_wait_in_the_process_while_redis_is_unreachable(org_a, settings):
    settings.SEARCH_ACCESS_FLUSH_SECONDS = 3600
    item = MemoryItemFactory(org=org_a)
    recorder = AccessRecorder()
    settings.REDIS_URL = UNREACHABLE
    recorder.record([item.pk])
    assert recorder.flush() == 1
    assert MemoryItem.objects.get(pk=item.pk).access_count == 1


@pytest.mark.django_db(transaction=True)
def test_beats_flush_writes_what_a_stopped_process_left(org_a, settings):
    from memory.tasks import access_counts_flush

    settings.SEARCH_ACCESS_FLUSH_SECONDS = 3600
    item = MemoryItemFactory(org=org_a)
    AccessRecorder().record([item.pk, item.pk])  # a process that stops before its own flush
    assert access_counts_flush.apply().get() == 1
    assert MemoryItem.objects.get(pk=item.pk).access_count == 2
