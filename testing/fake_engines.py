"""Fake search engines on 127.0.0.1 for integration tests and benchmarks.

Three layers, usable separately:

- `render(engine, results, query)`: generic results (dicts with `title`, `url`, `snippet` and
  optional `score` / `published` as `YYYY-MM-DD`) in an engine's real wire format.
- `FakeEngines`: a Starlette app serving every engine under `/{engine}` plus its real request path
  (`/tavily/search`, `/bing/search`, `/duckduckgo/html/` ...), answering with rendered results or a
  fixed body, with per-engine faults, request counts and the last request of each engine.
- `serve_app(app)`: any ASGI app under a real uvicorn in a background thread, yielding its base URL.

Point an engine at it with `engines.<name>.base_url = f"{base_url}/<name>"` (see `base_urls`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from websearch_mcp.engines.web.wikipedia import article_url
from websearch_mcp.models import HttpRequest, HttpResponse

Result = Mapping[str, Any]
#: `(engine_name, query_text) -> results` for the engine to answer with.
ResultsFn = Callable[[str, str], Sequence[Result]]

JSON_TYPE = "application/json"
HTML_TYPE = "text/html; charset=utf-8"

#: Each engine's real request path and methods (served under `/{engine}`).
ROUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "tavily": ("/search", ("POST",)),
    "brave": ("/res/v1/web/search", ("GET",)),
    "exa": ("/search", ("POST",)),
    "searxng": ("/search", ("GET",)),
    "duckduckgo": ("/html/", ("GET", "POST")),
    "bing": ("/search", ("GET",)),
    "wikipedia": ("/w/api.php", ("GET",)),
    "serper": ("/search", ("POST",)),
}
ENGINE_NAMES: tuple[str, ...] = tuple(ROUTES)


def base_urls(base_url: str) -> dict[str, str]:
    """The `base_url` to configure for each engine when one fake server serves them all."""
    return {name: f"{base_url.rstrip('/')}/{name}" for name in ENGINE_NAMES}


# --- wire formats -----------------------------------------------------------------------------


def _esc(text: Any) -> str:
    return html.escape(str(text or ""), quote=True)


def _published(result: Result) -> date | None:
    value = result.get("published")
    return date.fromisoformat(value) if value else None


def _score(result: Result, index: int) -> float:
    """The result's own score, else a descending one as engines give."""
    score = result.get("score")
    return float(score) if score is not None else round(1.0 - index * 0.03, 4)


def render_tavily(results: Sequence[Result], query: str) -> bytes:
    """Tavily `/search` JSON (`results[].content`, `score`; `published_date` when dated)."""
    items = []
    for i, r in enumerate(results):
        item: dict[str, Any] = {
            "title": r["title"],
            "url": r["url"],
            "content": r.get("snippet", ""),
            "score": _score(r, i),
            "raw_content": None,
        }
        if r.get("published"):
            item["published_date"] = r["published"]
        items.append(item)
    return _json(
        {
            "query": query,
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": items,
            "response_time": 0.42,
            "request_id": _request_id(query),
        }
    )


def render_brave(results: Sequence[Result], query: str) -> bytes:
    """Brave web search JSON: `web.results[]` with HTML-escaped `description` and `page_age`."""
    items = []
    for r in results:
        item: dict[str, Any] = {
            "title": r["title"],
            "url": r["url"],
            "is_source_local": False,
            "is_source_both": False,
            "description": _esc(r.get("snippet", "")),
            "profile": {"name": urlsplit(r["url"]).hostname, "url": r["url"]},
            "language": "en",
            "family_friendly": True,
            "type": "search_result",
            "subtype": "generic",
            "meta_url": {
                "scheme": urlsplit(r["url"]).scheme,
                "netloc": urlsplit(r["url"]).netloc,
                "hostname": urlsplit(r["url"]).hostname,
                "path": urlsplit(r["url"]).path,
            },
        }
        day = _published(r)
        if day:
            item["page_age"] = f"{day.isoformat()}T00:00:00"
            item["age"] = f"{day:%B} {day.day}, {day.year}"
        items.append(item)
    return _json(
        {
            "query": {"original": query, "more_results_available": False},
            "mixed": {
                "type": "mixed",
                "main": [{"type": "web", "index": i, "all": False} for i in range(len(items))],
            },
            "type": "search",
            "web": {"type": "search", "results": items, "family_friendly": True},
        }
    )


