"""A fake SearXNG for deploy/smoke.sh: the only engine of the smoke test, so that it needs no
internet. Standard library only (it runs in the websearch-mcp image, with its own Python).

`GET /search?q=...&format=json` answers three results made from the query, in SearXNG's JSON;
`GET /count` answers how many searches it was asked (a cached repeat asks none).
`python fake_searxng.py [port [address]]`: 8080 on every interface unless told otherwise.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SEARCHES = 0
LOCK = threading.Lock()


def results(query: str) -> list[dict[str, object]]:
    words = "-".join(query.lower().split()) or "empty"
    return [
        {
            "url": f"https://example.org/{words}/{n}",
            "title": f"{query} ({n})",
            "content": f"Page {n} about {query}.",
            "engine": "fake",
            "score": 3.0 - n,
        }
        for n in range(3)
    ]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        global SEARCHES
        parts = urlsplit(self.path)
        if parts.path == "/count":
            self._json({"searches": SEARCHES})
            return
        if parts.path != "/search":
            self._json({"error": "not found"}, 404)
            return
        query = parse_qs(parts.query).get("q", [""])[0]
        with LOCK:
            SEARCHES += 1
        self._json({"query": query, "results": results(query), "unresponsive_engines": []})

    def _json(self, body: dict[str, object], status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    address = sys.argv[2] if len(sys.argv) > 2 else "0.0.0.0"
    # PID 1 in its container: without a handler SIGTERM is ignored and `docker stop` waits 10 s.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ThreadingHTTPServer((address, port), Handler).serve_forever()
