"""The secret gate, class by class, on small examples written for these tests (not the benchmark's): every
secret class refused, every look-alike class kept, the normalisation tricks undone, redaction cut on the
text as written, the weighted length rule, and the gate on tags and metadata through every way in."""

import base64

import pytest
from mnemonic import Mnemonic

from checkpoints.models import Message
from checkpoints.services import messages_append
from core.secrets import iban_ok, redact, secret_spans, sensitive_reason
from memory import gate
from memory.extraction.services import extraction_job_run
from memory.gate import GateRejection, weighted_length
from memory.models import MemoryItem, MemoryRevision

URL = "/api/v1/memories"

_EN_SEED = Mnemonic("english").to_mnemonic(bytes(range(40, 56)))
_ZH_SEED = Mnemonic("chinese_simplified").to_mnemonic(bytes(range(90, 106)))

SECRETS = {
    "connection string": "billing db: postgresql://billing:Pg!7788kx@pg.billing.lan:5432/invoices",
    "mysql with credentials": "orders db: mysql://shop:Sh0p!pass77@10.0.3.9:3306/orders",
    "mongodb+srv": "mongodb+srv://reader:Rd2025pw@atlas-x1.mongodb.net/events",
    "account and password (zh)": "物业系统账号 zhoumin，密码 Zm202406",
    "login / password (en)": "the shared Hulu login is family@home.net / Popcorn#55",
    "PIN (en)": "the alarm PIN is 2846",
    "PIN (zh)": "车库门 PIN 码是 9057",
    "bank withdrawal password (zh)": "农行卡取款密码 503817",
    "bank withdrawal password (en)": "the withdrawal PIN for my Wells Fargo card is 7702",
    "Stripe sk_live_": "stripe: sk_live_72Hq9LmZp3XvB8nR4tKw6yDc",
    "Stripe rk_live_": "read-only rk_live_38Jd7KqLp2WzX9mN5vBc4tRy",
    "GitLab glpat-": "deploy token glpat-Rk8mQ2zX7pL4vN9cB3wT",
    "AccessKeySecret": "AccessKeySecret=Nq8Lr2Xz7Pk4Vm9Cb3Wt6Yh1Jd5Fs0",
    "aws_secret_access_key": "aws_secret_access_key: Hb7Qz2Lm9Xk4Pv8Rt3Wn6Jc1Ys5Dg0Fa2Ek7Uo",
    "DingTalk webhook": "https://oapi.dingtalk.com/robot/send?access_token=0a1b2c3d4e5f67890a1b2c3d4e5f6789",
    "Feishu webhook": "飞书群机器人 https://open.feishu.cn/open-apis/bot/v2/hook/7c2e9a41-55d0-4b6f-a3e8-19d7c0b2f6e4",
    "Slack webhook": "https://hooks.slack.com/services/T9X8Y7Z6/B1A2B3C4D5/Zk9Lm8Np7Qr6St5Uv4Wx3Yz2A",
    "WeCom webhook": "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=5b7d2e19-83ac-4f06-b1d2-7e9a0c4f3b88",
    "PGP private key": "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGQ1\n-----END PGP PRIVATE KEY BLOCK-----",
    "age secret key": "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX",
    "SSH login with password": "ssh pi@192.168.0.42 with password Rasp!9911",
    "seed phrase (en)": f"recovery words: {_EN_SEED}",
    "seed phrase (zh)": f"助记词 {_ZH_SEED}",
    "hf_ token": "hf_Vb7Nm3Kq9Lw2Xp8Rz4Ty6Uc1Hd5Jg0Fs",
    "HTTP Basic header": "Authorization: Basic " + base64.b64encode(b"grafana:Gr4f4na!x").decode(),
    "email password": "工作邮箱密码 Yx2024mail",
    "wifi password": "office wifi password Latte7788",
    "my password is: X": "my password is: Orchid&Rain5",
    "password is the string X": "the vault password is the string amber-koala-12",
    "パスワードは X": "ルーターのパスワードは kaze2025go",
    "IBAN": "rent goes to IBAN GB33BUKB20201555555555",
    "SSN without dashes": "my SSN is 123456789",
    "card number with dots": "Mastercard 5105.1051.0510.5100",
    "login code": "login code is 318274",
    "passphrase": "the disk passphrase is 'copper lantern drifts north'",
    "OpenAI key": "sk-proj-Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1",
    "AWS access key": "AKIAZ7QW3ER9TY2UI5OP",
    "GitHub token": "ghp_Mn7Bv3Cx9Zl1Kj5Hg8Fd2Sa6Qw4Er0Ty3Ui",
    "Slack token": "xoxb-1029384756-5647382910-QaWsEdRfTgYh",
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJuYW1lIjoiYm9iIn0.c2lnbmF0dXJlLWJ5dGVzLWhlcmU",
    "bearer": "Authorization: Bearer Zq9Xw8Cv7Bn6Mm5Ll4Kk3Jj2",
    "PEM": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
    "验证码": "验证码 556071，十分钟内有效",
    "SSN": "SSN 321-54-9876",
    "passport": "passport no. P31195855",
    "身份证": "身份证号 320102198001011238",
    "card number": "card 3782 822463 10005",
}
NORMALISATION_TRICKS = {
    "zero-width space in a key": "key s\u200bk-proj-Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1",
    "zero-width joiner in a card": "card 5105\u200d1051\u200d0510\u200d5100",
    "Cyrillic ѕ": "\u0455k-proj-Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1",
    "Greek ρ in ghp_": "gh\u03c1_Mn7Bv3Cx9Zl1Kj5Hg8Fd2Sa6Qw4Er0Ty3Ui",
    "full-width letters": "ｓｋ－ｐｒｏｊ－Ｔｋ４Ｌｐ８Ｑｚ２Ｘｖ６Ｎｂ９Ｒｍ３Ｗｃ７Ｙｄ１",
    "URL-encoded": "next=%2Fhome%3Fpassword%3DBlue%2342river",
    "base64": "blob " + base64.b64encode(b"OPENAI_API_KEY=sk-proj-Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1").decode(),
    "split by a space": "sk-proj-Tk4Lp8Q z2Xv6Nb9Rm3Wc7Yd1",
    "split by a newline": "glpat-Rk8mQ2zX7p\nL4vN9cB3wT",
}

