"""Pages people trust, in Chromium: a visibility change that would hide a memory from oneself is confirmed
first, My memories keeps one's own memories apart from project memories, the add form shows only the
fields that apply, Chinese pages carry no English, text contrast reaches WCAG AA, and a skip link leads
to the content. Screenshots of the changed pages at 1280 and 375 px in both languages."""

import pytest
from playwright.sync_api import expect

from memory.models import MemoryItem

from ..factories import MemoryItemFactory
from ..test_translations import english_left, world  # noqa: F401 (the seeded Chinese org)
from .conftest import DESKTOP, PHONE, screenshot

OWN = {"alice", "bob", "atlas", "PostgreSQL"}

# Every element with its own text: its colour against the first opaque background behind it.
CONTRAST_JS = """
() => {
  function rgb(c) { const m = c.match(/[\\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; }
  function lum([r, g, b]) {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  }
  function background(el) {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0.9) return c;
    }
    return [255, 255, 255];
  }
  const low = [];
  for (const el of document.querySelectorAll("body *")) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const style = getComputedStyle(el);
    if (!own || style.visibility === "hidden" || el.offsetParent === null && style.position !== "fixed") continue;
    if (el.closest("svg, [hidden], .skip-link")) continue;
    let fg = rgb(style.color);
    const bg = background(el);
    if (fg.length === 4 && fg[3] < 1) fg = fg.slice(0, 3).map((v, i) => v * fg[3] + bg[i] * (1 - fg[3]));
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) low.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)} "${el.textContent.trim().slice(0, 30)}"`);
  }
  return low;
}
"""


def wait_for_htmx(page, selector: str) -> None:
    """Until HTMX has wired up the element swapped in (its triggers are attached after the swap settles)."""
    page.wait_for_function(
        "s => { const el = document.querySelector(s); return el && el['htmx-internal-data'] }", arg=selector
    )


def test_a_visibility_change_that_hides_a_memory_from_oneself_is_confirmed(open_page, alice, bob, project):
    theirs = MemoryItemFactory(
        project=project, content="Atlas uses Postgres 16 in production.", created_by=bob
    )
    mine = MemoryItemFactory(project=project, content="Atlas deploys every Tuesday.", created_by=alice)
    page = open_page(alice)
    page.goto(f"/projects/{project.slug}/")
    row = page.locator(f"#pm-{theirs.pk}")
    expect(row.locator("select[name=visibility] option[value=owner_only]")).to_have_text(
        "only its author (bob)"
    )
    row.locator("select[name=visibility]").select_option("owner_only")
    confirm = page.locator("[data-testid=confirm-visibility]")
    expect(confirm).to_contain_text("This hides the memory from you.")
    screenshot(page, "trust-visibility-confirm")
    theirs.refresh_from_db()
    assert theirs.visibility == "members"
    # Cancel puts the table back as it was; asking again and confirming hides it.
    confirm.get_by_role("link", name="Cancel").click()
    expect(page.locator(f"#pm-{theirs.pk} select[name=visibility]")).to_have_value("members")
    wait_for_htmx(page, f"#pm-{theirs.pk} form")
    page.locator(f"#pm-{theirs.pk} select[name=visibility]").select_option("owner_only")
    page.get_by_role("button", name="Hide it from me").click()
    expect(page.locator(f"#pm-{theirs.pk}")).to_have_count(0)
    theirs.refresh_from_db()
    assert theirs.visibility == "owner_only"
    wait_for_htmx(page, f"#pm-{mine.pk} form")
    # One's own memory made public moves under "everyone in ..." at once, no reload.
    page.locator(f"#pm-{mine.pk} select[name=visibility]").select_option("public")
    heading = page.locator("tr.group th", has_text=f"everyone in {project.org.name}")
    expect(heading).to_be_visible()
    expect(page.locator("tbody", has=heading).locator(f"#pm-{mine.pk}")).to_be_visible()
    assert MemoryItem.objects.get(pk=mine.pk).visibility == "public"
    expect(page.locator("[data-testid=roles-panel] td.yes[data-role=viewer]")).to_have_count(1)
    expect(page.locator("[data-testid=org-admin-rule]")).to_be_visible()


