"""The webhooks page in the browser: an org owner adds an endpoint, copies the secret shown once, sends a
test that the real worker delivers to a loopback receiver verifying it with `standardwebhooks`, and sees
it in the delivery log; the page in Chinese; a member has no link."""

import re

from playwright.sync_api import expect

from webhooks.models import WebhookEndpoint

from ..test_worker import worker  # noqa: F401 - the real-worker fixture
from ..webhook_receiver import WebhookReceiver
from .conftest import PHONE, screenshot


def test_an_owner_adds_an_endpoint_copies_its_secret_and_sends_a_test(worker, open_page, alice, bob, project):  # noqa: F811
    with WebhookReceiver() as receiver:
        page = open_page(alice)
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.goto("/memories/")
        page.get_by_role("link", name="Webhooks").click()
        expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
        expect(page.locator("[data-testid=endpoint]")).to_have_count(0)

        page.fill("input[name=url]", receiver.url)
        page.fill("input[name=description]", "CRM sync")
        page.get_by_label("memory.created").check()
        page.get_by_label("subject.forgotten").check()
        page.locator("[data-testid=create-endpoint]").click()

        secret_box = page.locator("#webhook-secret")
        expect(secret_box).to_have_text(re.compile(r"^whsec_[A-Za-z0-9+/=]{40,}$"))
        secret = secret_box.inner_text().strip()
        page.locator("[data-testid=copy-secret]").click()
        expect(page.locator("[data-testid=copy-secret]")).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == secret
        receiver.secret = secret
        row = page.locator("[data-testid=endpoint]")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("CRM sync")
        expect(row).to_contain_text("memory.created")
        expect(row.locator("[data-testid=status]")).to_have_text("active")
        endpoint = WebhookEndpoint.objects.get()
        assert endpoint.events == ["memory.created", "subject.forgotten"] and endpoint.url == receiver.url
        screenshot(page, "webhooks")

        row.locator("[data-testid=send-test]").click()
        expect(page.locator(".messages")).to_contain_text("Test event queued")
        [payload] = receiver.wait_for(lambda p: len(p) == 1)
        assert payload["type"] == "webhook.test" and payload["data"]["endpoint_id"] == endpoint.pk
        # The secret is not on the page any more; the delivery log shows the delivery.
        page.reload()
        expect(page.locator("#webhook-secret")).to_have_count(0)
        delivery = page.locator("[data-testid=delivery]")
        expect(delivery).to_have_count(1)
        expect(delivery).to_contain_text("webhook.test")
        expect(delivery).to_contain_text("succeeded")
        expect(delivery).to_contain_text("200")
        screenshot(page, "webhook-deliveries")

    phone = open_page(alice, viewport=PHONE, locale="zh-CN")
    phone.goto("/webhooks/")
    expect(phone.get_by_role("heading", name="Webhook", exact=True)).to_be_visible()
    expect(phone.get_by_role("button", name="添加端点")).to_be_visible()
    screenshot(phone, "webhooks-phone-zh")

    member = open_page(bob)
    member.goto("/memories/")
    expect(member.get_by_role("link", name="Webhooks")).to_have_count(0)
    assert member.goto("/webhooks/").status == 403
