"""Throttling: sign-in lockouts per account name and per client address (with back-off), and API rate
limits per key and per signed-in account, configurable per org (429 + Retry-After).

The test settings keep every limit out of reach; these tests lower them. Each test signs in with its own
account names and client addresses, so counts left in Redis by another test (or run) do not matter."""

import time
import uuid

import pytest
from django.core.cache import cache
from django.test import Client

from projects.login_throttle import login_wait
from projects.services import api_key_create, org_membership_set

from .conftest import client_for, key_client
from .factories import AccountFactory

PASSWORD = "correct horse battery staple"


@pytest.fixture
def limits(settings):
    settings.ENGRAM_LOGIN_ACCOUNT_FAILURES = 3
    settings.ENGRAM_LOGIN_ADDRESS_FAILURES = 6
    settings.ENGRAM_LOGIN_LOCKOUT_SECONDS = 60
    settings.ENGRAM_LOGIN_LOCKOUT_MAX_SECONDS = 900
    return settings


def member(org, name=None):
    account = AccountFactory(username=name or f"u-{uuid.uuid4().hex[:10]}")
    account.set_password(PASSWORD)
    account.save()
    org_membership_set(org=org, account=account, role="member")
    return account


def address() -> str:
    return f"2001:db8:{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}::1"  # a documentation /64 of its own


def sign_in(username, password, addr, path="/login/", **extra):
    client = Client(REMOTE_ADDR=addr)
    response = client.post(path, {"username": username, "password": password}, **extra)
    return response, "_auth_user_id" in client.session


def test_it_locks_an_account_after_failures_even_for_the_right_password(limits, org_a):
    account = member(org_a)
    addr = address()
    for _ in range(3):
        response, signed_in = sign_in(account.username, "wrong", addr)
        assert response.status_code == 200 and not signed_in
    response, signed_in = sign_in(account.username, PASSWORD, addr)
    assert not signed_in
    assert "Too many failed sign-in attempts. Try again in 60 seconds." in response.content.decode()
    # From another address too: the account name is locked.
    response, signed_in = sign_in(account.username, PASSWORD, address())
    assert not signed_in and "Try again in" in response.content.decode()
    # Nor by another spelling of the name that signs in to the same account.
    response, signed_in = sign_in(account.username.upper(), PASSWORD, address())
    assert not signed_in and "Try again in" in response.content.decode()
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in account.username)
    response, signed_in = sign_in(fullwidth, PASSWORD, address())
    assert not signed_in and "Try again in" in response.content.decode()
    # Another account from the same address is not.
    other = member(org_a)
    assert sign_in(other.username, PASSWORD, addr)[1]


