"""The keys page after creating a key: the secret once, with a copy button, and the quickstart snippets
(curl, Python client, MCP configuration) filled in with this server's address and the new key — which
work as shown."""

import json
import subprocess

from playwright.sync_api import expect

from memory.models import MemoryItem
from projects.models import ApiKey, hash_secret

from .conftest import screenshot


def json_values(text: str) -> list:
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text.strip()):
        value, at = decoder.raw_decode(text, at)
        values.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return values


def create_key(page, name: str, button: str = "Create key") -> str:
    page.goto("/keys/")
    page.fill("input[name=name]", name)
    page.get_by_role("button", name=button).click()
    page.wait_for_load_state()
    return page.locator("#new-secret").text_content()


def test_it_shows_the_new_key_with_a_copy_button_and_filled_in_snippets(open_page, alice, org_a, live_server):
    page = open_page(alice)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    secret = create_key(page, "quickstart-agent")
    key = ApiKey.objects.get(org=org_a, name="quickstart-agent")
    assert secret.startswith(key.prefix) and key.hashed_secret == hash_secret(secret)

    copy = page.locator("[data-testid=secret] button[data-copy=new-secret]")
    expect(copy).to_have_text("Copy")
    copy.click()
    expect(copy).to_have_attribute("data-state", "copied")
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == secret

    curl = page.get_by_test_id("snippet-curl").text_content()
    python = page.get_by_test_id("snippet-python").text_content()
    mcp = json.loads(page.get_by_test_id("snippet-mcp").text_content())
    assert f"export ENGRAM_URL={live_server.url}\nexport ENGRAM_API_KEY={secret}\n" in curl
    assert f'Engram("{live_server.url}", "{secret}")' in python
    server = mcp["mcpServers"]["engram"]
    assert server["url"] == f"{live_server.url}/api/v1/mcp"
    assert server["headers"]["Authorization"] == f"Bearer {secret}"
    assert "org-a" in page.get_by_test_id("secret").text_content()  # the org the key acts for
    screenshot(page, "keys-created")

    page.locator("button[data-copy=snippet-curl]").click()
    assert page.evaluate("navigator.clipboard.readText()") == curl

    # The curl snippet, run as copied, adds, searches and builds the context with the new key.
    run = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    added, found, context = json_values(run.stdout)  # curl prints the three answers back to back
    assert MemoryItem.objects.get(pk=added["id"]).org == org_a
    assert [r["id"] for r in found["results"]] == [added["id"]]
    assert "bullet points" in context["prompt"]

    page.goto("/keys/")  # shown once
    assert secret not in page.content()
    expect(page.get_by_test_id("snippet-curl")).to_have_count(0)


def test_the_snippets_and_copy_button_speak_chinese(open_page, alice, org_a, live_server):
    page = open_page(alice, locale="zh-CN")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    secret = create_key(page, "zh-agent", button="创建密钥")
    copy = page.locator("button[data-copy=new-secret]")
    expect(copy).to_have_text("复制")
    expect(page.get_by_test_id("secret")).to_contain_text("此密钥代表组织")
    expect(page.get_by_test_id("secret")).to_contain_text("MCP 客户端配置")
    copy.click()
    expect(copy).to_have_text("已复制")
    assert page.evaluate("navigator.clipboard.readText()") == secret
