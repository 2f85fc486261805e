"""Generic results in each fake engine's real wire format, and the pages engines block with.

`render(engine, results, query)` turns results (dicts with `title`, `url`, `snippet` and optional
`score` / `published` as `YYYY-MM-DD`) into the body Tavily, Brave, Exa, SearXNG, DuckDuckGo,
Bing, Wikipedia or Serper would send, with its content type. Titles and snippets are text as a
reader sees it: formats that carry HTML escape it, unless a result gives the HTML an engine
sends for it as `title_html` / `snippet_html` (highlighting tags, entities of its choice).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any
from urllib.parse import quote, urlsplit

from websearch_mcp.engines.web.wikipedia import article_url

Result = Mapping[str, Any]

JSON_TYPE = "application/json"
HTML_TYPE = "text/html; charset=utf-8"


def _esc(text: Any) -> str:
    return html.escape(str(text or ""), quote=True)


def _html(result: Result, key: str) -> str:
    """The result's `key` as HTML: its own `<key>_html` when given, else the text escaped."""
    given = result.get(f"{key}_html")
    return given if given is not None else _esc(result.get(key, ""))


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
    """Brave web search JSON: `web.results[]` with HTML `title` and `description` (`<strong>`
    around the query's words, entities) and `page_age`."""
    items = []
    for r in results:
        item: dict[str, Any] = {
            "title": _html(r, "title"),
            "url": r["url"],
            "is_source_local": False,
            "is_source_both": False,
            "description": _html(r, "snippet"),
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
    """Exa `/search` JSON with `highlights` and `publishedDate` (ISO with milliseconds); the
    text is a page's, entities and all."""
    items = []
    for r in results:
        item: dict[str, Any] = {"id": r["url"], "title": _html(r, "title"), "url": r["url"]}
        day = _published(r)
        if day:
            item["publishedDate"] = f"{day.isoformat()}T00:00:00.000Z"
        item["author"] = ""
        item["highlights"] = [_html(r, "snippet")]
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
      <a rel="nofollow" class="result__a" href="{href}">{_html(r, "title")}</a>
    </h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="{href}">{display}</a>
    </div></div>
    <a class="result__snippet" href="{href}">{_html(r, "snippet")}</a>
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
            f'h="ID=SERP,{5100 + i}.1">{_html(r, "title")}</a></h2><div class="b_caption">'
            f'<div class="b_attribution"><cite>{_esc(r["url"])}</cite></div>'
            f'<p class="b_lineclamp2">{prefix}{_html(r, "snippet")}</p></div></li>'
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
        snippet = _html(r, "snippet")
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
