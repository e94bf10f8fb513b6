"""Many processes, one truth: two gunicorn web processes (A and B) and two Celery workers, each a real
process (tests/cluster.py), against this run's database and Redis.

What one process changes, the other applies on its very next request: a membership removed through A,
a key's restriction narrowed through A, an embedding configuration changed through A. Recall counts of a
web process killed with SIGKILL are not lost. Work spread over both web processes and both workers
finishes with no error.

The processes start once per module and xdist worker (about 10 s); under -n, `--dist loadfile` keeps the
module on one worker (xdist_group with loadgroup does not group with pytest 9.2 and xdist 3.8).
"""

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import requests
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client

from memory.drafts import MemoryDraft
from memory.models import ExtractionJob, MemoryItem, ReembedJob
from memory.services import memory_create
from projects.access import actor_for_account
from projects.models import OrgRole, ProjectMembership, ProjectRole
from projects.services import api_key_create, org_membership_set, project_create

from .cluster import RoundRobin, WebProcess, WorkerProcess, process_env, start_all, stop_all
from .factories import AccountFactory
from .openai_server import OpenAIStub

pytestmark = pytest.mark.django_db(transaction=True)

# A job runs in a wake-up of the fair scheduler (extraction_next) or in a message of its own (extraction_run).
EXTRACTION_TASKS = ("memory.extraction.tasks.extraction_next", "memory.extraction.tasks.extraction_run")


def jobs_run(worker: WorkerProcess) -> int:
    """How many extraction jobs this worker ran to done (an idle wake-up runs none)."""
    return sum(worker.succeeded(task, returned="'done'") for task in EXTRACTION_TASKS)


CSRF_TOKEN = "m" * 32


