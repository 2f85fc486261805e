"""One `web_search` of the fake SearXNG over MCP for deploy/smoke.sh, with the standard library
only (it runs on the host and, fed on stdin, inside a replica):
`python3 smoke_call.py <base URL> <token> <query>`.

Prints `cached=<true|false> results=<n> engines=<name:status,...>`; exits 1 when the call fails.
"""

from __future__ import annotations

import json
import sys
import urllib.request


def call(base: str, token: str, query: str) -> dict:
    """The JSON-RPC answer to one `web_search` of `query`, over MCP with the bearer `token`."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        # The fake engine only: the others would need the internet.
        "params": {"name": "web_search", "arguments": {"query": query, "engines": ["searxng"]}},
    }
    request = urllib.request.Request(
        f"{base}/mcp",
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def main(base: str, token: str, query: str) -> int:
    answer = call(base, token, query)
    result = answer.get("result", {})
    found = result.get("structuredContent") or {}
    if result.get("isError") or not found.get("results"):
        print(json.dumps(answer)[:2000], file=sys.stderr)
        return 1
    engines = ",".join(f"{e['name']}:{e['status']}" for e in found.get("engines", []))
    cached = "true" if found.get("cached") else "false"
    print(f"cached={cached} results={len(found['results'])} engines={engines}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
