"""Reads on a real streaming replica (core/replicas.py).

The first test here starts a hot standby of the embedded PostgreSQL (scripts/pgreplica.py: pg_basebackup -R
with the embedded server's binaries, on a unix socket); the test database, created on the primary by the
test run, reaches it by streaming. The replica's alias is added for these tests only (the suite's settings
have none), and Django's test runner never creates or flushes it: its data is the primary's, replayed.
Rows must be committed to be replayed, so these tests are transactional.
"""

import os
import time

import pytest
import redis
from django.conf import settings as django_settings
from django.core.cache import cache
from django.db import connections
from django.db.utils import load_backend

from core import replicas, rls
from core.shared import key as shared_key
from memory.drafts import MemoryDraft
from memory.services import memory_create
from projects.access import actor_for_key
from projects.models import ProjectMembership
from projects.services import api_key_create, project_member_remove
from scripts import pgreplica

from .conftest import key_client

ALIAS = "replica_0"
HEADER = replicas.READ_HEADER

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="session")
def standby():
    pgdata = os.environ.get("ENGRAM_EMBEDDED_PGDATA")
    if not pgdata:
        pytest.skip("needs the embedded PostgreSQL that ./engram test starts (DATABASE_URL points elsewhere)")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    server = pgreplica.start(pgdata, f"{pgdata}-test-replica{worker and '-' + worker}")
    yield server
    server.remove()


@pytest.fixture
def replica(standby, transactional_db, settings):
    """The standby as DATABASE_REPLICAS = ['replica_0'], caught up, replaying."""
    standby.start()  # a test may have stopped it
    primary = connections["default"].settings_dict
    config = {
        **primary,
        "HOST": str(standby.socket_dir),
        "PORT": standby.port,
        "OPTIONS": {**primary.get("OPTIONS", {}), "connect_timeout": 2},
        "TEST": {},
    }
    # A connection made here, not an alias of the settings: Django's test case lets it through (it only
    # guards the configured aliases a test did not ask for) and never creates or flushes its database.
    connections[ALIAS] = load_backend(config["ENGINE"]).DatabaseWrapper(config, ALIAS)
    settings.DATABASE_REPLICAS = [ALIAS]
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 2.0
    settings.DATABASE_REPLICA_CHECK_SECONDS = 0.0
    settings.DATABASE_REPLICA_RETRY_SECONDS = 1.0
    settings.DATABASE_REPLICA_PIN_SECONDS = 3.0
    replicas.reset()
    pgreplica.wait_for_replay(standby, os.environ["ENGRAM_EMBEDDED_PGDATA"])
    yield standby
    if standby.running():
        standby.psql("SELECT pg_wal_replay_resume()")
    connections[ALIAS].close()
    del connections[ALIAS]
    replicas.reset()
    # Replayed before the flush that ends the test, so the next test starts from a replica that kept up.
    if standby.running():
        pgreplica.wait_for_replay(standby, os.environ["ENGRAM_EMBEDDED_PGDATA"])


def caught_up(standby):
    """The standby has replayed everything committed; the orgs' access pins (set by the fixtures' keys,
    projects and memberships, core.replicas.pin_org) have done their work and are dropped."""
    pgreplica.wait_for_replay(standby, os.environ["ENGRAM_EMBEDDED_PGDATA"])
    shared = redis.Redis.from_url(django_settings.REDIS_URL)
    for name in shared.scan_iter(cache.make_key(shared_key("replica-pin:org:*"))):
        shared.delete(name)


def add(key, content: str, user_id: str = "u1"):
    """A memory written on the primary by the services (no request: the key is not pinned)."""
    return memory_create(
        actor=actor_for_key(key),
        org=key.org,
        draft=MemoryDraft(content=content, user_id=user_id),
        dedup="none",
    ).item


def search(client, query: str, user_id: str = "u1"):
    response = client.post("/api/v1/memories/search", {"user_id": user_id, "query": query}, format="json")
    assert response.status_code == 200, response.content
    return response, [hit["content"] for hit in response.json()["results"]]


