"""Signed webhooks (Standard Webhooks) end to end: endpoints through the API, events from real actions
through the public API, delivered by the real Celery worker to a loopback receiver that verifies every
request with the `standardwebhooks` package (tests/webhook_receiver.py); replayed and tampered requests
are rejected by that receiver; content only when opted in; retries, abandonment and disabling; tenant
isolation and roles."""

import base64
import time
from datetime import timedelta

import httpx
import pytest
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent
from core.crypto import decrypt
from memory.models import ExtractionJob
from projects.models import ProjectRole
from projects.services import project_member_set
from webhooks.delivery import signed_request
from webhooks.models import SUBSCRIBABLE, WebhookDelivery, WebhookEndpoint

from .conftest import client_for
from .test_worker import wait_for, worker  # noqa: F401 - the real-worker fixture
from .webhook_receiver import WebhookReceiver

URL = "/api/v1/webhooks"


@pytest.fixture
def receiver():
    with WebhookReceiver() as r:
        yield r


def create_endpoint(client, receiver: WebhookReceiver | None = None, **body) -> dict:
    if receiver is not None:
        body.setdefault("url", receiver.url)
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    if receiver is not None:
        receiver.secret = created["secret"]
    return created


def add_memory(client, content: str, **body) -> dict:
    response = client.post("/api/v1/memories", {"content": content, **body}, format="json")
    assert response.status_code in (200, 201), response.content  # 200: merged into a duplicate
    return response.json()