def test_it_says_when_to_try_again_in_chinese(limits, org_a):
    account = member(org_a)
    addr = address()
    for _ in range(3):
        sign_in(account.username, "wrong", addr)
    response, _ = sign_in(account.username, PASSWORD, addr, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "登录失败次数过多" in response.content.decode()


def test_a_success_resets_the_account_count(limits, org_a):
    account = member(org_a)
    addr = address()
    for _ in range(2):
        sign_in(account.username, "wrong", addr)
    assert sign_in(account.username, PASSWORD, addr)[1]
    for _ in range(2):
        sign_in(account.username, "wrong", addr)
    assert sign_in(account.username, PASSWORD, addr)[1]  # 4 failures in all, never 3 in a row


def test_lockouts_double_up_to_the_ceiling(limits, org_a, rf):
    limits.ENGRAM_LOGIN_LOCKOUT_SECONDS = 1
    limits.ENGRAM_LOGIN_LOCKOUT_MAX_SECONDS = 3
    account = member(org_a)
    addr = address()
    request = rf.post("/login/", REMOTE_ADDR=addr)
    waits = []
    for _ in range(3):
        for _ in range(3):
            sign_in(account.username, "wrong", addr)
        waits.append(login_wait(request, account.username))
        time.sleep(waits[-1] + 0.1)
    assert waits == [1, 2, 3]
    assert sign_in(account.username, PASSWORD, addr)[1]


def test_it_locks_an_address_that_guesses_at_many_accounts(limits, org_a):
    addr = address()
    for _ in range(6):
        sign_in(f"nobody-{uuid.uuid4().hex[:8]}", "wrong", addr)  # 1 failure per name: no account lock
    account = member(org_a)
    response, signed_in = sign_in(account.username, PASSWORD, addr)
    assert not signed_in and "Try again in" in response.content.decode()
    assert sign_in(account.username, PASSWORD, address())[1]  # the same account from elsewhere


def test_an_ipv6_client_counts_by_its_64(limits, org_a):
    prefix = f"2001:db8:{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}"
    for i in range(6):
        sign_in(f"nobody-{uuid.uuid4().hex[:8]}", "wrong", f"{prefix}::{i + 1}")
    account = member(org_a)
    assert not sign_in(account.username, PASSWORD, f"{prefix}::beef")[1]


def test_the_admin_sign_in_is_throttled_too(limits, org_a):
    account = member(org_a)
    account.is_staff = account.is_superuser = True
    account.save()
    addr = address()
    for _ in range(3):
        assert not sign_in(account.username, "wrong", addr, path="/admin/login/")[1]
    response, signed_in = sign_in(account.username, PASSWORD, addr, path="/admin/login/")
    assert not signed_in and "Try again in" in response.content.decode()


# ---- the API -----------------------------------------------------------------------------------------


def test_a_key_gets_429_with_retry_after_over_its_orgs_rate(org_a, org_b, key_a, key_b):
    org_a.api_rate = "3/min"
    org_a.save()
    _, client = key_a
    for _ in range(3):
        assert client.get("/api/v1/projects").status_code == 200
    response = client.get("/api/v1/projects")
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert response.json()["error"]["code"] == "throttled"
    # Another key of the same org has its own budget; another org has its own rate.
    _, secret = api_key_create(org=org_a, name="second")
    assert key_client(secret).get("/api/v1/projects").status_code == 200
    _, other = key_b
    for _ in range(5):
        assert other.get("/api/v1/projects").status_code == 200


def test_signed_in_accounts_have_the_server_rate_each(settings, org_a):
    settings.ENGRAM_API_RATE = "2/min"
    first, second = member(org_a), member(org_a)
    for account in (first, second):
        cache.delete(f"throttle:api:account:{account.pk}")  # a pk a previous run may have used
    client = client_for(first)
    assert [client.get("/api/v1/projects").status_code for _ in range(3)] == [200, 200, 429]
    assert client_for(second).get("/api/v1/projects").status_code == 200


def test_staff_set_an_orgs_rate_in_the_admin(org_a, key_a):
    staff = AccountFactory(username=f"staff-{uuid.uuid4().hex[:6]}", is_staff=True, is_superuser=True)
    web = Client()
    web.force_login(staff)
    url = f"/admin/projects/organization/{org_a.pk}/change/"
    form = {"name": org_a.name, "slug": org_a.slug, "api_rate": "lots"}
    response = web.post(url, form)
    assert response.status_code == 200 and "A rate like 600/min" in response.content.decode()
    org_a.refresh_from_db()
    assert org_a.api_rate == ""
    response = web.post(url, {**form, "api_rate": "2/min", "members_set_embedding": "on"})
    assert response.status_code == 302
    org_a.refresh_from_db()
    assert (org_a.api_rate, org_a.members_set_embedding) == ("2/min", True)
    _, client = key_a
    assert [client.get("/api/v1/projects").status_code for _ in range(3)] == [200, 200, 429]


def test_an_address_guessing_api_keys_is_locked_out_even_for_a_real_key(limits, org_a):
    limits.ENGRAM_API_KEY_ADDRESS_FAILURES = 4
    _, secret = api_key_create(org=org_a, name="real")
    guesser, neighbour = address(), address()

    def call(addr, presented):
        return Client(REMOTE_ADDR=addr).get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {presented}")

    for _ in range(4):
        assert call(guesser, "ek_not-a-key").status_code == 401
    locked = call(guesser, secret)  # even the right key, from this address, while locked
    assert locked.status_code == 429
    assert 0 < int(locked["Retry-After"]) <= limits.ENGRAM_LOGIN_LOCKOUT_SECONDS
    assert locked.json()["error"]["code"] == "throttled"
    assert call(neighbour, secret).status_code == 200  # another address is not affected