def render_exa(results: Sequence[Result], query: str) -> bytes:
    """Exa `/search` JSON with `highlights` and `publishedDate` (ISO with milliseconds)."""
    items = []
    for r in results:
        item: dict[str, Any] = {"id": r["url"], "title": r["title"], "url": r["url"]}
        day = _published(r)
        if day:
            item["publishedDate"] = f"{day.isoformat()}T00:00:00.000Z"
        item["author"] = ""
        item["highlights"] = [r.get("snippet", "")]
        items.append(item)
    return _json(
        {
            "requestId": _request_id(query),
            "resolvedSearchType": "neural",
            "results": items,
            "searchTime": 120.5,
            "costDollars": {"total": 0.005, "search": {"neural": 0.005}},
        }
    )


def render_searxng(results: Sequence[Result], query: str) -> bytes:
    """A SearXNG instance's `format=json` answer."""
    items = []
    for i, r in enumerate(results):
        parts = urlsplit(r["url"])
        day = _published(r)
        items.append(
            {
                "url": r["url"],
                "title": r["title"],
                "content": r.get("snippet", ""),
                "thumbnail": None,
                "engine": "fake",
                "template": "default.html",
                "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, ""],
                "img_src": "",
                "priority": "",
                "engines": ["fake"],
                "positions": [i + 1],
                "score": _score(r, i),
                "category": "general",
                "publishedDate": f"{day.isoformat()}T00:00:00" if day else None,
            }
        )
    return _json(
        {
            "query": query,
            "number_of_results": 0,
            "results": items,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": [],
        }
    )


def render_duckduckgo(results: Sequence[Result], query: str) -> bytes:
    """DuckDuckGo's HTML page with `//duckduckgo.com/l/?uddg=` redirect links."""
    blocks = []
    for r in results:
        href = _esc(f"//duckduckgo.com/l/?kh=-1&uddg={quote(r['url'], safe='')}")
        display = _esc(r["url"].split("://", 1)[-1])
        blocks.append(
            f"""<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="{href}">{_esc(r["title"])}</a>
    </h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="{href}">{display}</a>
    </div></div>
    <a class="result__snippet" href="{href}">{_esc(r.get("snippet", ""))}</a>
    <div class="clear"></div>
  </div>
</div>"""
        )
    body = "\n".join(blocks) or '<div class="no-results">No results.</div>'
    return f"""<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml"><head>
<meta http-equiv="content-type" content="text/html; charset=UTF-8" />
<title>{_esc(query)} at DuckDuckGo</title></head>
<body class="body--html">
<form name="x" class="header__form" action="/html/" method="post">
<input name="q" type="text" value="{_esc(query)}" /></form>
<div class="serp__results"><div id="links" class="results">
{body}
</div></div>
</body></html>
""".encode()