def wait_rows(query, predicate, timeout: float = 60.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = list(query())
        if predicate(rows):
            return rows
        time.sleep(0.1)
    raise AssertionError(f"{what or predicate} not met after {timeout}s: {list(query())}")


# ---- every event, signed and verified -------------------------------------------------------------


@pytest.mark.usefixtures("worker")
def test_it_delivers_each_memory_event_and_the_forget_signed(alice_client, key_a, receiver):
    endpoint = create_endpoint(alice_client, receiver, description="all events")
    assert endpoint["events"] == [] and endpoint["include_content"] is False
    _, client = key_a

    created = add_memory(client, "The user prefers dark mode in every editor", user_id="u1", tags=["ui"])
    merged = add_memory(client, "The user prefers dark mode in every editor", user_id="u1")
    assert merged["duplicate_of"] == created["id"]
    patched = client.patch(
        f"/api/v1/memories/{created['id']}", {"content": "The user prefers light mode"}, format="json"
    )
    assert patched.status_code == 200, patched.content
    batch = client.post(
        "/api/v1/memories/batch",
        {
            "memories": [
                {"content": "Works night shifts at the hospital", "user_id": "u1"},
                {"content": "用户对花生过敏", "user_id": "u1"},
            ]
        },
        format="json",
    )
    assert batch.status_code in (200, 201), batch.content
    batch_ids = [r["id"] for r in batch.json()["results"]]
    assert client.delete(f"/api/v1/memories/{created['id']}").status_code == 204
    deleted_all = client.delete("/api/v1/memories?user_id=u1")
    assert deleted_all.status_code == 200 and deleted_all.json()["deleted"] == 2, deleted_all.content
    # (a forget removes the subject's deliveries not sent yet: it waits for these first)
    receiver.wait_for(lambda p: len([x for x in p if x["type"] == "memory.deleted"]) == 3, what="3 deletes")
    rows = WebhookDelivery.objects.filter(endpoint_id=endpoint["id"])
    sent = wait_rows(
        lambda: rows.values_list("message_id", "status", "attempts", "last_status_code"),
        lambda r: all(x[1] == "succeeded" for x in r),
        what="all succeeded",
    )
    assert {x[1:] for x in sent} == {("succeeded", 1, 200)} and len(sent) == 8
    assert client.delete("/api/v1/users/u1").status_code in (200, 204)

    seen = receiver.wait_for(lambda p: any(x["type"] == "subject.forgotten" for x in p), what="forget")
    by_type = {}
    for payload in seen:
        by_type.setdefault(payload["type"], []).append(payload["data"])
    # Each delivery is its own task and the worker runs two at once: a batch's events may arrive in either order.
    created_ids = [d["id"] for d in by_type["memory.created"]]
    assert created_ids[0] == created["id"] and sorted(created_ids[1:]) == sorted(batch_ids)
    assert [d["id"] for d in by_type["memory.merged"]] == [created["id"]]
    assert [d["id"] for d in by_type["memory.updated"]] == [created["id"]]
    assert sorted(d["id"] for d in by_type["memory.deleted"]) == sorted([created["id"], *batch_ids])
    assert by_type["memory.created"][0]["user_id"] == "u1" and by_type["memory.created"][0]["scope"] == "user"
    [forgot] = by_type["subject.forgotten"]
    assert forgot["user_id"] == "u1" and forgot["complete"] is True
    # ids and metadata, no content: this endpoint did not opt in
    for payload in seen:
        assert set(payload) == {"type", "timestamp", "data"} and payload["timestamp"].endswith("Z")
        assert not {"content", "tags", "metadata"} & set(payload["data"]), payload
    assert "dark mode" not in str(receiver.requests) and "花生" not in str(receiver.requests)
    # the Standard Webhooks headers on every request, one webhook-id per delivery row
    ids = set()
    for headers, _ in receiver.requests:
        assert headers["webhook-id"].startswith("msg_") and headers["webhook-signature"].startswith("v1,")
        assert abs(int(headers["webhook-timestamp"]) - time.time()) < 120
        assert headers["content-type"] == "application/json"
        ids.add(headers["webhook-id"])
    [forgotten] = rows.values_list("message_id", flat=True)  # a forget took the subject's deliveries along
    assert ids == {x[0] for x in sent} | {forgotten}


@pytest.mark.usefixtures("worker")
def test_it_delivers_extraction_and_supersede_events_from_the_worker(
    alice_client, key_a, org_a, receiver, settings
):
    create_endpoint(
        alice_client,
        receiver,
        events=["extraction.failed", "memory.superseded", "extraction.completed"],
    )
    _, client = key_a
    first = client.post(
        "/api/v1/sessions/w-1/messages",
        {
            "user_id": "u1",
            "messages": [{"role": "human", "content": "请记住，我住在北京的朝阳区，离公司很近"}],
        },
        format="json",
    )
    assert first.status_code == 201, first.content
    job = wait_for(first.json()["extraction_job"]["id"])
    # Two statements: "用户住在北京的朝阳区" and "用户离公司很近"; the correction supersedes the first.
    added = next(a for a in job.result["added"] if "北京" in a["content"])
    correction = client.post(
        "/api/v1/sessions/w-2/messages",
        {"user_id": "u1", "messages": [{"role": "human", "content": "不对，我现在住在上海的浦东新区"}]},
        format="json",
    )
    wait_for(correction.json()["extraction_job"]["id"])
    # A job that breaks, retried by a person through the API, fails in the worker.
    settings.EXTRACTION_MAX_ATTEMPTS = 1
    broken = ExtractionJob.objects.create(
        org=org_a, user_id="u1", messages=[{"role": "human", "content": 12345}], status="failed"
    )
    assert client.post(f"/api/v1/extraction-jobs/{broken.pk}/retry").status_code == 202
    assert wait_for(broken.pk).status == "failed"

    receiver.wait_for(lambda p: len(p) >= 4, what="four events")
    time.sleep(0.5)
    assert sorted(receiver.events()) == [
        "extraction.completed",
        "extraction.completed",
        "extraction.failed",
        "memory.superseded",
    ]
    done = receiver.of_type("extraction.completed")[0]["data"]
    assert done["id"] == first.json()["extraction_job"]["id"]
    assert done["added"] == [a["id"] for a in job.result["added"]]
    assert done["status"] == "done" and done["user_id"] == "u1"
    [superseded] = receiver.of_type("memory.superseded")
    assert superseded["data"]["id"] == added["id"] and superseded["data"]["status"] == "superseded"
    assert superseded["data"]["superseded_by"] is not None
    [failed] = receiver.of_type("extraction.failed")
    assert failed["data"]["id"] == broken.pk and "TypeError" in failed["data"]["error"]
    assert not receiver.of_type("memory.created")  # not subscribed


# ---- content, forget ------------------------------------------------------------------------------


@pytest.mark.usefixtures("worker")
def test_it_sends_content_only_to_an_endpoint_that_opted_in_and_a_forget_removes_it(alice_client, key_a):
    with WebhookReceiver() as plain, WebhookReceiver() as full:
        create_endpoint(alice_client, plain)
        with_content = create_endpoint(alice_client, full, include_content=True)
        assert with_content["include_content"] is True
        _, client = key_a
        item = add_memory(
            client, "用户喜欢在周末去爬山", user_id="u7", tags=["hobby"], metadata={"src": "chat"}
        )
        plain.wait_for(lambda p: len(p) == 1)
        [rich] = full.wait_for(lambda p: len(p) == 1)
        [bare] = plain.verified
        assert rich["data"]["content"] == "用户喜欢在周末去爬山" and rich["data"]["tags"] == ["hobby"]
        assert rich["data"]["metadata"] == {"src": "chat"}
        assert "content" not in bare["data"] and bare["data"]["id"] == rich["data"]["id"] == item["id"]
        assert WebhookDelivery.objects.filter(user_id="u7").count() == 2

        assert client.delete("/api/v1/users/u7").status_code in (200, 204)
        full.wait_for(lambda p: p[-1]["type"] == "subject.forgotten")
        # the forgotten subject's deliveries are gone; nothing stored still holds the content
        assert not WebhookDelivery.objects.filter(user_id="u7").exists()
        assert "爬山" not in str(list(WebhookDelivery.objects.values_list("payload", flat=True)))


# ---- replay, tamper -------------------------------------------------------------------------------


@pytest.mark.usefixtures("worker")
def test_the_receiver_rejects_a_replayed_and_a_tampered_delivery(alice_client, receiver):
    endpoint = create_endpoint(alice_client, receiver)
    sent = alice_client.post(f"{URL}/{endpoint['id']}/test")
    assert sent.status_code == 202 and sent.json()["event"] == "webhook.test"
    [payload] = receiver.wait_for(lambda p: len(p) == 1)
    assert payload["data"]["endpoint_id"] == endpoint["id"]
    headers, body = receiver.requests[0]
    headers = {k: v for k, v in headers.items() if k not in ("content-length", "host")}

    # Tampered: the same signed headers over another body.
    tampered = body.replace(b"webhook.test", b"memory.deleted")
    answer = httpx.post(receiver.url, content=tampered, headers=headers)
    assert answer.status_code == 400 and "No matching signature" in answer.text
    # Replayed: the real signing code, with a timestamp ten minutes old (beyond the 5-minute tolerance).
    delivery = WebhookDelivery.objects.get(message_id=headers["webhook-id"])
    old_body, old_headers = signed_request(
        delivery, receiver.secret, now=timezone.now() - timedelta(minutes=10)
    )
    answer = httpx.post(receiver.url, content=old_body, headers=old_headers)
    assert answer.status_code == 400 and "too old" in answer.text
    # The captured headers with only the timestamp moved: the signature no longer matches.
    moved = {**headers, "webhook-timestamp": str(int(time.time()) + 1)}
    assert httpx.post(receiver.url, content=body, headers=moved).status_code == 400
    # Signed with another secret: rejected.
    _, other = signed_request(delivery, "whsec_" + base64.b64encode(b"x" * 32).decode())
    assert httpx.post(receiver.url, content=body, headers=other).status_code == 400
    assert len(receiver.verified) == 1 and len(receiver.rejected) == 4


# ---- failures: retries, abandon, disable ----------------------------------------------------------


@pytest.mark.usefixtures("worker")
def test_a_failing_receiver_gets_retries_then_the_endpoint_is_disabled(
    alice_client, alice, org_a, receiver, settings
):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 0.3, 0.3]
    settings.WEBHOOK_DISABLE_AFTER = 2
    endpoint = create_endpoint(alice_client, receiver)
    receiver.always_fail = 500
    for _ in range(2):
        assert alice_client.post(f"{URL}/{endpoint['id']}/test").status_code == 202
        wait_rows(
            lambda: WebhookDelivery.objects.filter(endpoint_id=endpoint["id"]).values_list(
                "status", flat=True
            ),
            lambda s: s and all(x == "abandoned" for x in s),
            what="abandoned",
        )
    log = alice_client.get(f"{URL}/{endpoint['id']}/deliveries").json()["results"]
    assert [(d["status"], d["attempts"], d["response_code"], d["last_error"]) for d in log] == [
        ("abandoned", 3, 500, "HTTP 500")
    ] * 2
    assert len(receiver.requests) == 6  # every attempt reached the receiver, signed
    body = alice_client.get(f"{URL}/{endpoint['id']}").json()
    assert body["active"] is False and body["consecutive_failures"] == 2 and body["disabled_at"]
    event = AuditEvent.objects.get(org=org_a, action="webhook.disable")
    assert event.target_id == str(endpoint["id"]) and event.details == {"failures": 2}
    # a disabled endpoint gets nothing and says so on the page
    assert alice_client.post(f"{URL}/{endpoint['id']}/test").status_code == 409
    browser = Client()
    browser.force_login(alice)
    page = browser.get("/webhooks/")
    assert page.status_code == 200 and 'data-testid="disabled-notice"' in page.content.decode()
    assert receiver.url in page.content.decode()

    # Fixed and enabled again: a retry of an abandoned delivery goes through.
    receiver.always_fail = None
    enabled = alice_client.patch(f"{URL}/{endpoint['id']}", {"active": True}, format="json")
    assert (
        enabled.status_code == 200
        and enabled.json()["active"]
        and enabled.json()["consecutive_failures"] == 0
    )
    retried = alice_client.post(f"{URL}/{endpoint['id']}/deliveries/{log[0]['id']}/retry")
    assert retried.status_code == 202, retried.content
    receiver.wait_for(lambda p: len(p) == 1)
    row = wait_rows(
        lambda: WebhookDelivery.objects.filter(pk=log[0]["id"]),
        lambda r: r[0].status == "succeeded",
        what="retried delivery succeeded",
    )[0]
    assert (row.attempts, row.last_status_code, row.last_error) == (4, 200, "")
    again = alice_client.post(f"{URL}/{endpoint['id']}/deliveries/{log[0]['id']}/retry")
    assert again.status_code == 409