def test_my_memories_tabs_and_the_add_form(open_page, alice, project):
    MemoryItemFactory(org=project.org, content="Alice drinks green tea every morning.")
    MemoryItemFactory(project=project, content="Atlas deploys every Tuesday.", created_by=alice)
    page = open_page(alice)
    page.goto("/memories/")
    results = page.locator("#results")
    expect(results).to_contain_text("green tea")
    expect(results).not_to_contain_text("Tuesday")
    page.locator("[data-testid=memory-tabs] a[data-tab=projects]").click()
    expect(page.locator("#results")).to_contain_text("Tuesday")
    expect(page.locator("#results")).not_to_contain_text("green tea")
    expect(page.locator("[data-tab=projects]")).to_have_attribute("aria-current", "page")
    page.locator("[data-tab=mine]").click()
    # The add form: "who can see it" only for a project memory; the type suggested from the text.
    form = page.locator("#add-form")
    expect(form.locator("select[name=visibility]")).to_be_hidden()
    form.locator("select[name=project]").select_option(str(project.pk))
    expect(form.locator("select[name=visibility]")).to_be_visible()
    form.locator("select[name=project]").select_option("")
    expect(form.locator("select[name=visibility]")).to_be_hidden()
    form.locator("textarea[name=content]").fill("Never schedule meetings before 10am.")
    expect(page.locator("[data-testid=type-hint] strong")).to_have_attribute("data-type", "constraint")
    screenshot(page, "trust-add-form")
    with page.expect_response(lambda r: "/memories/add/" in r.url):
        form.get_by_role("button", name="Add").click()
    expect(page.locator("#results")).to_contain_text("Never schedule meetings")
    assert MemoryItem.objects.get(content="Never schedule meetings before 10am.").memory_type == "constraint"


def test_chinese_pages_show_no_english(open_page, world):  # noqa: F811
    pages = [
        "/",
        "/memories/",
        "/memories/?tab=projects",
        f"/memories/{world['memory'].pk}/",
        f"/projects/{world['project'].slug}/",
        "/profile/",
        "/markdown/",
        "/queue/",
        "/usage/",
        "/keys/",
        "/audit/",
        "/webhooks/",
        "/my-data/",
        "/my-data/given/",
    ]
    page = open_page(world["alice"], locale="zh-CN")
    problems = {}
    for url in pages:
        page.goto(url)
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        left = english_left(page.content(), OWN)
        if left:
            problems[url] = left[:6]
    # A visibility change asked again, in Chinese.
    page.goto(f"/projects/{world['project'].slug}/")
    assert not english_left(page.content(), OWN)
    assert not problems, problems


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_text_contrast_is_at_least_4_5_to_1(open_page, world, locale):  # noqa: F811
    page = open_page(world["alice"], locale=locale)
    low = {}
    for url in (
        "/memories/",
        f"/memories/{world['memory'].pk}/",
        f"/projects/{world['project'].slug}/",
        "/queue/",
        "/keys/",
        "/usage/",
    ):
        page.goto(url)
        found = page.evaluate(CONTRAST_JS)
        if found:
            low[url] = found[:5]
    assert not low, low


def test_a_skip_link_leads_to_the_content(open_page, alice):
    page = open_page(alice)
    page.goto("/memories/")
    page.keyboard.press("Tab")
    link = page.locator("a.skip-link")
    expect(link).to_be_focused()
    expect(link).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()


def test_screenshots_of_the_changed_pages(open_page, world):  # noqa: F811
    """Memories (both tabs), a memory with its diff, the project page with the roles panel, the keys page's
    project choices and the queue, at 1280 and 375 px in English and Chinese."""
    project, memory = world["project"], world["memory"]
    pages = [
        ("memories", "/memories/"),
        ("memories-projects", "/memories/?tab=projects"),
        ("memory-diff", f"/memories/{memory.pk}/"),
        ("project-roles", f"/projects/{project.slug}/"),
        ("keys", "/keys/"),
        ("queue", "/queue/"),
    ]
    for lang, locale in (("en", "en-US"), ("zh", "zh-CN")):
        for width, viewport in (("1280", DESKTOP), ("375", PHONE)):
            page = open_page(world["alice"], locale=locale, viewport=viewport)
            for name, url in pages:
                page.goto(url)
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{url} at {width}px overflows by {overflow}px"
                screenshot(page, f"trust-{name}-{lang}-{width}")
            page.close()
    page = open_page(world["alice"])
    page.goto(f"/memories/{memory.pk}/")
    expect(page.locator("[data-testid=diff] ins")).to_contain_text("芝麻")
    expect(page.locator("main a", has_text="Details")).to_have_count(0)