def test_search_context_and_list_read_on_the_replica(replica, key_a):
    key, client = key_a
    add(key, "Prefers green tea in the morning.")
    caught_up(replica)
    response, found = search(client, "green tea")
    assert response[HEADER] == ALIAS and found == ["Prefers green tea in the morning."]
    context = client.post("/api/v1/context", {"user_id": "u1", "query": "tea"}, format="json")
    assert context.status_code == 200 and context[HEADER] == ALIAS
    assert [m["content"] for m in context.json()["relevant"]] == ["Prefers green tea in the morning."]
    # The context call wrote its injection log on the primary: a declared read's own writes pin no one.
    listed = client.get("/api/v1/memories?user_id=u1")
    assert listed.status_code == 200 and listed[HEADER] == ALIAS
    assert [m["content"] for m in listed.json()["results"]] == ["Prefers green tea in the morning."]
    # The connection those reads used is the standby's.
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        assert cursor.fetchone() == (True,)


def test_a_row_is_read_from_the_replica_only_once_replayed(replica, key_a, settings):
    key, client = key_a
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 3600.0  # this test wants the stale replica used
    add(key, "Lives in Lisbon.")
    caught_up(replica)
    replica.psql("SELECT pg_wal_replay_pause()")
    add(key, "Plays the cello on Sundays.")  # committed on the primary, not replayed
    response, found = search(client, "cello Sundays Lisbon")
    assert response[HEADER] == ALIAS
    assert found == ["Lives in Lisbon."]
    replica.psql("SELECT pg_wal_replay_resume()")
    caught_up(replica)
    response, found = search(client, "cello Sundays Lisbon")
    assert response[HEADER] == ALIAS
    assert sorted(found) == ["Lives in Lisbon.", "Plays the cello on Sundays."]


def test_row_level_security_holds_on_the_replica(replica, key_a, key_b):
    key, _ = key_a
    _, client_b = key_b
    add(key, "Org A's secret project is Falcon.")
    caught_up(replica)
    response, found = search(client_b, "secret project Falcon")
    assert response[HEADER] == ALIAS and found == []
    with connections[ALIAS].cursor() as cursor:
        with rls.scoped(rls.NOTHING):
            cursor.execute("SELECT count(*) FROM memory_memoryitem")
            assert cursor.fetchone() == (0,)
        with rls.scoped(rls.Scope(org_id=key.org_id)):
            cursor.execute("SELECT count(*) FROM memory_memoryitem")
            assert cursor.fetchone() == (1,)


def test_the_caller_that_wrote_reads_its_write(replica, key_a, settings):
    key, client = key_a
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 3600.0  # the stale replica stays usable for others
    other = key_client(api_key_create(org=key.org, name="another agent")[1])
    caught_up(replica)
    replica.psql("SELECT pg_wal_replay_pause()")
    created = client.post("/api/v1/memories", {"user_id": "u1", "content": "Drinks oat milk."}, format="json")
    assert created.status_code == 201, created.content
    # The pin is in Redis, where every web process looks, not in this process's memory.
    shared = redis.Redis.from_url(django_settings.REDIS_URL)
    assert shared.ttl(cache.make_key(shared_key(f"replica-pin:key:{key.pk}"))) > 0
    # The writer's next reads are on the primary and see the write...
    response, found = search(client, "oat milk")
    assert response[HEADER] == "default" and found == ["Drinks oat milk."]
    listed = client.get("/api/v1/memories?user_id=u1")
    assert listed[HEADER] == "default" and len(listed.json()["results"]) == 1
    # ...another caller still reads the (stale) replica.
    response, found = search(other, "oat milk")
    assert response[HEADER] == ALIAS and found == []
    # A failed write pins nothing.
    failed = other.post("/api/v1/memories", {"user_id": "u1"}, format="json")
    assert failed.status_code == 400
    assert search(other, "oat milk")[0][HEADER] == ALIAS
    # Once the pin is over (and the replica caught up) the writer reads from the replica again.
    replica.psql("SELECT pg_wal_replay_resume()")
    caught_up(replica)
    time.sleep(settings.DATABASE_REPLICA_PIN_SECONDS + 0.2)
    response, found = search(client, "oat milk")
    assert response[HEADER] == ALIAS and found == ["Drinks oat milk."]