def render_bing(results: Sequence[Result], query: str) -> bytes:
    """Bing's HTML page: `li.b_algo` with `bing.com/ck/a?...&u=a1<base64url>` links, dated."""
    items = []
    for i, r in enumerate(results):
        target = base64.urlsafe_b64encode(r["url"].encode()).decode().rstrip("=")
        href = _esc(
            f"https://www.bing.com/ck/a?!&&p={_request_id(r['url'])}&ptn=3&u=a1{target}&ntb=1"
        )
        day = _published(r)
        prefix = (
            f'<span class="news_dt">{day:%b} {day.day}, {day.year}</span>&nbsp;&#0183; '
            if day
            else ""
        )
        items.append(
            f'<li class="b_algo" data-id="" data-bm="{i + 6}"><h2><a href="{href}" '
            f'h="ID=SERP,{5100 + i}.1">{_esc(r["title"])}</a></h2><div class="b_caption">'
            f'<div class="b_attribution"><cite>{_esc(r["url"])}</cite></div>'
            f'<p class="b_lineclamp2">{prefix}{_esc(r.get("snippet", ""))}</p></div></li>'
        )
    body = "".join(items) or (
        f'<li class="b_no"><h1>There are no results for <strong>{_esc(query)}</strong></h1></li>'
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8" /><title>{_esc(query)} - Search</title></head>
<body><div id="b_content"><main aria-label="Search Results"><ol id="b_results">{body}</ol></main>
</div></body></html>
""".encode()


def render_wikipedia(results: Sequence[Result], query: str) -> bytes:
    """MediaWiki `list=search` JSON. The format has no URL: the parser derives it from `title`."""
    items = []
    for i, r in enumerate(results):
        day = _published(r) or date(2026, 1, 1)
        snippet = _esc(r.get("snippet", ""))
        items.append(
            {
                "ns": 0,
                "title": r["title"],
                "pageid": 1000 + i,
                "size": 1000 + 10 * len(snippet),
                "wordcount": len(snippet.split()),
                "snippet": snippet,
                "timestamp": f"{day.isoformat()}T00:00:00Z",
            }
        )
    return _json(
        {
            "batchcomplete": "",
            "query": {"searchinfo": {"totalhits": len(items)}, "search": items},
        }
    )


def render_serper(results: Sequence[Result], query: str) -> bytes:
    """Serper `/search` JSON: `organic[]` with `link`, `position` and a `date` when dated."""
    items = []
    for i, r in enumerate(results):
        item: dict[str, Any] = {
            "title": r["title"],
            "link": r["url"],
            "snippet": r.get("snippet", ""),
            "position": i + 1,
        }
        day = _published(r)
        if day:
            item["date"] = f"{day:%b} {day.day}, {day.year}"
        items.append(item)
    return _json(
        {
            "searchParameters": {"q": query, "type": "search", "engine": "google"},
            "organic": items,
            "credits": 1,
        }
    )


RENDERERS: dict[str, tuple[Callable[[Sequence[Result], str], bytes], str]] = {
    "tavily": (render_tavily, JSON_TYPE),
    "brave": (render_brave, JSON_TYPE),
    "exa": (render_exa, JSON_TYPE),
    "searxng": (render_searxng, JSON_TYPE),
    "duckduckgo": (render_duckduckgo, HTML_TYPE),
    "bing": (render_bing, HTML_TYPE),
    "wikipedia": (render_wikipedia, JSON_TYPE),
    "serper": (render_serper, JSON_TYPE),
}


def render(engine: str, results: Sequence[Result], query: str = "") -> tuple[bytes, str]:
    """`results` in `engine`'s wire format: `(body, content_type)`."""
    renderer, content_type = RENDERERS[engine]
    return renderer(results, query), content_type


def wikipedia_result(title: str, snippet: str = "") -> dict[str, str]:
    """A generic result that survives Wikipedia's format (its URL is derived from the title)."""
    return {"title": title, "url": article_url(title), "snippet": snippet}


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


def _request_id(seed: str) -> str:
    return hashlib.md5(seed.encode(), usedforsecurity=False).hexdigest()


# --- block pages and broken bodies --------------------------------------------------------------

CAPTCHA_PAGES: dict[str, bytes] = {
    "duckduckgo": b"""<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=sre" method="POST">
<div class="anomaly-modal__modal"><div class="anomaly-modal__title">Unfortunately, bots use
DuckDuckGo too.</div><div class="anomaly-modal__description">Please complete the following
challenge to confirm this search was made by a human.</div></div></form></body></html>""",
    "bing": b"""<!DOCTYPE html><html><head><title>Bing</title></head><body><div class="captcha">
<h1>One last step</h1><p>Our systems have detected unusual traffic from your computer network.
Please solve the challenge below to continue.</p></div></body></html>""",
}
#: What a JSON API fronted by a bot wall answers instead of JSON.
GENERIC_CAPTCHA = b"""<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<h1>Verify you are human</h1><p>Checking your browser before accessing the site.</p>
</body></html>"""
GARBAGE = bytes(range(256)) * 4


# --- the app ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Fault:
    """What goes wrong for one engine. Several may combine: `delay` first, then the rest."""

    delay: float = 0.0  # seconds to wait before answering
    status: int | None = None  # answer with this status and `body` instead of results
    body: bytes | str = b""
    retry_after: str | None = None  # sent as `Retry-After` (with any answer)
    captcha: bool = False  # the engine's CAPTCHA / bot-wall page, HTTP 200
    garbage: bool = False  # random bytes under the engine's usual content type
    hang: bool = False  # never answer (until the server stops)


@dataclass(slots=True)
class Body:
    """A fixed answer, such as a recorded fixture."""

    content: bytes
    status: int = 200
    content_type: str | None = None  # None: the engine's usual type
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class RecordedRequest:
    """The last request an engine received (header names lower-case)."""

    method: str
    path: str
    headers: dict[str, str]
    params: dict[str, str]
    form: dict[str, str]
    json: Any
    query: str
    key: str | None = None  # the API key it carried (header or `api_key`/`key` parameter)


class FakeEngines:
    """All eight fake engines in one Starlette app (`self.app`), under `/{engine}/...`.

    `results(engine, query)` gives what an engine answers unless `bodies[engine]` fixes the
    answer; `faults[engine]` breaks it, and `key_faults[api_key]` breaks only the requests made
    with that key (401 for one key, 200 for another). All may be changed while the server runs.
    `counts[engine]` counts requests, `key_counts[api_key]` requests per key; `last[engine]` is
    the latest `RecordedRequest`. Engines without a wire format here are served under
    `/other/{name}/...` with `bodies[name]` or `faults[name]` (404 when neither is set).
    """

    max_hang_seconds = 60.0

    def __init__(
        self,
        results: ResultsFn | None = None,
        *,
        bodies: Mapping[str, bytes | Body] | None = None,
        faults: Mapping[str, Fault] | None = None,
    ) -> None:
        self.results: ResultsFn = results or (lambda engine, query: [])
        self.bodies: dict[str, bytes | Body] = dict(bodies or {})
        self.faults: dict[str, Fault] = dict(faults or {})
        self.key_faults: dict[str, Fault] = {}
        self.counts: Counter[str] = Counter()
        self.key_counts: Counter[str] = Counter()
        self.last: dict[str, RecordedRequest] = {}
        self._released = threading.Event()
        self.app = Starlette(routes=self._routes())

    def reset(self) -> None:
        """Forget counts and recorded requests."""
        self.counts.clear()
        self.key_counts.clear()
        self.last.clear()

    def release_hangs(self) -> None:
        """Let hanging requests finish (with a 503) so that the server can stop."""
        self._released.set()

    def _routes(self) -> list[Route]:
        routes = []
        for engine, (path, methods) in ROUTES.items():
            endpoint = self._endpoint(engine)
            routes.append(Route(f"/{engine}{path}", endpoint, methods=list(methods)))
            if path.endswith("/"):  # DuckDuckGo's `/html/` is also reached as `/html`
                routes.append(Route(f"/{engine}{path[:-1]}", endpoint, methods=list(methods)))
        routes.append(Route("/other/{engine}/{path:path}", self._other, methods=["GET", "POST"]))
        return routes

    async def _other(self, request: Request) -> Response:
        """An engine without a wire format here: its fixed body or fault, else 404."""
        engine = request.path_params["engine"]
        if engine not in self.bodies and engine not in self.faults:
            return Response(b"Not Found", 404, media_type="text/plain")
        recorded = await _record(request, engine)
        self._count(engine, recorded)
        return await self._answer(engine, recorded.query, recorded.key)

    def _count(self, engine: str, recorded: RecordedRequest) -> None:
        self.counts[engine] += 1
        if recorded.key:
            self.key_counts[recorded.key] += 1
        self.last[engine] = recorded

    def _endpoint(self, engine: str) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            recorded = await _record(request, engine)
            self._count(engine, recorded)
            return await self._answer(engine, recorded.query, recorded.key)

        return endpoint

    async def _answer(self, engine: str, query: str, key: str | None = None) -> Response:
        fault = (self.key_faults.get(key) if key else None) or self.faults.get(engine) or Fault()
        headers = {"retry-after": fault.retry_after} if fault.retry_after else {}
        content_type = RENDERERS[engine][1] if engine in RENDERERS else JSON_TYPE
        if fault.delay:
            await asyncio.sleep(fault.delay)
        if fault.hang:
            await self._hang()
            return Response(b"", 503, headers=headers)
        if fault.status is not None:
            body = fault.body.encode() if isinstance(fault.body, str) else fault.body
            return Response(body, fault.status, headers=headers, media_type=content_type)
        if fault.captcha:
            page = CAPTCHA_PAGES.get(engine, GENERIC_CAPTCHA)
            return Response(page, 200, headers=headers, media_type=HTML_TYPE)
        if fault.garbage:
            return Response(GARBAGE, 200, headers=headers, media_type=content_type)
        fixed = self.bodies.get(engine)
        if fixed is not None:
            if isinstance(fixed, bytes):
                fixed = Body(fixed)
            return Response(
                fixed.content,
                fixed.status,
                headers={**fixed.headers, **headers},
                media_type=fixed.content_type or content_type,
            )
        if engine not in RENDERERS:
            return Response(b"Not Found", 404, media_type="text/plain")
        body, content_type = render(engine, self.results(engine, query), query)
        return Response(body, 200, headers=headers, media_type=content_type)

    async def _hang(self) -> None:
        deadline = time.monotonic() + self.max_hang_seconds
        while not self._released.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)


