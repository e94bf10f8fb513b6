"""The gate, table-driven: secrets in Chinese and English are refused; text that only talks about them passes."""

import pytest

from core.secrets import cn_id_ok, luhn_ok, sensitive_reason
from memory import gate
from memory.gate import GateRejection
from memory.models import MemoryItem
from tests.factories import OrgFactory

REFUSED = [
    # stated passwords
    ("my password is hunter2!", "password"),
    ("The wifi password: Tr0ub4dor&3", "password"),
    ("用户的密码是 abc12345", "password"),
    ("邮箱密码为qwerty789", "password"),
    ("服务器口令：P@ssw0rd2024", "password"),
    ("pwd=S3cretValue", "password"),
    ("保险箱密码是 芝麻开门大吉", "password"),
    ("remember my passcode is 8841", "password"),
    # API keys and tokens
    ("use sk-proj-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0Ab for OpenAI", "API key"),
    ("Anthropic key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "API key"),
    ("AWS access key AKIAIOSFODNN7EXAMPLE in prod", "AWS"),
    ("我的 GitHub token 是 ghp_16C7e42F292c6912E7710c838347Ae178B4a", "GitHub"),
    ("slack bot xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOp", "Slack"),
    (
        "JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "JSON web",
    ),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456", "bearer"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private key"),
    ("-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXk", "private key"),
    ("api_key: 9f8e7d6c5b4a39281706", "password"),
    ("我的 API 密钥是 a1b2c3d4e5f6a7b8", "password"),
    # cards and bank accounts passing Luhn
    ("card 4111 1111 1111 1111 exp 12/27", "card"),
    ("信用卡号 5500-0000-0000-0004", "card"),
    ("工资卡 6222020200112233446 尾号 3446", "card"),  # passes Luhn (checked below)
    ("Amex 378282246310005 for travel", "card"),
    # Chinese resident ID with a valid check digit
    ("身份证号 11010519491231002X", "resident ID"),
    ("ID 440308199901010012 on file", "resident ID"),
    # passports and SSNs
    ("passport number E12345678", "passport"),
    ("护照号码 G12345678", "passport"),
    ("SSN 123-45-6789", "social security"),
    ("my social security number is 078-05-1120", "social security"),
    # one-time codes
    ("验证码 604132", "one-time"),
    ("您的验证码是：982341，5分钟内有效", "one-time"),
    ("Your verification code is 553120", "one-time"),
    ("OTP 7781 for login", "one-time"),
]

ACCEPTED = [
    "用户希望密码策略至少 12 位",
    "用户要求密码长度不少于 8 位并包含大小写",
    "prefers token-based auth",
    "The team rotates API keys every 90 days",
    "User wants password reset emails in Chinese",
    "The password is stored in a vault, never in code",
    "Password is required for the admin console",
    "order number 4111111111111112 shipped yesterday",  # fails Luhn
    "订单号 20240501123456789 已发货",
    "用户的工号是 110105194912310021",  # 18 digits, wrong check digit
    "用户喜欢用 JWT 做会话管理",
    "Uses GitHub Actions with OIDC instead of long-lived tokens",
    "身份证件需要在入职时提交复印件",
    "验证码登录比密码登录更方便",
    "Phone number format is +86 138 0013 8000",
    "Meeting at 10:30 on 2024-05-01 in room 1203",
    "the user prefers SSH keys over passwords",
    "护照快到期了，需要下个月续签",
    "Budget is 1500000 yuan for 2025",
]


@pytest.mark.parametrize(("text", "kind"), REFUSED)
def test_it_refuses_secrets(text, kind):
    reason = sensitive_reason(text)
    assert reason is not None, f"not refused: {text!r}"
    assert kind.lower() in reason.lower()
    with pytest.raises(GateRejection) as exc:
        gate.check(text)
    assert exc.value.code == "sensitive_content"
    assert text not in exc.value.message


@pytest.mark.parametrize("text", ACCEPTED)
def test_it_accepts_talk_about_secrets(text):
    assert sensitive_reason(text) is None, text
    gate.check(text)


def test_it_checks_luhn_and_id_digits():
    assert luhn_ok("6222020200112233446")
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert cn_id_ok("11010519491231002X") and cn_id_ok("440308199901010012")
    assert not cn_id_ok("110105194912310021")


@pytest.mark.parametrize(
    ("content", "confidence", "code"),
    [
        ("abcd", 1.0, "too_short"),
        ("好" * 2001, 1.0, "too_long"),
        ("A reasonable fact", 0.69, "low_confidence"),
        ("my password is hunter2!", 0.5, "low_confidence"),  # seed 000's order: confidence first
    ],
)
def test_it_checks_length_and_confidence_in_seed_order(content, confidence, code):
    with pytest.raises(GateRejection) as exc:
        gate.check(content, confidence)
    assert exc.value.code == code


def test_it_takes_thresholds_from_settings(settings):
    settings.MEMORY_MIN_LENGTH = 2
    settings.MEMORY_MAX_LENGTH = 10
    settings.MEMORY_MIN_CONFIDENCE = 0.2
    gate.check("好的", 0.3)
    with pytest.raises(GateRejection):
        gate.check("eleven chars", 1.0)


def test_it_counts_automatic_extractions_per_session(db, settings):
    org = OrgFactory()
    settings.MEMORY_MAX_EXTRACTIONS = 3
    for i in range(3):
        MemoryItem.objects.create(
            org=org, content=f"auto {i}", content_hash=str(i), source="auto", session_id="s"
        )
    MemoryItem.objects.create(org=org, content="by hand", content_hash="h", source="user", session_id="t")
    MemoryItem.objects.create(org=org, content="auto 2", content_hash="a2", source="auto", session_id="t")
    with pytest.raises(GateRejection) as exc:
        gate.check_rate_limit(org, "s")
    assert exc.value.code == "rate_limited"
    assert gate.check_rate_limit(org, "t") == 1
    assert gate.check_rate_limit(org, "") == 0
    MemoryItem.objects.filter(session_id="s").update(created_at="2000-01-01T00:00:00Z")
    assert gate.check_rate_limit(org, "s") == 0
