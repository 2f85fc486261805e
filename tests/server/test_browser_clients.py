"""A browser MCP client: headless Chromium loads a page of another origin whose script calls
`/mcp` with a bearer token, as a web client (or MCP Inspector's direct connection) does. The
browser sends the CORS preflight and lets the script read the answer only where the server
allows the page's origin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testing.browser import chromium, needs_chromium
from testing.fetch_helpers import LocalServer, send
from testing.server_helpers import settings_for
from testing.serving import serve_app
from websearch_mcp.server.app import create_app

pytestmark = needs_chromium
TOKEN = "tok-browser-client-0123456789"
#: The page's script: `tools/list` as a browser MCP client sends it, the outcome into the DOM.
SCRIPT = """
fetch(%s, {method: "POST", headers: {"Authorization": "Bearer %s",
  "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-06-18"},
  body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "tools/list"})})
  .then(r => r.json())
  .then(j => { document.getElementById("out").textContent = "tools: " + j.result.tools.length; })
  .catch(e => { document.getElementById("out").textContent = "refused: " + e.name; });
"""


def _page(mcp_url: str) -> Any:
    html = f'<html><body><p id="out">waiting</p><script>{SCRIPT % (json.dumps(mcp_url), TOKEN)}'
    html += "</script></body></html>"

    def reply(handler: Any) -> None:
        send(handler, 200, html.encode(), "text/html")

    return reply


def _outcome(tmp_path: Path, page_url: str) -> str:
    dom = chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", page_url).stdout
    start = dom.index('<p id="out">') + len('<p id="out">')
    return dom[start : dom.index("</p>", start)]


def test_a_page_of_an_allowed_origin_calls_mcp_from_a_browser(
    engines_url: str, tmp_path: Path
) -> None:
    server = {"auth_tokens": [TOKEN], "allowed_origins": ["http://127.0.0.2:*"]}
    with serve_app(create_app(settings_for(engines_url, server=server))) as url:
        mcp_url = f"{url}/mcp"
        with LocalServer(host="127.0.0.2", routes={"/": _page(mcp_url)}) as allowed:
            assert _outcome(tmp_path, allowed.url("/")) == "tools: 3"
        with LocalServer(host="127.0.0.3", routes={"/": _page(mcp_url)}) as other:
            assert _outcome(tmp_path, other.url("/")) == "refused: TypeError"