@pytest.fixture(scope="module")
def cluster(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock():
        kept = content_types()
    log_dir = tmp_path_factory.mktemp("cluster")
    web = {"SEARCH_ACCESS_FLUSH_SECONDS": "1"}  # recall counts buffered as in a deployment
    a = WebProcess("web-a", process_env(**web), log_dir)
    b = WebProcess("web-b", process_env(**web), log_dir)
    workers = [WorkerProcess(f"worker-{i}", process_env(), log_dir) for i in (1, 2)]
    started = start_all([a, b, *workers])
    yield SimpleNamespace(a=a, b=b, workers=workers, log_dir=log_dir, content_types=kept)
    stop_all(started)


@pytest.fixture
def secret(org_a):
    """A read-write org key of org A (an Admin in every project)."""
    return api_key_create(org=org_a, name="admin-agent")[1]


def content_types() -> tuple[list, list]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, app_label, model FROM django_content_type ORDER BY id")
        types = cursor.fetchall()
        cursor.execute("SELECT id, name, content_type_id, codename FROM auth_permission ORDER BY id")
        return types, cursor.fetchall()


@pytest.fixture(autouse=True)
def same_content_types(cluster, transactional_db):
    """Each test's flush recreates content types and permissions under new ids, and every process caches
    them (Django's ContentType cache, which guardian's grants use): put back the ids the processes know.
    A deployment never rewrites them while it serves (only `migrate` creates them, before processes start)."""
    types, perms = cluster.content_types
    if content_types() != (types, perms):
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM auth_permission")
            cursor.execute("DELETE FROM django_content_type")
            cursor.executemany(
                "INSERT INTO django_content_type (id, app_label, model) VALUES (%s, %s, %s)", types
            )
            cursor.executemany(
                "INSERT INTO auth_permission (id, name, content_type_id, codename) VALUES (%s, %s, %s, %s)",
                perms,
            )
        ContentType.objects.clear_cache()


def api(base: str, secret: str | None = None, session: str | None = None, org: str = "") -> requests.Session:
    """An HTTP client of one web process: an API key (Bearer) or a signed-in account's session cookie."""
    http = requests.Session()
    http.base = base
    if secret:
        http.headers["Authorization"] = f"Bearer {secret}"
    if session:  # with a CSRF token of its own, as a page's script sends it
        http.cookies.set("sessionid", session)
        http.cookies.set("csrftoken", CSRF_TOKEN)
        http.headers["X-CSRFToken"] = CSRF_TOKEN
    if org:
        http.headers["X-Engram-Org"] = org
    return http


def call(http: requests.Session, method: str, path: str, **kwargs) -> requests.Response:
    return http.request(method, http.base + "/api/v1" + path, timeout=60, **kwargs)


def session_of(account) -> str:
    """A signed-in session of the account, stored in the database every process reads."""
    client = Client()
    client.force_login(account)
    return client.cookies["sessionid"].value


def note(actor, org, content: str, **fields) -> MemoryItem:
    return memory_create(actor=actor, org=org, draft=MemoryDraft(content=content, **fields)).item


def found(response: requests.Response) -> set[int]:
    assert response.status_code == 200, response.text
    return {r["id"] for r in response.json()["results"]}


def test_a_membership_removed_through_one_process_stops_access_through_the_other_at_once(
    cluster, org_a, alice, bob, project, secret
):
    alice_actor = actor_for_account(alice, org_a)
    hidden = note(
        alice_actor,
        org_a,
        "The Atlas launch code word is heron",
        scope="project",
        project=project,
        visibility="members",
    )
    bob_b = api(cluster.b.url, session=session_of(bob), org=org_a.slug)
    query = {"query": "Atlas launch code word", "user_id": "bob", "project": "atlas", "top_k": 5}
    # B serves bob first, so whatever it caches about him (the compiled access filter) is warm.
    assert call(bob_b, "GET", f"/projects/{project.pk}").status_code == 200
    assert hidden.pk in found(call(bob_b, "POST", "/memories/search", json=query))
    assert call(bob_b, "GET", f"/memories/{hidden.pk}").status_code == 200

    membership = ProjectMembership.objects.get(project=project, account=bob)
    admin_a = api(cluster.a.url, secret=secret)
    assert call(admin_a, "DELETE", f"/projects/{project.pk}/members/{membership.pk}").status_code == 204

    # Bob's very next requests, through B.
    assert call(bob_b, "GET", f"/projects/{project.pk}").status_code == 404
    assert call(bob_b, "POST", "/memories/search", json=query).status_code == 404
    assert call(bob_b, "GET", f"/memories/{hidden.pk}").status_code == 404

    # And back: added again through B, he reads it again through A at once.
    admin_b = api(cluster.b.url, secret=secret)
    added = call(
        admin_b, "POST", f"/projects/{project.pk}/members", json={"username": "bob", "role": "viewer"}
    )
    assert added.status_code == 201, added.text
    bob_a = api(cluster.a.url, session=bob_b.cookies["sessionid"], org=org_a.slug)
    assert hidden.pk in found(call(bob_a, "POST", "/memories/search", json=query))


def test_a_keys_narrowed_reach_through_one_process_applies_through_the_other_at_once(
    cluster, org_a, alice, project, secret
):
    alice_actor = actor_for_account(alice, org_a)
    borealis = project_create(actor=alice_actor, name="Borealis", slug="borealis")
    hidden = project_create(actor=alice_actor, name="Cygnus", slug="cygnus")
    notes = {
        p.slug: note(alice_actor, org_a, f"The {p.name} team meets on Mondays", scope="project", project=p)
        for p in (project, borealis, hidden)
    }
    _, restricted = api_key_create(org=org_a, name="two-projects", projects=[project, borealis])
    key_b = api(cluster.b.url, secret=restricted)
    ids = {slug: n.pk for slug, n in notes.items()}

    def reach() -> set[int]:
        return found(call(key_b, "GET", "/memories", params={"page_size": 500}))

    def search(slug: str) -> requests.Response:
        query = {"query": "team meets on Mondays", "user_id": "u1", "project": slug, "top_k": 10}
        return call(key_b, "POST", "/memories/search", json=query)

    assert reach() == {ids["atlas"], ids["borealis"]}
    assert found(search("atlas")) == {ids["atlas"]} and found(search("borealis")) == {ids["borealis"]}
    assert search("cygnus").status_code == 404

    owner_a = api(cluster.a.url, session=session_of(alice), org=org_a.slug)  # deletes projects
    assert call(owner_a, "DELETE", f"/projects/{borealis.pk}").status_code == 204
    assert reach() == {ids["atlas"]}
    assert found(search("atlas")) == {ids["atlas"]} and search("borealis").status_code == 404

    # Its last project deleted through A: through B the key reaches nothing (revoked), never the org.
    assert call(owner_a, "DELETE", f"/projects/{project.pk}").status_code == 204
    assert call(key_b, "GET", "/memories").status_code == 401
    assert call(key_b, "GET", f"/memories/{ids['cygnus']}").status_code == 401


def wait_until(predicate, timeout: float = 60.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout}s: {what}")


def test_an_embedding_config_change_through_one_process_is_used_by_the_others_next_search(
    cluster, org_a, alice, secret
):
    a, b = api(cluster.a.url, secret=secret), api(cluster.b.url, secret=secret)
    owner = session_of(alice)  # org owners change the embedding settings; keys may not
    owner_a, owner_b = (api(w.url, session=owner, org=org_a.slug) for w in (cluster.a, cluster.b))
    query = {"query": "Which editor does the user like?", "user_id": "u1", "explain": True}
    assert (
        call(a, "POST", "/memories", json={"content": "The user likes Neovim", "user_id": "u1"}).status_code
        == 201
    )
    before = call(b, "POST", "/memories/search", json=query)
    assert before.json()["explain"]["embedding_model"] == "multilingual-e5-small"  # cached in B now

    with OpenAIStub() as stub:
        config = {"provider": "openai", "model": "stub-embed", "base_url": stub.base_url, "dimensions": 384}
        changed = call(owner_a, "PUT", "/embedding-config", json={**config, "api_key": "sk-test"})
        assert changed.status_code == 200, changed.text
        after = call(b, "POST", "/memories/search", json=query)
        assert after.status_code == 200, after.text
        assert after.json()["explain"]["embedding_model"] == "stub-embed"
        # B embedded the query through the new provider (the re-embedding job may have sent the memory already)
        assert [query["query"]] in [r["body"]["input"] for r in stub.requests], stub.requests
        # The workers re-embed with it too.
        job = changed.json()["reembed_job"]["id"]
        wait_until(lambda: ReembedJob.objects.get(pk=job).status == "done", what="re-embedding")
        assert set(MemoryItem.objects.filter(org=org_a).values_list("embedding_model", flat=True)) == {
            "stub-embed"
        }

        # The other way round: removed through B, A's next search embeds locally again.
        assert call(owner_b, "DELETE", "/embedding-config").status_code == 200
        again = call(a, "POST", "/memories/search", json=query)
        assert again.json()["explain"]["embedding_model"] == "multilingual-e5-small"
        job = ReembedJob.objects.filter(org=org_a).order_by("-id").first()
        wait_until(lambda: ReembedJob.objects.get(pk=job.pk).status == "done", what="re-embedding back")


def test_recall_counts_of_a_killed_web_process_are_not_lost(cluster, org_a, secret):
    """A process that buffers recalls (it would flush only after an hour) is SIGKILLed after answering:
    the counts were in Redis, and the next flush elsewhere writes every one of them."""
    doomed = WebProcess("web-doomed", process_env(SEARCH_ACCESS_FLUSH_SECONDS="3600"), cluster.log_dir)
    start_all([doomed])
    try:
        c = api(doomed.url, secret=secret)
        for text in ("The user drinks green tea", "The user drinks black coffee", "The user drinks water"):
            assert call(c, "POST", "/memories", json={"content": text, "user_id": "u1"}).status_code == 201
        recalled = Counter()
        for _ in range(6):
            recalled.update(
                found(call(c, "POST", "/memories/search", json={"query": "drinks", "user_id": "u1"}))
            )
        assert sum(recalled.values()) >= 6
        counts = dict(MemoryItem.objects.filter(org=org_a).values_list("id", "access_count"))
        assert set(counts.values()) == {0}, "the doomed process wrote its counts before it was killed"
    finally:
        doomed.kill()
    # Anyone's next recall wakes that process's flush, which takes every pending count.
    a = api(cluster.a.url, secret=secret)
    recalled.update(found(call(a, "POST", "/memories/search", json={"query": "green tea", "user_id": "u1"})))
    expected = {pk: recalled.get(pk, 0) for pk in counts}
    wait_until(
        lambda: dict(MemoryItem.objects.filter(org=org_a).values_list("id", "access_count")) == expected,
        timeout=30,
        what=f"counts {expected}",
    )


def test_work_spread_over_both_web_processes_and_both_workers_has_no_errors(cluster, org_a, secret):
    before = [jobs_run(w) for w in cluster.workers]
    servers = [api(cluster.a.url, secret=secret), api(cluster.b.url, secret=secret)]

    def turn(i: int) -> tuple[list[int], dict]:
        http = servers[i % 2]
        user = f"person-{i}"
        posted = call(
            http,
            "POST",
            f"/sessions/s-{i}/messages",
            json={
                "user_id": user,
                "messages": [
                    {"role": "human", "content": f"Please remember that my dog is called Rex{i}"},
                    {"role": "ai", "content": "Noted."},
                    {"role": "human", "content": "I prefer answers in bullet points."},
                ],
            },
        )
        added = call(
            http, "POST", "/memories", json={"content": f"The user plays chess number {i}", "user_id": user}
        )
        searched = call(
            servers[(i + 1) % 2], "POST", "/memories/search", json={"query": "chess", "user_id": user}
        )
        context = call(http, "POST", "/context", json={"query": "what does the user play?", "user_id": user})
        return [
            posted.status_code,
            added.status_code,
            searched.status_code,
            context.status_code,
        ], posted.json()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(turn, range(12)))
    statuses = Counter(s for codes, _ in results for s in codes)
    assert set(statuses) <= {200, 201}, statuses
    jobs = [body["extraction_job"]["id"] for _, body in results]
    wait_until(
        lambda: ExtractionJob.objects.filter(pk__in=jobs, status__in=["done", "failed"]).count() == len(jobs),
        what="extraction jobs",
    )
    assert Counter(ExtractionJob.objects.filter(pk__in=jobs).values_list("status", flat=True)) == {"done": 12}

    def ran():
        return [jobs_run(w) - n for w, n in zip(cluster.workers, before, strict=True)]

    # A job's row says done before its worker logs the task's success: wait for the logs to catch up.
    wait_until(lambda: sum(ran()) >= len(jobs), timeout=30, what="the workers' logs of the jobs")
    assert sum(ran()) == len(jobs) and all(ran()), f"jobs per worker: {ran()}"
    remembered = MemoryItem.objects.filter(org=org_a, user_id="person-3", content__contains="Rex3")
    assert remembered.exists()