# ---- tenants, roles, input ------------------------------------------------------------------------


@pytest.mark.usefixtures("worker")
def test_another_orgs_endpoint_never_hears_of_this_org(alice_client, charlie_client, key_a, key_b):
    with WebhookReceiver() as mine, WebhookReceiver() as theirs:
        a = create_endpoint(alice_client, mine)
        b = create_endpoint(charlie_client, theirs)
        a_item = add_memory(key_a[1], "Org A's user keeps two cats at home", user_id="u1")
        b_item = add_memory(key_b[1], "Org B's user drives an old red truck", user_id="u1")
        mine.wait_for(lambda p: len(p) == 1)
        theirs.wait_for(lambda p: len(p) == 1)
        time.sleep(0.5)
        assert [p["data"]["id"] for p in mine.verified] == [a_item["id"]]
        assert [p["data"]["id"] for p in theirs.verified] == [b_item["id"]]
    assert [e["id"] for e in charlie_client.get(URL).json()["results"]] == [b["id"]]
    for method, path in [
        ("get", f"{URL}/{a['id']}"),
        ("patch", f"{URL}/{a['id']}"),
        ("delete", f"{URL}/{a['id']}"),
        ("post", f"{URL}/{a['id']}/test"),
        ("post", f"{URL}/{a['id']}/rotate-secret"),
        ("get", f"{URL}/{a['id']}/deliveries"),
    ]:
        assert getattr(charlie_client, method)(path, {}, format="json").status_code == 404, path
    assert WebhookEndpoint.objects.filter(pk=a["id"], is_active=True).exists()


