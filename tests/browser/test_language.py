"""Language: the browser's language by default, and the switch in the top bar."""

from playwright.sync_api import expect

from .conftest import screenshot


def test_it_switches_the_language_from_the_top_bar(open_page, alice):
    page = open_page(alice, locale="en-US")
    page.goto("/memories/")
    expect(page.locator("h1")).to_have_text("My memories")
    page.select_option("#language", "zh-hans")
    expect(page.locator("h1")).to_have_text("我的记忆")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    screenshot(page, "memories-zh")
    page.select_option("#language", "en")
    expect(page.locator("h1")).to_have_text("My memories")


def test_it_follows_the_browsers_language_by_default(open_page, alice):
    page = open_page(alice, locale="zh-CN")
    page.goto("/projects/")
    expect(page.locator("h1")).to_have_text("项目")
    expect(page.locator("nav.nav")).to_contain_text("我的记忆")