def test_a_role_lowered_through_one_process_refuses_the_next_write_through_the_other(
    cluster, org_a, alice, bob, project, secret
):
    """Editor to Viewer through A: B refuses bob's next write with 403."""
    membership = ProjectMembership.objects.get(project=project, account=bob)
    admin_a = api(cluster.a.url, secret=secret)
    raised = call(
        admin_a, "PATCH", f"/projects/{project.pk}/members/{membership.pk}", json={"role": "editor"}
    )
    assert raised.status_code == 200, raised.text
    bob_b = api(cluster.b.url, session=session_of(bob), org=org_a.slug)
    body = {
        "content": "Atlas standup moved to 10:00",
        "scope": "project",
        "project": project.pk,
        "user_id": "bob",
    }
    assert call(bob_b, "POST", "/memories", json=body).status_code == 201
    lowered = call(
        admin_a, "PATCH", f"/projects/{project.pk}/members/{membership.pk}", json={"role": ProjectRole.VIEWER}
    )
    assert lowered.status_code == 200, lowered.text
    assert (
        call(bob_b, "POST", "/memories", json={**body, "content": "Atlas standup is at 11"}).status_code
        == 403
    )


def test_the_python_client_through_a_round_robin_front_sees_one_service(cluster, org_a, secret):
    """Each request goes to the other process: pages, history, a session's extraction by a worker, an
    idempotent retry, an export and a forget read what the previous request wrote elsewhere."""
    from engram_client import Engram

    with RoundRobin([cluster.a.url, cluster.b.url]) as front, Engram(front.url, secret) as client:
        first = client.memories.add("Sam plays the cello on Sundays", user_id="sam")
        for i in range(4):
            client.memories.add(f"Sam visited city number {i} last year", user_id="sam")
        found = client.memories.search("what instrument does Sam play?", user_id="sam", top_k=1)
        assert [r.id for r in found.results] == [first.id]
        listed = [m.id for m in client.memories.list(user_id="sam", page_size=2)]  # cursors across processes
        assert sorted(listed) == sorted(MemoryItem.objects.filter(org=org_a).values_list("id", flat=True))
        client.memories.update(first.id, content="Sam plays the viola on Sundays")
        assert [r.action for r in client.memories.history(first.id)] == ["add", "update"]
        context = client.context.get(user_id="sam", query="instrument")
        assert "viola" in context.prompt
        appended = client.sessions.append(
            "chat-rr",
            [{"role": "human", "content": "Please remember that my cat is called Miso"}],
            user_id="sam",
        )
        job = client.jobs.wait(appended.extraction_job.id, timeout=60, interval=0.2)
        assert job.status == "done", job.error
        exported = client.users.export("sam")
        assert {m["id"] for m in exported["memories"]} >= set(listed)
        forgotten = client.users.forget("sam")
        assert forgotten.deleted["MemoryItem"] >= len(listed)
        assert client.memories.search("cello", user_id="sam").results == []
    assert all(front.served.values()) and sum(front.served.values()) >= 14, front.served