def test_only_admins_manage_webhooks_and_project_admins_only_their_projects(
    alice_client, bob, bob_client, key_a, project
):
    org_wide = create_endpoint(alice_client, url="http://127.0.0.1:9/org")
    atlas = create_endpoint(alice_client, url="http://127.0.0.1:9/atlas", project="atlas")
    assert atlas["project"] == project.pk
    # bob is a viewer in atlas and a plain member of the org; an API key never manages webhooks
    for client in (bob_client, key_a[1]):
        assert client.get(URL).status_code == 403
        assert client.post(URL, {"url": "http://127.0.0.1:9/x"}, format="json").status_code == 403
        assert client.get(f"{URL}/{org_wide['id']}").status_code == 403
    assert "API keys cannot manage webhooks" in key_a[1].get(URL).json()["error"]["message"]
    # made atlas's admin: its endpoints, not the org's
    project_member_set(project=project, account=bob, role=ProjectRole.ADMIN)
    bob_client = client_for(bob)
    assert [e["id"] for e in bob_client.get(URL).json()["results"]] == [atlas["id"]]
    assert bob_client.get(f"{URL}/{org_wide['id']}").status_code == 403
    assert bob_client.post(URL, {"url": "http://127.0.0.1:9/b"}, format="json").status_code == 403
    mine = bob_client.post(URL, {"url": "http://127.0.0.1:9/b", "project": str(project.pk)}, format="json")
    assert mine.status_code == 201 and mine.json()["project"] == project.pk
    assert bob_client.delete(f"{URL}/{atlas['id']}").status_code == 204
    assert set(WebhookEndpoint.objects.values_list("pk", flat=True)) == {org_wide["id"], mine.json()["id"]}
    assert set(AuditEvent.objects.filter(action__startswith="webhook.").values_list("action", flat=True)) == {
        "webhook.create",
        "webhook.delete",
    }