LOOK_ALIKES = {
    "password policy (zh)": "用户要求团队密码至少 16 位，每半年更换",
    "password talk (en)": "She keeps every password in Bitwarden now",
    "API key in the vault": "the Stripe key lives in the vault, never in the repo",
    "rotation policy": "rotate the GitLab token every 60 days",
    "order number failing Luhn": "订单号 5105105105105101 已签收",
    "invoice number": "invoice 2024-INV-88213 is overdue",
    "last four": "paid with the card ending in 5100",
    "phone number": "the dentist's number is 021-6453 2211",
    "commit hash and version": "v4.2.0 shipped in commit 1f3c9e7a2b4d6f8091a3c5e7b9d1f2a4c6e8b0d2",
    "UUID": "workspace id 9a7c3e51-2b4d-4f68-8e0a-1c3b5d7f9e2a is archived",
    "URL without credentials": "the reports db is mysql://reports.lan:3306/bi",
    "webhook docs URL": "see https://api.slack.com/messaging/webhooks for the setup",
    "English word list": "grocery run: oats, lemons, yogurt, basil, rice, coffee",
    "账号/密码 without values": "新同事的账号和初始密码由 IT 当面交给他",
    "PIN policy": "PIN code policy: six digits, changed yearly",
    "secret read from env": "token = os.environ['GITLAB_TOKEN']",
    "base64 of ordinary text": "payload " + base64.b64encode(b"see you at the station at noon").decode(),
    "long Chinese sentence": "用户周末喜欢去西湖边骑车，一般早上七点出发，绕湖一圈再去吃小笼包。",
    "numbers in prose": "the hike was 23.5 km with 1,480 m of climbing in 7 hours",
    "masked key": "the dashboard shows sk-****9f2c for that key",
    "seed phrase talk": "a seed phrase has 12 or 24 words; write it on paper",
    "Japanese password talk": "パスワードを変更したのは先週です",
    "Japanese PIN talk": "暗証番号を忘れた",
    "ID document talk (zh)": "用户的身份证下个月到期，要去补办",
    "ID document talk (en)": "passport renewal takes about six weeks",
    "short identifiers": "ticket ENG-4412 is blocked, room B12",
    "mixed tech note": "用户的 Redis 跑在 6379 端口，密码放在环境变量里",
}