def test_a_lagging_replica_sends_reads_to_the_primary(replica, key_a, settings):
    key, client = key_a
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 0.5
    caught_up(replica)
    assert search(client, "anything")[0][HEADER] == ALIAS
    replica.psql("SELECT pg_wal_replay_pause()")
    add(key, "Flies to Osaka next week.")
    time.sleep(0.6)  # the replica is now more than the bound behind
    response, found = search(client, "Osaka")
    assert response[HEADER] == "default" and found == ["Flies to Osaka next week."]
    assert replicas.health(ALIAS).lag > 0.5
    replica.psql("SELECT pg_wal_replay_resume()")
    caught_up(replica)
    response, found = search(client, "Osaka")
    assert response[HEADER] == ALIAS and found == ["Flies to Osaka next week."]


def test_a_replica_that_is_down_costs_nothing_and_is_used_again(replica, key_a, settings):
    key, client = key_a
    settings.DATABASE_REPLICA_CHECK_SECONDS = 60.0  # the last check said usable: the read itself fails
    # Longer than the eleven searches below take on a loaded machine, so the breaker is still open there.
    settings.DATABASE_REPLICA_RETRY_SECONDS = 5.0
    add(key, "Keeps bees on the roof.")
    caught_up(replica)
    assert search(client, "bees")[0][HEADER] == ALIAS
    replica.stop("immediate")
    answers = [search(client, "bees") for _ in range(10)]
    assert [r[HEADER] for r, _ in answers] == ["default"] * 10
    assert all(found == ["Keeps bees on the roof."] for _, found in answers)
    state = replicas.health(ALIAS)
    tripped_at = state.checked
    assert not state.usable and state.down_until > tripped_at
    # While the breaker is open no request tries the replica: the state is the one the failure left.
    assert search(client, "bees")[0][HEADER] == "default"
    assert replicas.health(ALIAS).checked == tripped_at
    # After the retry interval, one check finds it still down (no error either), and opens the breaker again.
    time.sleep(settings.DATABASE_REPLICA_RETRY_SECONDS + 0.1)
    assert search(client, "bees")[0][HEADER] == "default"
    assert replicas.health(ALIAS).checked > tripped_at
    replica.start()
    caught_up(replica)
    time.sleep(settings.DATABASE_REPLICA_RETRY_SECONDS + 0.1)
    response, found = search(client, "bees")
    assert response[HEADER] == ALIAS and found == ["Keeps bees on the roof."]


def test_without_replicas_every_read_is_on_the_primary_and_unmarked(key_a, settings):
    key, client = key_a
    settings.DATABASE_REPLICAS = []
    add(key, "Collects stamps.")
    response, found = search(client, "stamps")
    assert HEADER not in response and found == ["Collects stamps."]


def test_a_membership_removed_is_never_read_back_from_a_stale_replica(
    replica, settings, org_a, alice, alice_actor, bob, bob_client, project
):
    settings.DATABASE_REPLICA_MAX_LAG_SECONDS = 3600.0  # the stale replica stays usable
    hidden = memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(
            content="The Atlas launch code word is heron",
            scope="project",
            project=project,
            visibility="members",
        ),
    ).item
    caught_up(replica)
    query = {"query": "Atlas launch code word", "user_id": "bob", "project": "atlas", "top_k": 5}
    response = bob_client.post("/api/v1/memories/search", query, format="json")
    assert response.status_code == 200 and response[HEADER] == ALIAS
    assert [hit["id"] for hit in response.json()["results"]] == [hidden.pk]

    replica.psql("SELECT pg_wal_replay_pause()")  # the replica will not see the removal
    project_member_remove(
        actor=alice_actor, membership=ProjectMembership.objects.get(project=project, account=bob)
    )
    # The org is pinned in Redis (every web process looks there): bob's reads go to the primary.
    shared = redis.Redis.from_url(django_settings.REDIS_URL)
    assert shared.ttl(cache.make_key(shared_key(f"replica-pin:org:{org_a.pk}"))) > 0
    response = bob_client.post("/api/v1/memories/search", query, format="json")
    assert response.status_code == 404 and response[HEADER] == "default"
    listed = bob_client.get("/api/v1/memories?user_id=bob&project=atlas")
    assert listed[HEADER] == "default" and listed.status_code == 404
    # Another org's reads are not pinned by it.
    assert not replicas.pinned(None, org_a.pk + 1000)