async def _record(request: Request, engine: str) -> RecordedRequest:
    raw = await request.body()
    form: dict[str, str] = {}
    payload: Any = None
    ctype = request.headers.get("content-type", "")
    if ctype.startswith("application/x-www-form-urlencoded"):
        form = {k: str(v) for k, v in (await request.form()).items()}
    elif ctype.startswith("application/json"):
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
    params = dict(request.query_params)
    return RecordedRequest(
        method=request.method,
        path=request.url.path,
        headers={k.lower(): v for k, v in request.headers.items()},
        params=params,
        form=form,
        json=payload,
        query=_query_text(engine, params, form, payload),
        key=_api_key(request.headers, params),
    )


def _api_key(headers: Mapping[str, str], params: Mapping[str, str]) -> str | None:
    """The key a request carries, in any of the ways the keyed engines send one."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return auth[7:].strip()
    for name in ("x-subscription-token", "x-api-key"):
        if headers.get(name):
            return headers[name]
    return params.get("api_key") or params.get("key") or None


def _query_text(engine: str, params: dict[str, str], form: dict[str, str], payload: Any) -> str:
    if engine in ("tavily", "exa"):
        return str(payload.get("query", "")) if isinstance(payload, dict) else ""
    if engine == "serper":
        return str(payload.get("q", "")) if isinstance(payload, dict) else ""
    if engine == "wikipedia":
        return params.get("srsearch", "")
    return form.get("q") or params.get("q", "")


# --- running it ---------------------------------------------------------------------------------


@contextmanager
def serve_app(
    app: ASGIApp,
    *,
    host: str = "127.0.0.1",
    startup_timeout: float = 10.0,
    tls: tuple[str, str] | None = None,
) -> Iterator[str]:
    """Run `app` under uvicorn on a free port of `host` in a background thread; yield its URL.

    With `tls` (certificate and key files, for `localhost`) it serves HTTPS and the URL is
    `https://localhost:<port>`.
    """
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it every response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the test server on {host}:{port} did not start")
            time.sleep(0.01)
        yield f"https://localhost:{port}" if tls else f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextmanager
def serve_fake_engines(
    fake: FakeEngines, *, host: str = "127.0.0.1", tls: tuple[str, str] | None = None
) -> Iterator[str]:
    """`serve_app(fake.app)` that also releases hanging requests before stopping."""
    with serve_app(fake.app, host=host, tls=tls) as base_url:
        try:
            yield base_url
        finally:
            fake.release_hangs()


def fetch(client: httpx.Client, base_url: str, request: HttpRequest) -> HttpResponse:
    """Send an engine's request as the orchestrator does, synchronously (for tests)."""
    response = client.request(
        request.method,
        base_url + request.path,
        params=request.params,
        json=request.json,
        data=request.data,
        headers=request.headers,
    )
    return HttpResponse(
        status=response.status_code,
        headers={k.lower(): v for k, v in response.headers.items()},
        content=response.content,
        url=str(response.url),
    )