@pytest.mark.parametrize("text", SECRETS.values(), ids=SECRETS.keys())
def test_it_refuses_every_secret_class(text):
    assert sensitive_reason(text) is not None, text
    with pytest.raises(GateRejection) as refused:
        gate.check(text)
    assert refused.value.code == "sensitive_content"


@pytest.mark.parametrize("text", NORMALISATION_TRICKS.values(), ids=NORMALISATION_TRICKS.keys())
def test_it_sees_through_encodings_and_look_alike_characters(text):
    assert sensitive_reason(text) is not None, text


@pytest.mark.parametrize("text", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_it_keeps_look_alikes(text):
    assert sensitive_reason(text) is None, text
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("tell him s\u200bk-proj-Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1 today", "Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1"),
        ("call at 9, card 5105\u200d1051\u200d0510\u200d5100 ok", "0510"),
        ("before %70assword%3DBlue%2342river after", "river"),
        ("x " + base64.b64encode(b"password=Hunter77blue").decode() + " y", "cGFzc3dvcmQ"),
        ("key ѕk-proj-Tk4Lp8Qz2Xv6Nb9Rm3Wc7Yd1 ok", "Tk4Lp8"),
        ("rent IBAN GB33BUKB20201555555555 monthly", "GB33"),
        (f"my seed: {_EN_SEED}. done", _EN_SEED.split()[5]),
    ],
)
def test_it_redacts_on_the_text_as_written(text, secret):
    redacted = redact(text)
    assert secret not in redacted and "[redacted]" in redacted
    # only the secret's own span is cut: the words around it stay
    first, last = text.split()[0], text.split()[-1]
    assert redacted.startswith(first) and redacted.endswith(last)
    for start, end, _label in secret_spans(text):
        assert 0 <= start < end <= len(text)


def test_iban_check_digits():
    assert iban_ok("GB33BUKB20201555555555") and not iban_ok("GB34BUKB20201555555555")


def test_a_chinese_clause_whose_characters_pass_the_checksum_is_not_a_seed_phrase():
    # 12 common characters, all on the BIP-39 list, and their 4-bit checksum holds (one clause in 16 does)
    clause = "主要为了周末带孩子出去玩"
    assert Mnemonic("chinese_simplified").check(" ".join(clause))
    text = f"用户把帕萨特卖了，换了一辆理想L7，{clause}"
    assert sensitive_reason(text) is None and redact(text) == text
    bare = _ZH_SEED.replace(" ", "")
    for told in (f"我的钱包助记词：{bare}", f"seed: {bare}"):  # written together, said to be one
        assert sensitive_reason(told) is not None and bare not in redact(told)


@pytest.mark.parametrize("text", ["我叫王丹", "我爱猫咪", "住在上海", "Lives in Oslo", "私は学生"])
def test_it_keeps_short_real_statements(text):
    gate.check_length(text)


@pytest.mark.parametrize("text", ["ok", "好的", "嗯嗯", "hi", "好的！", "好的。", "ok!!!", "👍", "   ...   "])
def test_it_refuses_acknowledgements(text):
    with pytest.raises(GateRejection) as refused:
        gate.check_length(text)
    assert refused.value.code == "too_short"


def test_weighted_length_counts_cjk_twice_and_punctuation_not_at_all():
    assert weighted_length("我叫王丹") == 8
    assert weighted_length("ok, fine!") == 6
    assert weighted_length("안녕하세요") == 10
    assert weighted_length("☕🍰 🎉") == 3  # symbols alone: each counts 1


