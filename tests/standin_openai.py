"""A stand-in OpenAI-compatible chat server for tests: POST /v1/chat/completions, in a thread.

`answers` maps a marker (text that occurs in the last user message) to the reply; `failing` markers get
HTTP 500 every time (a server that is down for those requests); `flaky` makes every request's first
attempt answer 429 (rate limited), so the client's retry is exercised. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StandinServer:
    def __init__(self, answers: dict[str, str], failing: set[str] = frozenset(), flaky: bool = False):
        self.answers, self.failing, self.flaky = dict(answers), set(failing), flaky
        self.requests: list[dict] = []
        self.seen: set[str] = set()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload = server.handle(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def handle(self, path: str, body: dict) -> tuple[int, dict]:
        if path != "/v1/chat/completions":
            return 404, {"error": "not found"}
        user = body["messages"][-1]["content"]
        marker = next((m for m in self.answers if m in user), None)
        key = json.dumps(body, sort_keys=True)
        with self.lock:
            self.requests.append(body)
            first = key not in self.seen
            self.seen.add(key)
        if marker in self.failing:
            return 500, {"error": "down"}
        if self.flaky and first:
            return 429, {"error": "slow down"}
        text = self.answers.get(marker, "I do not know.")
        return 200, {"id": "x", "object": "chat.completion", "model": body["model"],
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                  "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 1, "completion_tokens": len(text.split()), "total_tokens": 2}}

    def __enter__(self) -> StandinServer:  # noqa: PYI034
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
