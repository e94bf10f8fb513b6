"""The LangGraph store API driven by LangGraph's own client (`langgraph_sdk.get_client(...).store`) against the
live test server: put, get, search (namespace prefix, filter operators, paging, meaning), namespaces, delete,
TTL, the content gate, and the org's isolation."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Annotated

import httpx
import pytest
from django.utils import timezone
from engram_client.langgraph import EngramStore
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.base import BaseStore, Item, SearchItem
from langgraph_sdk import get_client, get_sync_client

from memory.models import StoreItem
from memory.tasks import store_items_purge
from projects.services import api_key_create

from .factories import OrgFactory


@pytest.fixture
def org(transactional_db):
    return OrgFactory(slug="store-org", name="Store Org")


@pytest.fixture
def secret(org):
    return api_key_create(org=org, name="graph")[1]


@pytest.fixture
def store(live_server, secret):
    return get_sync_client(url=f"{live_server.url}/api/v1", api_key=secret).store


def _status(call) -> int:
    with pytest.raises(httpx.HTTPStatusError) as raised:
        call()
    return raised.value.response.status_code


def test_it_puts_gets_and_deletes_items_with_caller_chosen_keys(store, org):
    store.put_item(["users", "u1", "prefs"], key="food", value={"likes": "spicy food", "level": 3})
    item = store.get_item(["users", "u1", "prefs"], key="food")
    assert item["namespace"] == ["users", "u1", "prefs"] and item["key"] == "food"
    assert item["value"] == {"likes": "spicy food", "level": 3}
    assert item["created_at"].endswith("Z") and item["updated_at"].endswith("Z")
    store.put_item(["users", "u1", "prefs"], key="food", value={"likes": "sweet food", "level": 1})
    assert store.get_item(["users", "u1", "prefs"], key="food")["value"]["likes"] == "sweet food"
    assert StoreItem.objects.filter(org=org).count() == 1  # replaced, not added
    store.delete_item(["users", "u1", "prefs"], key="food")
    assert _status(lambda: store.get_item(["users", "u1", "prefs"], key="food")) == 404
    assert not StoreItem.objects.exists()


def test_it_searches_by_prefix_filter_paging_and_meaning(store):
    store.put_item(["docs", "a"], key="1", value={"text": "用户喜欢喝乌龙茶", "stars": 5, "lang": "zh"})
    store.put_item(
        ["docs", "a"], key="2", value={"text": "The user plays tennis on Sundays", "stars": 3, "lang": "en"}
    )
    store.put_item(
        ["docs", "b"], key="3", value={"text": "Deploys go out on Fridays", "stars": 1, "lang": "en"}
    )
    store.put_item(["other"], key="4", value={"text": "not under docs", "stars": 5, "lang": "en"})

    every = store.search_items(["docs"], limit=10)["items"]
    assert {i["key"] for i in every} == {"1", "2", "3"}
    assert all(i["score"] is None for i in every)
    assert {i["key"] for i in store.search_items(["docs", "a"])["items"]} == {"1", "2"}
    assert {i["key"] for i in store.search_items([])["items"]} == {"1", "2", "3", "4"}

    def keys(**filter_):
        return {i["key"] for i in store.search_items(["docs"], filter=filter_)["items"]}

    assert keys(lang="en") == {"2", "3"}
    assert keys(lang={"$eq": "zh"}) == {"1"}
    assert keys(lang={"$ne": "zh"}) == {"2", "3"}
    assert keys(stars={"$gt": 3}) == {"1"}
    assert keys(stars={"$gte": 3}) == {"1", "2"}
    assert keys(stars={"$lt": 3}) == {"3"}
    assert keys(stars={"$lte": 3}) == {"2", "3"}
    assert keys(stars={"$gte": 2, "$lte": 4}) == {"2"}

    first = store.search_items(["docs"], limit=2, offset=0)["items"]
    rest = store.search_items(["docs"], limit=2, offset=2)["items"]
    assert len(first) == 2 and len(rest) == 1
    assert {i["key"] for i in first + rest} == {"1", "2", "3"}

    tea = store.search_items(["docs"], query="什么茶", limit=3)["items"]
    assert tea[0]["key"] == "1" and 0 < tea[0]["score"] <= 1
    assert tea[0]["score"] >= tea[-1]["score"]
    sport = store.search_items(["docs"], query="which sport does the user play", limit=1)["items"]
    assert [i["key"] for i in sport] == ["2"]
    filtered = store.search_items(["docs"], query="what does the user drink", filter={"lang": "en"})["items"]
    assert "1" not in {i["key"] for i in filtered}


def test_it_embeds_only_the_fields_named_by_index(store, org):
    store.put_item(
        ["notes"], key="n1", value={"title": "Tea", "body": "oolong every morning"}, index=["body"]
    )
    store.put_item(["notes"], key="n2", value={"title": "Secret plan", "body": "x"}, index=False)
    assert StoreItem.objects.get(key="n2").embedding is None
    assert StoreItem.objects.get(key="n1").embedding is not None
    found = store.search_items(["notes"], query="morning tea")["items"]
    assert [i["key"] for i in found] == ["n1"]  # not indexed: found by filters, never by meaning
    assert {i["key"] for i in store.search_items(["notes"])["items"]} == {"n1", "n2"}


def test_it_lists_namespaces_by_prefix_suffix_and_depth(store):
    for namespace in (["a", "x", "1"], ["a", "y", "1"], ["a", "y", "2"], ["b", "x"]):
        store.put_item(namespace, key="k", value={"v": 1})
    assert store.list_namespaces()["namespaces"] == [
        ["a", "x", "1"],
        ["a", "y", "1"],
        ["a", "y", "2"],
        ["b", "x"],
    ]
    assert store.list_namespaces(prefix=["a", "y"])["namespaces"] == [["a", "y", "1"], ["a", "y", "2"]]
    assert store.list_namespaces(suffix=["1"])["namespaces"] == [["a", "x", "1"], ["a", "y", "1"]]
    assert store.list_namespaces(prefix=["*", "x"])["namespaces"] == [["a", "x", "1"], ["b", "x"]]
    assert store.list_namespaces(max_depth=1)["namespaces"] == [["a"], ["b"]]
    assert store.list_namespaces(max_depth=2, limit=2, offset=1)["namespaces"] == [["a", "y"], ["b", "x"]]


def test_expired_items_are_never_returned_and_the_beat_task_purges_them(store, org):
    store.put_item(["tmp"], key="old", value={"v": "soon gone"}, ttl=1)
    store.put_item(["tmp"], key="kept", value={"v": "stays"})
    assert store.get_item(["tmp"], key="old")["value"] == {"v": "soon gone"}
    StoreItem.objects.filter(key="old").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _status(lambda: store.get_item(["tmp"], key="old")) == 404
    assert [i["key"] for i in store.search_items(["tmp"])["items"]] == ["kept"]
    assert store.list_namespaces()["namespaces"] == [["tmp"]]
    assert store_items_purge() == 1
    assert list(StoreItem.objects.values_list("key", flat=True)) == ["kept"]


def test_reading_refreshes_the_ttl_unless_told_not_to(store):
    store.put_item(["tmp"], key="k", value={"v": 1}, ttl=10)
    soon = timezone.now() + timedelta(minutes=1)
    StoreItem.objects.filter(key="k").update(expires_at=soon)
    store.get_item(["tmp"], key="k", refresh_ttl=False)
    assert StoreItem.objects.get(key="k").expires_at == soon
    store.get_item(["tmp"], key="k")
    assert StoreItem.objects.get(key="k").expires_at > timezone.now() + timedelta(minutes=9)


def test_the_gate_refuses_secrets_in_values_keys_and_namespaces(store, live_server, secret):
    refused = httpx.put(
        f"{live_server.url}/api/v1/store/items",
        json={"namespace": ["u"], "key": "creds", "value": {"note": {"aws": "AKIAIOSFODNN7EXAMPLE"}}},
        headers={"X-Api-Key": secret, "Accept-Language": "zh-hans"},
    )
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["code"] == "sensitive_content" and "value.note.aws" in error["message"]
    assert "密钥" in error["message"] or "拒绝" in error["message"], error
    assert (
        _status(lambda: store.put_item(["u"], key="sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", value={}))
        == 422
    )
    assert not StoreItem.objects.exists()


def test_bad_input_is_a_400_naming_the_field(live_server, secret):
    url = f"{live_server.url}/api/v1/store"
    headers = {"X-Api-Key": secret}
    for body, field in (
        ({"namespace": [], "key": "k", "value": {}}, "namespace"),
        ({"namespace": ["a.b"], "key": "k", "value": {}}, "namespace"),
        ({"namespace": ["a"], "key": "", "value": {}}, "key"),
        ({"namespace": ["a"], "key": "k", "value": [1]}, "value"),
        ({"namespace": ["a"], "key": "k", "value": {}, "index": "body"}, "index"),
        ({"namespace": ["a"], "key": "k", "value": {}, "ttl": -1}, "ttl"),
        ({"namespace": ["a"], "key": "k", "value": {}, "extra": 1}, "extra"),
        ({"namespace": ["a"], "key": "k", "value": {"t": "a\u0000b"}}, "value"),
    ):
        answer = httpx.put(f"{url}/items", json=body, headers=headers)
        assert answer.status_code == 400, (body, answer.text)
        assert field in answer.json()["error"]["message"], (body, answer.text)
    lone = '{"namespace": ["a\\ud800"], "key": "k", "value": {}}'
    surrogate = httpx.put(
        f"{url}/items", content=lone, headers={**headers, "Content-Type": "application/json"}
    )
    assert surrogate.status_code == 400 and "namespace" in surrogate.json()["error"]["message"], (
        surrogate.text
    )
    zh = httpx.put(
        f"{url}/items",
        json={"namespace": ["a.b"], "key": "k", "value": {}},
        headers={**headers, "Accept-Language": "zh-hans"},
    )
    assert "标签" in zh.json()["error"]["message"], zh.text
    bad_filter = httpx.post(f"{url}/items/search", json={"filter": {"a": {"$regex": "x"}}}, headers=headers)
    assert bad_filter.status_code == 400 and "$regex" in bad_filter.json()["error"]["message"]
    null = httpx.post(f"{url}/items/search", json={"filter": {"a": {"$gt": None}}}, headers=headers)
    assert null.status_code == 400 and "$gt" in null.json()["error"]["message"], null.text
    assert httpx.get(f"{url}/items", params={"namespace": "a"}, headers=headers).status_code == 400


def test_another_org_sees_nothing_and_read_only_keys_only_read(store, live_server, org):
    store.put_item(["shared"], key="k", value={"text": "org A's plan"})
    other = OrgFactory(slug="store-other", name="Other")
    stranger = get_sync_client(
        url=f"{live_server.url}/api/v1", api_key=api_key_create(org=other, name="b")[1]
    ).store
    assert _status(lambda: stranger.get_item(["shared"], key="k")) == 404
    assert stranger.search_items([], query="plan")["items"] == []
    assert stranger.list_namespaces()["namespaces"] == []
    stranger.put_item(["shared"], key="k", value={"text": "org B's own"})
    assert store.get_item(["shared"], key="k")["value"] == {"text": "org A's plan"}
    stranger.delete_item(["shared"], key="k")
    assert store.get_item(["shared"], key="k")["value"] == {"text": "org A's plan"}

    reader = get_sync_client(
        url=f"{live_server.url}/api/v1", api_key=api_key_create(org=org, name="r", read_only=True)[1]
    ).store
    assert reader.get_item(["shared"], key="k")["value"] == {"text": "org A's plan"}
    assert _status(lambda: reader.put_item(["shared"], key="k2", value={})) == 403
    assert _status(lambda: reader.delete_item(["shared"], key="k")) == 403
    nobody = get_sync_client(url=f"{live_server.url}/api/v1", api_key="eng_nope.wrong").store
    assert _status(lambda: nobody.list_namespaces()) == 401


def test_the_async_client_works_too(live_server, secret):
    async def run():
        client = get_client(url=f"{live_server.url}/api/v1", api_key=secret)
        await client.store.put_item(["async"], key="k", value={"text": "async works"})
        item = await client.store.get_item(["async"], key="k")
        found = await client.store.search_items(["async"], query="works")
        await client.store.delete_item(["async"], key="k")
        return item, found

    with ThreadPoolExecutor(max_workers=1) as pool:
        item, found = pool.submit(asyncio.run, run()).result()
    assert item["value"] == {"text": "async works"}
    assert [i["key"] for i in found["items"]] == ["k"]


# ---- the BaseStore adapter of the Python client (engram_client.langgraph.EngramStore) ----------------


@pytest.fixture
def engram_store(live_server, secret):
    adapter = EngramStore(live_server.url, secret, max_retries=0)
    yield adapter
    adapter.close()


def test_the_basestore_adapter_puts_gets_searches_lists_and_deletes(engram_store, org):
    engram_store.put(("memories", "u1"), "m1", {"text": "用户对花生过敏", "kind": "health"})
    engram_store.put(
        ("memories", "u1"), "m2", {"text": "Prefers short answers", "kind": "style"}, index=["text"]
    )
    engram_store.put(("memories", "u2"), "m3", {"text": "Lives in Lyon", "kind": "fact"}, ttl=60)

    item = engram_store.get(("memories", "u1"), "m1")
    assert isinstance(item, Item) and item.namespace == ("memories", "u1")
    assert item.value == {"text": "用户对花生过敏", "kind": "health"}
    assert item.created_at.tzinfo is not None
    assert engram_store.get(("memories", "u1"), "nope") is None

    found = engram_store.search(("memories",), query="does the user have an allergy", limit=2)
    assert isinstance(found[0], SearchItem) and found[0].key == "m1" and found[0].score > 0
    assert [i.key for i in engram_store.search(("memories",), filter={"kind": "style"})] == ["m2"]
    assert {i.key for i in engram_store.search(("memories", "u1"))} == {"m1", "m2"}

    assert engram_store.list_namespaces() == [("memories", "u1"), ("memories", "u2")]
    assert engram_store.list_namespaces(prefix=("memories",), max_depth=1) == [("memories",)]
    assert engram_store.list_namespaces(suffix=("u2",)) == [("memories", "u2")]

    engram_store.delete(("memories", "u1"), "m1")
    assert engram_store.get(("memories", "u1"), "m1") is None
    assert StoreItem.objects.filter(org=org).count() == 2
    assert StoreItem.objects.get(key="m3").expires_at is not None


def test_the_adapter_works_async(engram_store):
    async def run():
        await engram_store.aput(("async",), "k", {"text": "green tea after lunch"})
        item = await engram_store.aget(("async",), "k")
        found = await engram_store.asearch(("async",), query="tea")
        namespaces = await engram_store.alist_namespaces()
        await engram_store.adelete(("async",), "k")
        gone = await engram_store.aget(("async",), "k")
        await engram_store.aclose()
        return item, found, namespaces, gone

    with ThreadPoolExecutor(max_workers=1) as pool:
        item, found, namespaces, gone = pool.submit(asyncio.run, run()).result()
    assert item.value == {"text": "green tea after lunch"}
    assert [i.key for i in found] == ["k"]
    assert namespaces == [("async",)]
    assert gone is None


def test_a_react_agent_keeps_its_memories_in_engram(engram_store, org):
    """create_react_agent(model, tools, store=EngramStore(...)): the tools get the store injected and write
    through it. The model is scripted (no LLM): it calls `remember`, then `recall`, then answers."""

    class ScriptedModel(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    @tool
    def remember(fact: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Remember a fact about the user."""
        store.put(("agent", "facts"), "f1", {"text": fact})
        return "saved"

    @tool
    def recall(query: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Recall facts about the user."""
        return "; ".join(i.value["text"] for i in store.search(("agent",), query=query, limit=1))

    script = iter(
        [
            AIMessage("", tool_calls=[{"name": "remember", "args": {"fact": "用户住在杭州"}, "id": "c1"}]),
            AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "用户住在哪里"}, "id": "c2"}]),
            AIMessage("你住在杭州。"),
        ]
    )
    agent = create_react_agent(ScriptedModel(messages=script), [remember, recall], store=engram_store)
    answer = agent.invoke({"messages": [{"role": "user", "content": "记住我住在杭州，然后告诉我我住在哪"}]})
    tool_outputs = [m.content for m in answer["messages"] if m.type == "tool"]
    assert tool_outputs == ["saved", "用户住在杭州"]
    assert answer["messages"][-1].content == "你住在杭州。"
    assert StoreItem.objects.get(org=org, key="f1").value == {"text": "用户住在杭州"}


def test_a_namespace_naming_a_paused_person_stores_nothing(store, live_server, secret, org):
    from memory.models import MemoryPause

    store.put_item(["memories", "ursula"], key="tea", value={"text": "Ursula likes green tea"})
    MemoryPause.objects.create(org=org, user_id="ursula")
    store.put_item(["memories", "ursula"], key="car", value={"text": "Ursula drives a blue car"})  # no error
    answer = httpx.put(
        f"{live_server.url}/api/v1/store/items",
        json={"namespace": ["memories", "ursula"], "key": "bike", "value": {"text": "Ursula rides a bike"}},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert answer.status_code == 200 and answer.json()["status"] == "paused", answer.text
    assert list(StoreItem.objects.filter(org=org).values_list("key", flat=True)) == ["tea"]
    assert store.get_item(["memories", "ursula"], key="tea")["value"]["text"] == "Ursula likes green tea"
    store.put_item(["memories", "victor"], key="tea", value={"text": "Victor likes black tea"})  # not paused
    assert StoreItem.objects.filter(org=org).count() == 2