def test_the_length_message_is_translated(alice_client):
    response = alice_client.post(URL, {"content": "好的"}, format="json", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 422
    assert "一个中文、日文或韩文字符算两个" in response.json()["error"]["message"]


def test_a_short_chinese_statement_is_stored(alice_client):
    response = alice_client.post(URL, {"content": "我叫王丹"}, format="json")
    assert response.status_code == 201, response.content
    assert MemoryItem.objects.filter(content="我叫王丹").exists()


# ---- tags and metadata, through every way in ------------------------------------------------------

SECRET_TAG = "glpat-Rk8mQ2zX7pL4vN9cB3wT"
SECRET_NOTE = "wifi password Latte7788"


def assert_refused(body: dict, field: str) -> None:
    assert body["error"]["code"] == "sensitive_content", body
    assert field in body["error"]["message"]
    assert "Latte7788" not in str(body) and SECRET_TAG not in str(body)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"tags": ["home", "ops", SECRET_TAG]}, "tags[2]"),
        ({"metadata": {"note": SECRET_NOTE}}, "metadata.note"),
        ({"metadata": {"env": {"vars": ["A=1", SECRET_NOTE]}}}, "metadata.env.vars[1]"),
        ({"metadata": {SECRET_TAG: "x"}}, "the key #1 of metadata"),
    ],
)
def test_an_add_with_a_secret_in_tags_or_metadata_is_refused(alice_client, extra, field):
    response = alice_client.post(URL, {"content": "The user runs a home lab", **extra}, format="json")
    assert response.status_code == 422
    assert_refused(response.json(), field)
    assert not MemoryItem.objects.exists()


def test_a_duplicate_add_with_a_secret_tag_is_refused_before_merging(alice_client):
    first = alice_client.post(URL, {"content": "The user runs a home lab"}, format="json")
    assert first.status_code == 201
    again = alice_client.post(
        URL, {"content": "The user runs a home lab", "tags": [SECRET_TAG]}, format="json"
    )
    assert again.status_code == 422
    assert MemoryItem.objects.get().tags == []


@pytest.mark.parametrize("infer", [True, False])
def test_a_batch_refuses_the_item_with_a_secret_in_its_fields_and_keeps_the_rest(key_a, org_a, infer):
    _, client = key_a
    memories = [
        {"content": "The user keeps bees", "user_id": "u1", "tags": ["bees"]},
        {"content": "The user brews cider", "user_id": "u1", "tags": ["x", SECRET_TAG]},
        {"content": "The user rows on Sundays", "user_id": "u1", "metadata": {"n": {"deep": SECRET_NOTE}}},
    ]
    response = client.post(f"{URL}/batch", {"memories": memories, "infer": infer}, format="json")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["created", "rejected", "rejected"]
    assert "tags[1]" in results[1]["error"]["message"]
    assert "metadata.n.deep" in results[2]["error"]["message"]
    assert list(MemoryItem.objects.filter(org=org_a).values_list("content", flat=True)) == [
        "The user keeps bees"
    ]
    assert SECRET_TAG not in response.content.decode()


def test_a_patch_with_a_secret_in_tags_or_metadata_is_refused_and_changes_nothing(alice_client):
    made = alice_client.post(
        URL, {"content": "The user runs a home lab", "tags": ["lab"]}, format="json"
    ).json()
    url = f"{URL}/{made['id']}"
    for body, field in (
        ({"tags": ["lab", SECRET_TAG]}, "tags[1]"),
        ({"metadata": {"note": SECRET_NOTE}}, "metadata.note"),
    ):
        response = alice_client.patch(url, body, format="json")
        assert response.status_code == 422, response.content
        assert_refused(response.json(), field)
    item = MemoryItem.objects.get(pk=made["id"])
    assert item.tags == ["lab"] and item.metadata == {} and item.version == 1
    assert MemoryRevision.objects.filter(item_ref=item.pk).count() == 1
    ok = alice_client.patch(url, {"tags": ["lab", "rack"]}, format="json")
    assert ok.status_code == 200 and MemoryItem.objects.get(pk=made["id"]).tags == ["lab", "rack"]


def test_a_patch_with_a_new_secret_class_in_content_is_refused(alice_client):
    made = alice_client.post(URL, {"content": "The user runs a home lab"}, format="json").json()
    response = alice_client.patch(f"{URL}/{made['id']}", {"content": "The NAS PIN is 4471"}, format="json")
    assert response.status_code == 422 and response.json()["error"]["code"] == "sensitive_content"
    assert MemoryItem.objects.get(pk=made["id"]).content == "The user runs a home lab"


def test_a_markdown_put_with_a_new_secret_class_applies_nothing(alice_client, alice):
    doc = alice_client.get(f"{URL}/markdown").json()
    seed_line = f"- wallet words {_EN_SEED}"
    document = doc["document"].rstrip("\n") + "\n\n## Facts\n- Lives in Porto\n" + seed_line + "\n"
    response = alice_client.put(
        f"{URL}/markdown", {"document": document, "base_version": doc["version"]}, format="json"
    )
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "sensitive_content"
    assert not MemoryItem.objects.exists()