def test_an_idempotent_retry_through_the_other_process_replays_the_first_answer(cluster, org_a, secret):
    a, b = api(cluster.a.url, secret=secret), api(cluster.b.url, secret=secret)
    body = {"content": "Sam drinks oolong tea", "user_id": "sam"}
    first = call(a, "POST", "/memories", json=body, headers={"Idempotency-Key": "retry-1"})
    again = call(b, "POST", "/memories", json=body, headers={"Idempotency-Key": "retry-1"})
    assert first.status_code == again.status_code == 201
    assert again.headers.get("Idempotent-Replayed") == "true" and again.json() == first.json()
    assert MemoryItem.objects.filter(org=org_a, user_id="sam").count() == 1


def test_the_rate_limit_is_one_budget_across_processes(cluster, org_a, secret):
    org_a.api_rate = "6/min"
    org_a.save(update_fields=["api_rate"])
    a, b = api(cluster.a.url, secret=secret), api(cluster.b.url, secret=secret)
    codes = [call(http, "GET", "/memories", params={"user_id": "sam"}).status_code for http in (a, b) * 4]
    assert codes == [200] * 6 + [429] * 2, codes


def test_an_org_role_lowered_elsewhere_applies_through_both_processes_at_once(cluster, org_a, alice, project):
    """An org admin reaches every project; demoted (here by a command's service call, a third process),
    the next request through A or B reaches only the projects the account is a member of."""
    dave = AccountFactory(username="dave")
    org_membership_set(org=org_a, account=dave, role=OrgRole.ADMIN)
    hidden = note(
        actor_for_account(alice, org_a),
        org_a,
        "Atlas budget is 40k",
        scope="project",
        project=project,
        visibility="members",
    )
    dave_session = session_of(dave)
    a, b = (api(w.url, session=dave_session, org=org_a.slug) for w in (cluster.a, cluster.b))
    query = {"query": "Atlas budget", "user_id": "dave", "project": "atlas"}
    for http in (a, b):
        assert hidden.pk in found(call(http, "POST", "/memories/search", json=query))

    org_membership_set(org=org_a, account=dave, role=OrgRole.MEMBER)
    for http in (a, b):
        assert call(http, "POST", "/memories/search", json=query).status_code == 404
        assert call(http, "GET", f"/memories/{hidden.pk}").status_code == 404
