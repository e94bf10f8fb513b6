"""A real webhook receiver on loopback, verifying every request as an integrator would, with the
`standardwebhooks` package: a valid signature and a fresh timestamp answer 200 (or the scripted failure),
anything else 400 with the verification error.

    with WebhookReceiver() as receiver:
        receiver.secret = "whsec_..."          # the endpoint's secret, as shown once
        receiver.failures = [500, 500]         # the next two requests answer 500 (after verifying)
        receiver.url                           # http://127.0.0.1:<port>/hook
        receiver.verified                      # payloads that passed, in arrival order
        receiver.rejected                      # (error, headers, body) of those that did not
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError


class WebhookReceiver:
    def __init__(self, secret: str = ""):
        self.secret = secret
        self.failures: list[int] = []
        self.always_fail: int | None = None
        self.requests: list[tuple[dict, bytes]] = []
        self.verified: list[dict] = []
        self.rejected: list[tuple[str, dict, bytes]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/hook"

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def events(self) -> list[str]:
        with self._lock:
            return [p["type"] for p in self.verified]

    def of_type(self, event: str) -> list[dict]:
        with self._lock:
            return [p for p in self.verified if p["type"] == event]

    def wait_for(self, predicate, timeout: float = 60.0, what: str = "") -> list[dict]:
        """Wait until predicate(verified payloads) is true; the payloads then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                seen = list(self.verified)
            if predicate(seen):
                return seen
            time.sleep(0.1)
        raise AssertionError(f"receiver: {what or predicate} not met after {timeout}s; got {self.events()}")

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status: int, text: str = "") -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    payload = Webhook(receiver.secret).verify(body, headers)
                except WebhookVerificationError as exc:
                    with receiver._lock:
                        receiver.requests.append((headers, body))
                        receiver.rejected.append((str(exc), headers, body))
                    return self._answer(400, str(exc))
                with receiver._lock:
                    receiver.requests.append((headers, body))
                    status = receiver.failures.pop(0) if receiver.failures else receiver.always_fail
                    if status is None:
                        receiver.verified.append(payload)
                if status is not None:
                    return self._answer(status, "scripted failure")
                return self._answer(200, "ok")

        return Handler