def test_an_import_refuses_secrets_in_tags_metadata_and_content(key_a, org_a):
    _, client = key_a
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [
            {"id": 1, "content": "Likes oolong tea", "scope": "user", "tags": ["tea"]},
            {"id": 2, "content": "Likes jasmine tea", "scope": "user", "tags": [SECRET_TAG]},
            {"id": 3, "content": "Likes black tea", "scope": "user", "metadata": {"wifi": SECRET_NOTE}},
            {"id": 4, "content": "rent IBAN GB33BUKB20201555555555", "scope": "user"},
        ],
    }
    response = client.post("/api/v1/users/ext-3/import", data, format="json")
    assert response.status_code == 201, response.content
    report = response.json()
    assert {r["id"]: r["code"] for r in report["refused"]} == {
        2: "sensitive_content",
        3: "sensitive_content",
        4: "sensitive_content",
    }
    assert list(MemoryItem.objects.filter(org=org_a).values_list("content", flat=True)) == [
        "Likes oolong tea"
    ]
    assert SECRET_TAG not in response.content.decode() and "Latte7788" not in response.content.decode()


def test_the_tools_refuse_new_secret_classes(key_a):
    _, client = key_a
    for content in (
        SECRETS["DingTalk webhook"],
        SECRETS["seed phrase (zh)"],
        NORMALISATION_TRICKS["Cyrillic ѕ"],
    ):
        response = client.post(
            "/api/v1/tools/memory_add/invoke",
            {"arguments": {"content": content}, "user_id": "u1"},
            format="json",
        )
        assert response.status_code == 422 and response.json()["error"]["code"] == "sensitive_content"
    # over MCP: tests/test_mcp.py (the MCP process needs the committed rows of a live test)
    assert not MemoryItem.objects.exists()


def test_extraction_keeps_new_secret_classes_out_of_messages_and_memories(org_a):
    text = "记一下，我家 wifi 密码 lovecat2024，还有我的助记词 " + _ZH_SEED
    _, created, job = messages_append(
        org=org_a, session_id="s-gate", user_id="u1", messages=[{"role": "human", "content": text}]
    )
    stored = Message.objects.get(pk=created[0].pk).content
    assert "lovecat2024" not in stored and _ZH_SEED not in stored and "[redacted]" in stored
    assert extraction_job_run(job_id=job.pk) == "done"
    assert not MemoryItem.objects.filter(org=org_a, user_id="u1").exists()


def test_fields_beyond_the_size_the_gate_reads_are_refused_as_too_long(alice_client):
    big = {"notes": ["a fairly ordinary line of notes " * 20] * 40}  # about 25,000 characters
    response = alice_client.post(URL, {"content": "The user keeps notes", "metadata": big}, format="json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "too_long"
    assert "metadata" in response.json()["error"]["message"]
    assert not MemoryItem.objects.exists()


def test_a_text_over_the_maximum_is_refused_as_too_long_before_it_is_read_for_secrets():
    with pytest.raises(GateRejection) as refused:
        gate.check_sensitive("my password is hunter22 " + "x" * 3000)
    assert refused.value.code == "too_long"


def test_the_refusal_names_the_kind_of_secret_in_the_callers_language():
    from django.utils import translation

    with translation.override("zh-hans"):
        with pytest.raises(gate.GateRejection) as refused:
            gate.check_sensitive("部署用的 key 是 sk-proj-abcdefghijklmnopqrstuv")
        with pytest.raises(gate.GateRejection) as in_tags:
            gate.check_fields(tags=["ok", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"])
    assert refused.value.message == "已拒绝：文本看起来像API 密钥；机密信息从不存储。"
    assert in_tags.value.message.startswith("已拒绝：tags[1] 看起来像GitHub 令牌")
    with translation.override("en"):
        with pytest.raises(gate.GateRejection) as english:
            gate.check_sensitive("deploy key sk-proj-abcdefghijklmnopqrstuv")
    assert english.value.message == "Refused: the text looks like an API key; secrets are never stored."
