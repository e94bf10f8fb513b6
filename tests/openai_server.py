"""A real HTTP server on loopback that speaks the OpenAI API, for tests of the LLM and remote-embedding paths.

Nothing of Engram's is mocked: the real `openai` client talks HTTP to this server. Tests script its answers:

    with OpenAIStub() as stub:
        stub.chat_replies.append('{"memories": []}')        # next chat completion's message content
        stub.chat_replies.append(Fail(500))                  # next one: HTTP 500
        stub.chat_replies.append(Delay(5))                   # next one: sleeps 5 s (client timeout)
        stub.embedding_failures.append(Fail(503))            # next embeddings call fails
        ... settings/config with base_url=stub.base_url ...
        stub.requests  # every JSON body received, with its path

Embeddings are deterministic pseudo-random unit vectors of the requested `dimensions` (default 384),
derived from the text's hash, so the same text always gets the same vector.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


@dataclass
class Fail:
    status: int = 500
    message: str = "scripted failure"


@dataclass
class Delay:
    seconds: float


def fake_vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim)
    return (vec / np.linalg.norm(vec)).tolist()


class OpenAIStub:
    def __init__(self):
        self.chat_replies: list = []
        self.embedding_failures: list = []
        self.requests: list[dict] = []
        self.default_chat_reply = '{"memories": []}'
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a scripted Delay past its timeout)

            def _scripted(self, queue: list):
                step = queue.pop(0) if queue else None
                if isinstance(step, Delay):
                    time.sleep(step.seconds)
                    step = queue.pop(0) if queue else None
                return step

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append({"path": self.path, "body": body})
                if self.path.endswith("/embeddings"):
                    step = self._scripted(stub.embedding_failures)
                    if isinstance(step, Fail):
                        return self._send(step.status, {"error": {"message": step.message}})
                    inputs = body.get("input")
                    inputs = [inputs] if isinstance(inputs, str) else inputs
                    dim = int(body.get("dimensions") or 384)
                    data = [
                        {"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                        for i, t in enumerate(inputs)
                    ]
                    return self._send(
                        200,
                        {
                            "object": "list",
                            "data": data,
                            "model": body.get("model"),
                            "usage": {"prompt_tokens": 1, "total_tokens": 1},
                        },
                    )
                if self.path.endswith("/chat/completions"):
                    step = self._scripted(stub.chat_replies)
                    if isinstance(step, Fail):
                        return self._send(step.status, {"error": {"message": step.message}})
                    content = stub.default_chat_reply if step is None else step
                    return self._send(
                        200,
                        {
                            "id": "chatcmpl-stub",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": body.get("model", "stub"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content},
                                }
                            ],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        },
                    )
                return self._send(404, {"error": {"message": f"no route {self.path}"}})

        return Handler
