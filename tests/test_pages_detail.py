"""A memory's page: no link to itself, a diff of each edit, "restore" only where it changes something, and
an honest word when the memory was given to someone else's agent; the queue counts attempts in plurals."""

import pytest
from django.test import Client

from memory.drafts import MemoryDraft
from memory.models import ExtractionJob, InjectionLog
from memory.services import memory_create, memory_update

from .factories import MemoryItemFactory


@pytest.fixture
def alice_web(alice):
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_web(bob):
    client = Client()
    client.force_login(bob)
    return client


def test_the_detail_page_shows_a_diff_and_offers_restore_only_where_it_changes_something(
    alice_web, alice_actor
):
    item = memory_create(
        actor=alice_actor,
        org=alice_actor.org,
        draft=MemoryDraft(content="Alice drinks green tea.", user_id="alice"),
    ).item
    memory_update(
        actor=alice_actor, item=item, content="Alice drinks jasmine tea.", reason="edited on the web page"
    )
    memory_update(actor=alice_actor, item=item, tags=["drinks"], reason="pinned")
    body = alice_web.get(f"/memories/{item.pk}/").content.decode()
    assert f'href="/memories/{item.pk}/"' not in body  # no link to itself
    assert "<del>green</del><ins>jasmine</ins>" in body
    assert 'data-testid="changed-fields"' in body and "<ins>drinks</ins>" in body
    # Revision 3 is the current state: no restore; 1 and 2 differ from it.
    assert f"/memories/{item.pk}/revisions/3/restore/" not in body
    assert f"/memories/{item.pk}/revisions/1/restore/" in body
    assert f"/memories/{item.pk}/revisions/2/restore/" in body


def test_a_reader_is_told_when_the_memory_was_given_to_someone_elses_agent(bob_web, alice, project):
    item = MemoryItemFactory(project=project, content="Atlas deploys every Tuesday.", created_by=alice)
    InjectionLog.objects.create(org=project.org, user_id="alice", kind="context", memory_ids=[item.pk])
    InjectionLog.objects.create(org=project.org, user_id="alice", kind="search", memory_ids=[item.pk])
    body = bob_web.get(f"/memories/{item.pk}/").content.decode()
    assert "Not yet given to any agent" not in body
    assert "given to agents 2 times in calls about someone else" in body
    alone = MemoryItemFactory(project=project, content="Atlas uses Postgres 16.", created_by=alice)
    assert "Not yet given to any agent." in bob_web.get(f"/memories/{alone.pk}/").content.decode()


def test_attempts_are_counted_in_plurals(alice_web, org_a):
    one = ExtractionJob.objects.create(org=org_a, user_id="alice", status="done", attempts=1)
    three = ExtractionJob.objects.create(org=org_a, user_id="alice", status="failed", attempts=3)
    assert "1 attempt<" in alice_web.get(f"/queue/{one.pk}/").content.decode().replace(" ·", "<")
    assert "3 attempts" in alice_web.get(f"/queue/{three.pk}/").content.decode()
    assert "1 attempts" not in alice_web.get("/queue/").content.decode()
