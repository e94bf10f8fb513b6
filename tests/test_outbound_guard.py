"""SSRF: URLs a tenant configures (embedding and chat endpoints) reach public addresses only, checked when
saved (400 naming base_url) and again when called (re-resolved, pinned, no redirects followed); who may
point their own memories at an endpoint of their choosing.

The test settings let loopback through (for tests/openai_server.py); these tests put the production
default back (the `guard` fixture)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest

from core.llm import LLMError
from core.net import UnsafeURL, check_url, guarded_http_client
from memory.embeddings import EmbeddingError, provider_for
from memory.llm import llm_for
from memory.models import EmbeddingConfig, LLMConfig, MemoryItem
from projects.models import ProjectMembership, ProjectRole
from projects.services import project_member_change_role

from .openai_server import OpenAIStub

EMBEDDING = "/api/v1/embedding-config"
LLM = "/api/v1/llm-config"

BLOCKED = [
    "http://127.0.0.1:8080/v1",  # loopback
    "http://localhost:6379/v1",  # a name for loopback
    "http://2130706433/v1",  # 127.0.0.1 as a number
    "http://169.254.169.254/latest/meta-data",  # link-local (cloud metadata)
    "http://10.0.0.5/v1",  # private
    "http://192.168.1.1/v1",
    "http://172.16.0.1/v1",
    "http://100.64.0.1/v1",  # shared address space (CGNAT)
    "http://0.0.0.0/v1",  # unspecified
    "http://224.0.0.1/v1",  # multicast
    "http://240.0.0.1/v1",  # reserved
    "http://[::1]/v1",
    "http://[::]/v1",
    "http://[fe80::1]/v1",
    "http://[fc00::1]/v1",
    "http://[ff02::1]/v1",
    "http://[::ffff:127.0.0.1]/v1",  # IPv4-mapped
    "http://[::ffff:169.254.169.254]/v1",
    "http://[64:ff9b::a00:5]/v1",  # NAT64 of 10.0.0.5
    "http://[2002:7f00:1::1]/v1",  # 6to4 of 127.0.0.1
    "http://no-such-host.invalid/v1",  # does not resolve: cannot be checked
]


@pytest.fixture
def guard(settings):
    """The production default: no private address is allowed."""
    settings.ENGRAM_OUTBOUND_ALLOW = []
    settings.ENGRAM_ALLOW_PRIVATE_URLS = False
    return settings


@pytest.mark.parametrize("url", BLOCKED)
def test_it_refuses_an_internal_embedding_url_when_saved(guard, alice_client, org_a, url):
    for level in ("org", "user"):
        body = {"level": level, "provider": "openai", "model": "m", "base_url": url}
        response = alice_client.put(EMBEDDING, body, format="json")
        assert response.status_code == 400, (url, response.content)
        error = response.json()["error"]
        assert list(error["details"]) == ["base_url"] and error["message"].startswith("base_url: ")
    assert not EmbeddingConfig.objects.exists()


@pytest.mark.parametrize("url", BLOCKED)
def test_it_refuses_an_internal_llm_url_when_saved(guard, alice_client, org_a, url):
    response = alice_client.put(LLM, {"base_url": url, "model": "m"}, format="json")
    assert response.status_code == 400, (url, response.content)
    assert list(response.json()["error"]["details"]) == ["base_url"]
    assert not LLMConfig.objects.exists()


@pytest.mark.parametrize("url", ["ftp://example.com/v1", "file:///etc/passwd", "gopher://example.com/"])
def test_it_refuses_other_schemes(guard, alice_client, url):
    response = alice_client.put(LLM, {"base_url": url, "model": "m"}, format="json")
    assert response.status_code == 400 and "base_url" in response.json()["error"]["details"]
    with pytest.raises(UnsafeURL):
        check_url(url)


def test_it_accepts_public_addresses(guard):
    for url in ["https://8.8.8.8/v1", "http://[2606:4700:4700::1111]:8080/v1", "https://1.1.1.1"]:
        check_url(url)


def test_it_explains_the_refusal_in_chinese(guard, alice_client):
    response = alice_client.put(
        LLM, {"base_url": "http://10.0.0.5/v1", "model": "m"}, format="json", HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert response.status_code == 400
    assert "内部地址" in response.json()["error"]["message"]


def test_the_operator_may_allow_private_addresses(guard, alice_client, org_a):
    body = {"base_url": "http://10.0.0.5/v1", "model": "m"}
    assert alice_client.put(LLM, body, format="json").status_code == 400
    guard.ENGRAM_OUTBOUND_ALLOW = ["10.0.0.0/8"]
    assert alice_client.put(LLM, body, format="json").status_code == 200
    guard.ENGRAM_OUTBOUND_ALLOW = ["localhost"]  # a host name: whatever it resolves to
    assert (
        alice_client.put(LLM, {**body, "base_url": "http://localhost:11434/v1"}, format="json").status_code
        == 200
    )
    guard.ENGRAM_OUTBOUND_ALLOW = []
    guard.ENGRAM_ALLOW_PRIVATE_URLS = True
    assert alice_client.put(LLM, {**body, "base_url": "http://[::1]/v1"}, format="json").status_code == 200
    assert LLMConfig.objects.get(org=org_a).base_url == "http://[::1]/v1"


# ---- at request time ---------------------------------------------------------------------------------


def stored_embedding_config(org, base_url, user_id=""):
    """A configuration saved while its host still resolved to a public address (or before this check)."""
    return EmbeddingConfig.objects.create(
        org=org, user_id=user_id, provider="openai", model="stub-embed", base_url=base_url, dimensions=384
    )


def test_it_refuses_a_name_that_now_resolves_to_loopback(guard, org_a, key_a):
    with OpenAIStub() as stub:
        port = stub.base_url.rsplit(":", 1)[1].split("/")[0]
        stored_embedding_config(org_a, f"http://localhost:{port}/v1")
        with pytest.raises(EmbeddingError, match="refused"):
            provider_for(org_a).embed_passages(["The office wifi password rotates monthly"])
        _, client = key_a
        response = client.post(
            "/api/v1/memories", {"content": "Dana prefers tea over coffee", "user_id": "dana"}, format="json"
        )
        assert response.status_code in (200, 201), response.content
        assert MemoryItem.objects.get(user_id="dana").embedding is None  # stored, not sent anywhere
        assert stub.requests == []


def test_the_connection_itself_checks_and_pins_the_address(guard):
    """Below the save-time and send-time checks: every connection re-resolves and checks its host."""
    with OpenAIStub() as stub:
        port = stub.base_url.rsplit(":", 1)[1].split("/")[0]
        for host in ("localhost", "127.0.0.1"):
            with (
                guarded_http_client(timeout=2) as client,
                pytest.raises(httpx2.ConnectError, match="internal"),
            ):
                client.post(f"http://{host}:{port}/v1/embeddings", json={"input": ["x"], "model": "m"})
        assert stub.requests == []
        guard.ENGRAM_OUTBOUND_ALLOW = ["127.0.0.1/32"]
        with guarded_http_client(timeout=2) as client:
            client.post(f"http://127.0.0.1:{port}/v1/embeddings", json={"input": ["x"], "model": "m"})
        assert len(stub.requests) == 1


def test_it_refuses_the_chat_model_at_an_internal_address(guard, org_a):
    with OpenAIStub() as stub:
        port = stub.base_url.rsplit(":", 1)[1].split("/")[0]
        LLMConfig.objects.create(org=org_a, base_url=f"http://localhost:{port}/v1", model="stub-chat")
        with pytest.raises(LLMError) as raised:
            llm_for(org_a).chat([{"role": "user", "content": "hello"}])
        assert raised.value.transient is False  # retrying will not help
        assert stub.requests == []


class _Server:
    """A loopback HTTP server on `host` that records each request and answers with `reply(path)`."""

    def __init__(self, host: str, reply):
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                hits.append(self.path)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers = reply(self.path)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_it_does_not_follow_a_redirect_to_an_internal_address(guard, org_a):
    guard.ENGRAM_OUTBOUND_ALLOW = ["127.0.0.1/32"]  # the endpoint itself is allowed; 127.0.0.2 is not
    inside = _Server("127.0.0.2", lambda path: (200, {}))
    endpoint = _Server("127.0.0.1", lambda path: (307, {"Location": f"{inside.url}{path}"}))
    try:
        stored_embedding_config(org_a, f"{endpoint.url}/v1")
        with pytest.raises(EmbeddingError):
            provider_for(org_a).embed_passages(["The door code is 4711"])
        assert endpoint.hits == ["/v1/embeddings"]
        assert inside.hits == []
    finally:
        endpoint.close()
        inside.close()


# ---- who may choose their own embedding endpoint -----------------------------------------------------


def test_a_viewer_may_not_choose_an_embedding_endpoint(
    bob_client, alice_client, org_a, alice_actor, project, bob
):
    with OpenAIStub() as stub:
        body = {"level": "user", "provider": "openai", "model": "stub-embed", "base_url": stub.base_url}
        assert bob_client.put(EMBEDDING, body, format="json").status_code == 403
        org_a.members_set_embedding = True
        org_a.save()
        assert bob_client.put(EMBEDDING, body, format="json").status_code == 403  # still a viewer
        assert not EmbeddingConfig.objects.exists()
        membership = ProjectMembership.objects.get(project=project, account=bob)
        project_member_change_role(actor=alice_actor, membership=membership, role=ProjectRole.EDITOR)
        assert bob_client.put(EMBEDDING, body, format="json").status_code == 200
        org_a.members_set_embedding = False
        org_a.save()
        assert bob_client.put(EMBEDDING, {**body, "model": "other"}, format="json").status_code == 403
        assert EmbeddingConfig.objects.get(user_id="bob").model == "stub-embed"
        assert bob_client.get(f"{EMBEDDING}?level=user").status_code == 200  # reading is still allowed
        assert bob_client.delete(f"{EMBEDDING}?level=user").status_code == 200  # and going back to the org's
        assert not EmbeddingConfig.objects.exists()
        # An org owner or admin may always choose its own.
        assert alice_client.put(EMBEDDING, body, format="json").status_code == 200
