"""Production settings pass Django's deployment check (HSTS, SSL redirect), and every page carries a
Content-Security-Policy that the templates satisfy (no inline script, handler or style)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _production(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "ENGRAM_SECRET_KEY": "x7Qm2-production-test-secret-key-with-enough-entropy-9f3Kd81LpZr0vYt",
        "ENGRAM_ENCRYPTION_KEY": "production-test-encryption-key",
        **env,
    }
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def _settings(**env: str) -> dict:
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(repr({n: getattr(s, n, None) for n in ['SECURE_SSL_REDIRECT', 'SECURE_HSTS_SECONDS', "
        "'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_PROXY_SSL_HEADER']}))"
    )
    done = _production("-c", code, **env)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own repr of a dict of settings


def test_it_passes_the_deploy_check_without_hsts_or_ssl_redirect_warnings():
    done = _production("manage.py", "check", "--deploy")
    output = done.stdout + done.stderr
    assert "security.W004" not in output and "security.W008" not in output, output
    assert "security.W005" not in output, output  # HSTS covers subdomains


def test_it_redirects_to_https_by_default_and_trusts_the_proxy_header_only_when_told():
    default = _settings()
    assert default["SECURE_SSL_REDIRECT"] is True
    assert default["SECURE_HSTS_SECONDS"] >= 365 * 24 * 3600 and default["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    assert default["SECURE_PROXY_SSL_HEADER"] is None
    proxied = _settings(ENGRAM_TRUST_X_FORWARDED_PROTO="1", ENGRAM_HSTS_SECONDS="600")
    assert proxied["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert proxied["SECURE_HSTS_SECONDS"] == 600
    assert _settings(ENGRAM_SSL_REDIRECT="0")["SECURE_SSL_REDIRECT"] is False
    refused = _production("-c", "import django; django.setup()", ENGRAM_SSL_REDIRECT="maybe")
    assert refused.returncode != 0 and "ENGRAM_SSL_REDIRECT" in refused.stderr


@pytest.mark.django_db
def test_it_sends_a_content_security_policy_without_inline_script_or_style(client, alice):
    client.force_login(alice)
    for path in ("/login/", "/memories/", "/api/v1/projects"):
        policy = client.get(path)["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'", policy
        assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    for path in ("/api/docs/", "/api/redoc/"):  # Swagger UI and Redoc: from this site only, no CDN
        docs = client.get(path)
        policy = docs["Content-Security-Policy"]
        sources = {word for part in policy.split(";") for word in part.split()[1:]}
        assert docs.status_code == 200 and "http" not in policy, policy
        assert sources <= {"'self'", "'none'", "'unsafe-inline'", "data:", "blob:"}, policy
        assert "<script>" not in docs.content.decode()  # their scripts come from URLs
        assert "/static/drf_spectacular_sidecar/" in docs.content.decode()


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>"), "inline <script>"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "inline event handler"),
    (re.compile(r"\sstyle\s*=", re.I), "style attribute"),
    (re.compile(r"<style\b", re.I), "<style> element"),
]


def test_it_keeps_every_template_free_of_what_the_policy_blocks():
    found = []
    for template in sorted((ROOT / "templates").rglob("*.html")):
        text = template.read_text()
        for pattern, what in INLINE:
            for match in pattern.finditer(text):
                found.append(f"{template.relative_to(ROOT)}: {what}: {match.group(0)!r}")
    assert not found, "\n".join(found)