@pytest.mark.usefixtures("worker")
def test_a_project_endpoint_gets_only_that_projects_shared_events(alice_client, project):
    with WebhookReceiver() as org_wide, WebhookReceiver() as atlas:
        create_endpoint(alice_client, org_wide)
        create_endpoint(alice_client, atlas, project="atlas")
        shared = add_memory(alice_client, "Atlas ships on the first Monday", scope="project", project="atlas")
        private = add_memory(
            alice_client,
            "Atlas draft notes only I read",
            scope="project",
            project="atlas",
            visibility="owner_only",
        )
        personal = add_memory(alice_client, "I take my coffee without sugar")
        org_wide.wait_for(lambda p: len(p) == 3)
        atlas.wait_for(lambda p: len(p) == 1)
        time.sleep(0.5)
        assert [p["data"]["id"] for p in atlas.verified] == [shared["id"]]
        assert sorted(p["data"]["id"] for p in org_wide.verified) == sorted(
            [shared["id"], private["id"], personal["id"]]
        )
        assert atlas.verified[0]["data"]["project"] == project.pk


def test_the_secret_is_shown_once_stored_encrypted_and_rotates(alice_client, org_a):
    created = create_endpoint(alice_client, url="http://127.0.0.1:9/hook")
    secret = created["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) >= 24
    row = WebhookEndpoint.objects.get(pk=created["id"])
    assert secret not in row.secret_encrypted and decrypt(row.secret_encrypted) == secret
    assert "secret" not in alice_client.get(f"{URL}/{created['id']}").json()
    assert all("secret" not in e for e in alice_client.get(URL).json()["results"])
    rotated = alice_client.post(f"{URL}/{created['id']}/rotate-secret")
    assert rotated.status_code == 200 and rotated["Cache-Control"] == "no-store"
    new = rotated.json()["secret"]
    assert new.startswith("whsec_") and new != secret
    row.refresh_from_db()
    assert decrypt(row.secret_encrypted) == new
    assert AuditEvent.objects.filter(org=org_a, action="webhook.rotate", target_id=str(row.pk)).exists()


def test_it_refuses_bad_input_with_a_clear_400_and_writes_nothing(alice_client, settings):
    cases = [
        ({"url": "not a url"}, "url"),
        ({"url": "ftp://example.com/hook"}, "url"),
        ({"url": "http://127.0.0.1:9/h", "events": ["memory.created", "memory.exploded"]}, "events"),
        ({"url": "http://127.0.0.1:9/h", "events": "memory.created"}, "events"),
        ({"url": "http://127.0.0.1:9/h", "colour": "red"}, "colour"),
        ({"url": "http://127.0.0.1:9/h", "project": "no-such-project"}, None),
    ]
    for body, field in cases:
        response = alice_client.post(URL, body, format="json")
        assert response.status_code in (400, 404), (body, response.content)
        if field:
            assert response.status_code == 400 and field in response.json()["error"]["details"], (
                response.content
            )
    unknown = alice_client.post(
        URL, {"url": "http://127.0.0.1:9/h", "events": ["memory.exploded"]}, format="json"
    )
    message = unknown.json()["error"]["message"]
    assert "memory.exploded" in message and all(name in message for name in SUBSCRIBABLE)
    settings.ENGRAM_OUTBOUND_ALLOW = []
    private = alice_client.post(URL, {"url": "http://127.0.0.1:9/h"}, format="json")
    assert private.status_code == 400 and "internal address" in private.json()["error"]["message"]
    assert not WebhookEndpoint.objects.exists()

    settings.ENGRAM_OUTBOUND_ALLOW = ["127.0.0.0/8"]
    endpoint = create_endpoint(alice_client, url="http://127.0.0.1:9/h")
    bad = alice_client.patch(f"{URL}/{endpoint['id']}", {"events": ["nope"]}, format="json")
    assert bad.status_code == 400 and "memory.created" in bad.json()["error"]["message"]
    assert (
        alice_client.put(
            f"{URL}/{endpoint['id']}", {"url": "http://127.0.0.1:9/x"}, format="json"
        ).status_code
        == 405
    )
    bogus = alice_client.get(f"{URL}/{endpoint['id']}/deliveries", {"status": "bogus"})
    assert bogus.status_code == 400 and "abandoned" in bogus.json()["error"]["message"]
    assert WebhookEndpoint.objects.get().events == []


def test_the_delivery_log_is_paginated_newest_first(alice_client, org_a):
    endpoint = create_endpoint(alice_client, url="http://127.0.0.1:9/h")
    ids = [alice_client.post(f"{URL}/{endpoint['id']}/test").json()["id"] for _ in range(3)]
    first = alice_client.get(f"{URL}/{endpoint['id']}/deliveries", {"page_size": 2}).json()
    assert [d["id"] for d in first["results"]] == ids[::-1][:2] and first["next"]
    rest = alice_client.get(first["next"]).json()
    assert [d["id"] for d in rest["results"]] == ids[:1]
    one = alice_client.get(f"{URL}/{endpoint['id']}/deliveries/{ids[0]}").json()
    assert (
        one["event"] == "webhook.test"
        and one["status"] == "pending"
        and one["payload"]["type"] == "webhook.test"
    )
