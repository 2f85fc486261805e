"""`web_search` with `category: news` end to end: the real app under uvicorn, asked with the
official MCP client, over fake engines on 127.0.0.1 that replay the recorded news answers of
Google News, Brave, SearXNG, Serper and SerpApi (shared/fixtures/news) at their news paths."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from testing.cache_helpers import FakeClock
from testing.fake_engines import Body, FakeEngines
from testing.resilience_helpers import settings_for, statuses
from testing.serving import serve_app
from testing.shared import fixture_bytes
from websearch_mcp.cache import open_cache
from websearch_mcp.cache.base import Cache
from websearch_mcp.config import Settings
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app

QUERY = "Bears Ears monument"
RECORDED = {
    "google_news": "news/google_news/monument-watch_bears-ears_2026-07-14.xml",
    "brave": "news/brave/brave-search-python-client_news_hello-world.json",
    "searxng": "news/searxng/browse-API_searxng_news_artificial-intelligence.json",
    "serper": "news/serper/langchain-docs_serper_news_tesla-inc.json",
    "serpapi": "news/serpapi/serpapi-tutorials_google_news_topic_technology_2025-10-07.json",
}
RSS = "application/rss+xml; charset=UTF-8"
CAPTCHA = "news/blocked/unlim-proxy-engine_google_sorry_captcha_2026-07-25.html"
TOP_STORIES = "news/google_news/RSS-Parser_topstories_fr-BE_2020-03-08_trimmed.xml"


@pytest.fixture
def recorded(fake: FakeEngines) -> FakeEngines:
    """The fake engines answering with the recorded news answers (any path under /other)."""
    for name, path in RECORDED.items():
        content_type = RSS if name == "google_news" else "application/json"
        fake.bodies[name] = Body(fixture_bytes(path), content_type=content_type)
    return fake


def news_settings(engines_url: str, cache: dict[str, Any] | None = None, **search: Any) -> Settings:
    """The five news engines at the recorded answers, and Tavily, which has no news search."""
    other = f"{engines_url}/other"
    engines: dict[str, dict[str, Any]] = {
        name: {"base_url": f"{other}/{name}"} for name in RECORDED
    }
    for name in ("brave", "serper", "serpapi"):
        engines[name]["api_keys"] = [f"{name}-news-key-0a1b2c"]
    engines["tavily"] = {"api_keys": ["tvly-news-key-3d4e5f"]}
    top = {"cache": cache} if cache else None
    return settings_for(engines_url, engines, top=top, deadline_seconds=4, **search)


@contextmanager
def serving(settings: Settings, cache: Cache | None = None) -> Iterator[str]:
    with serve_app(create_app(settings, SearchService(settings, cache=cache))) as url:
        yield url


async def search(url: str, **arguments: Any) -> dict[str, Any]:
    async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
        result = await client.call_tool("web_search", {"query": QUERY, **arguments})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_a_news_search_returns_dated_results_with_sources_one_place_per_story(
    recorded: FakeEngines, engines_url: str
) -> None:
    with serving(news_settings(engines_url)) as url:
        answer = await search(url, category="news", max_results=30)
    reports = statuses(answer)
    assert reports["google_news"] == "ok"
    assert {reports[name] for name in ("brave", "searxng", "serper", "serpapi")} <= {
        "ok",
        "irrelevant",  # the other recordings answer other queries ("hello world", Tesla, ...)
    }
    tavily = next(e for e in answer["engines"] if e["name"] == "tavily")
    assert tavily["status"] == "skipped" and tavily["error"] == "has no news search"
    assert recorded.counts["tavily"] == 0
    results = answer["results"]
    assert len(results) == 30
    # UTC times ("...Z"), or the day where the engine printed only a day ("6/13/2023").
    assert all(r["source"] and (r["published"].endswith("Z") or len(r["published"]) == 10)
               for r in results)  # fmt: skip
    titles = [r["title"] for r in results]
    assert len(set(titles)) == len(titles)
    wire = next(r for r in results if r["title"].startswith("Trump reduces size of 2 national"))
    assert wire["source"] == "AP News" and len(wire["also"]) >= 8
    assert {"source", "url", "published"} <= set(wire["also"][0])
    # Newest relevant first: SearXNG's reports of hours ago ("13 hours ago", counted from
    # the request) lead; of the feed's, its newest, and the off-topic lists' come after all.
    assert results[0]["engines"] == ["searxng"]
    off_topic = {name for name, status in reports.items() if status == "irrelevant"}
    assert off_topic
    after = [set(r["engines"]) <= off_topic for r in results]
    assert after == sorted(after)
    feed = [r for r in results if r["engines"] == ["google_news"]]
    assert feed[0]["title"] == "Trump again shrinks two national monuments in Utah"
    assert feed[0]["published"] == max(r["published"] for r in feed)


async def test_a_serpapi_story_lists_the_reports_google_grouped_with_it(
    recorded: FakeEngines, engines_url: str
) -> None:
    with serving(news_settings(engines_url)) as url:
        answer = await search(url, category="news", engines=["serpapi"], max_results=50)
    results = answer["results"]
    deal = next(r for r in results if r["title"].startswith("Prime Day Apple deals include"))
    assert [o["source"] for o in deal["also"]] == ["The New York Times", "The Verge", "AOL.com"]
    listed = [o["url"] for r in results for o in r.get("also", [])]
    assert len(listed) == len(set(listed)) > len(results)  # most stories have three more
    assert not set(listed) & {r["url"] for r in results}


async def test_a_storys_text_names_its_publisher_its_date_and_the_others_reporting_it(
    recorded: FakeEngines, engines_url: str
) -> None:
    with serving(news_settings(engines_url)) as url:
        async with Client(f"{url}/mcp", mode="legacy", cache=None) as client:
            arguments = {"query": QUERY, "category": "news", "engines": ["serpapi"]}
            result = await client.call_tool("web_search", {**arguments, "max_results": 50})
    assert result.structured_content is not None
    deal = next(
        r
        for r in result.structured_content["results"]
        if r["title"].startswith("Prime Day Apple deals include")
    )
    lines = result.content[0].text.splitlines()  # type: ignore[union-attr]
    meta = lines.index(f"   {deal['url']}") + (2 if deal["snippet"] else 1)
    assert lines[meta].startswith(f"   [{deal['source']} via serpapi; {deal['published']}; score ")
    reports = [f"{o['source']} ({o['url']}, {o['published']})" for o in deal["also"]]
    assert [o["source"] for o in deal["also"]] == ["The New York Times", "The Verge", "AOL.com"]
    assert lines[meta + 1] == f"   also reported by: {', '.join(reports)}"


async def test_a_story_grouped_with_its_own_publishers_other_pages_names_each_publisher_once(
    recorded: FakeEngines, engines_url: str
) -> None:
    """Google groups a story's articles with another of the lead's publisher (MacRumors' "Apple
    fixes alarms in iOS 26.1" under its "Apple Seeds Second Betas"): no publisher is "also
    reported by" under its own result, nor twice."""
    with serving(news_settings(engines_url)) as url:
        answer = await search(url, category="news", engines=["serpapi"], max_results=50)
    results = answer["results"]
    betas = next(r for r in results if r["title"].startswith("Apple Seeds Second Betas"))
    assert betas["source"] == "MacRumors"
    assert [o["source"] for o in betas["also"]] == ["Forbes", "AppleInsider"]
    for result in results:
        publishers = [result["source"], *(o["source"] for o in result.get("also", []))]
        assert len(publishers) == len(set(publishers)), publishers


async def test_a_google_news_link_gives_way_to_the_publishers_own_link_another_engine_found(
    recorded: FakeEngines, engines_url: str
) -> None:
    """Google News links AP's report through its redirect page; Serper found the same report at
    AP's address, lower in its list: the story's one result links AP's page, found by both."""
    recorded_serper = json.loads(fixture_bytes(RECORDED["serper"]))
    ap = "https://apnews.com/article/trump-national-monuments-utah-bears-ears-0123"
    recorded_serper["news"].append(
        {
            "title": "Trump reduces size of 2 national monuments in Utah",
            "link": ap,
            "snippet": "President Donald Trump reduced the size of two national monuments.",
            "date": "Jul 13, 2026",
            "source": "AP News",
        }
    )
    recorded.bodies["serper"] = Body(json.dumps(recorded_serper).encode())
    with serving(news_settings(engines_url)) as url:
        answer = await search(
            url, category="news", engines=["google_news", "serper"], max_results=30
        )
    wire = [r for r in answer["results"] if r["title"].startswith("Trump reduces size of 2")]
    assert len(wire) == 1 and wire[0]["source"] == "AP News"
    assert wire[0]["url"] == ap
    assert wire[0]["engines"] == ["google_news", "serper"]
    assert all(o["source"] != "AP News" for o in wire[0]["also"])
    # Where no other engine has the publisher's address, Google's link stays.
    assert all(
        r["url"].startswith("https://news.google.com/")
        for r in answer["results"]
        if r["engines"] == ["google_news"]
    )


async def test_each_engine_is_asked_at_its_news_endpoint_and_google_news_with_when(
    recorded: FakeEngines, engines_url: str
) -> None:
    with serving(news_settings(engines_url)) as url:
        await search(url, category="news", time_range="day", language="en-US")
    last = recorded.last
    assert last["google_news"].path.endswith("/rss/search")
    assert last["google_news"].params == {
        "q": f"{QUERY} when:1d",
        "hl": "en-US",
        "gl": "US",
        "ceid": "US:en",
    }
    assert last["brave"].path.endswith("/res/v1/news/search")
    assert last["brave"].params["freshness"] == "pd"
    assert last["searxng"].params["categories"] == "news"
    assert last["serper"].path.endswith("/news") and last["serper"].json["tbs"] == "qdr:d"
    assert last["serpapi"].params["engine"] == "google_news"
    assert last["serpapi"].params["q"] == f"{QUERY} when:1d"


async def test_a_google_news_article_id_that_holds_the_address_links_the_publisher(
    recorded: FakeEngines, engines_url: str
) -> None:
    recorded.bodies["google_news"] = Body(fixture_bytes(TOP_STORIES), content_type=RSS)
    with serving(news_settings(engines_url)) as url:
        answer = await search(url, category="news", engines=["google_news"], query="Coronavirus")
    (result,) = answer["results"]
    assert result["source"] == "RTBF"
    assert result["url"].startswith("https://www.rtbf.be/info/societe/detail_coronavirus-en-")
    # The story's other reports, which the feed lists in its description, are its `also`.
    assert "snippet" not in result or result["snippet"] == ""
    assert [o["source"] for o in result["also"]] == ["Sudinfo.be", "dh.be", "Le Soir", "Notélé"]
    assert result["also"][2]["url"].startswith("https://www.lesoir.be/")


async def test_a_general_search_never_asks_google_news_nor_mentions_it(
    recorded: FakeEngines, engines_url: str
) -> None:
    recorded.bodies.pop("google_news")  # asked, it would answer 404
    with serving(news_settings(engines_url)) as url:
        answer = await search(url)
    assert recorded.counts["google_news"] == 0
    assert "google_news" not in statuses(answer)
    assert recorded.last["brave"].path.endswith("/res/v1/web/search")
    assert all("also" not in r and "undated" not in r for r in answer["results"])


async def test_naming_an_engine_without_news_is_skipped_with_the_reason(
    recorded: FakeEngines, engines_url: str
) -> None:
    with serving(news_settings(engines_url)) as url:
        news = await search(url, category="news", engines=["google_news", "tavily"])
        general = await search(url, engines=["google_news", "tavily"])
    assert statuses(news) == {"google_news": "ok", "tavily": "skipped"}
    only_news = next(e for e in general["engines"] if e["name"] == "google_news")
    assert only_news == {"name": "google_news", "status": "skipped", "results": 0,
                         "error": "has no general search"}  # fmt: skip


async def test_a_blocked_or_empty_news_answer_is_that_engines_status(
    recorded: FakeEngines, engines_url: str
) -> None:
    recorded.bodies["google_news"] = Body(fixture_bytes(CAPTCHA), content_type="text/html")
    # Without breakers: a block would otherwise leave Google News out of the next search.
    with serving(news_settings(engines_url, breaker={"enabled": False})) as url:
        blocked = await search(url, category="news")
        empty = b'<rss version="2.0"><channel><title>x</title></channel></rss>'
        recorded.bodies["google_news"] = Body(empty, content_type=RSS)
        answered = await search(url, category="news", query="Bears Ears monument news")
    report = next(e for e in blocked["engines"] if e["name"] == "google_news")
    assert report["status"] == "blocked" and "unusual traffic" in report["error"]
    assert blocked["partial"] is True and blocked["results"]  # the other engines answered
    assert statuses(answered)["google_news"] == "empty"


def entity_feed(expanded: int) -> bytes:
    """An RSS feed of a few hundred KB whose entity, named in one title over and over, comes to
    `expanded` bytes: within the 100-fold growth that expat allows a document."""
    entity, uses = "A" * 1000, expanded // 1000
    padding = "<!--" + "x" * (uses * 10) + "-->"
    return (
        f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "{entity}">]><rss version="2.0">'
        f"{padding}<channel><item><title>{'&a;' * uses}</title>"
        "<link>https://news.example/a</link></item></channel></rss>"
    ).encode()


async def test_a_feed_declaring_entities_is_an_error_and_costs_no_memory(
    recorded: FakeEngines, engines_url: str
) -> None:
    recorded.bodies["google_news"] = Body(entity_feed(60 * 1024 * 1024), content_type=RSS)
    with serving(news_settings(engines_url)) as url:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            answer = await search(url, category="news")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    # The feed is under 1 MiB: it is never expanded into the 60 MiB its entity spells.
    assert peak - before < 16 * 1024 * 1024
    report = next(e for e in answer["engines"] if e["name"] == "google_news")
    assert report["status"] == "error"
    assert answer["partial"] is True and answer["results"]  # the other engines answered


async def test_a_news_answer_is_served_from_the_cache_for_at_most_the_news_ttl(
    recorded: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    settings, cache, clock = _news_cache(engines_url, tmp_path, news_ttl_seconds=900)
    with serving(settings, cache) as url:
        # A hit slides the expiry, never past the news TTL.
        assert await _news_three_times(url, clock, 600, 301) == [False, True, False]
        general = await search(url, engines=["serper"])
        clock.advance(1000)
        general_again = await search(url, engines=["serper"])
    assert recorded.counts["google_news"] == 2
    assert (general["cached"], general_again["cached"]) == (False, True)  # the general TTL
    # The news answer refused for its age is a miss, not a hit.
    assert (cache.stats.hits, cache.stats.misses) == (2, 3)


async def test_an_answer_of_the_past_day_is_as_short_lived_as_news(
    recorded: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    """A search of the past day served for hours, hit after hit, missed that day's pages and
    came to list the day before's; it lives as long as a news answer."""
    settings, cache, clock = _news_cache(engines_url, tmp_path, news_ttl_seconds=900)
    with serving(settings, cache) as url:
        cached = []
        for gap in (0, 600, 400, 0):
            clock.advance(gap)
            answer = await search(url, engines=["serper"], time_range="day")
            cached.append(answer["cached"])
        week = [(await search(url, engines=["serper"], time_range="week"))["cached"]]
        clock.advance(1000)
        week.append((await search(url, engines=["serper"], time_range="week"))["cached"])
    assert cached == [False, True, False, True]
    assert week == [False, True]  # the general TTL


async def test_a_news_answer_held_in_memory_is_not_served_past_the_news_ttl(
    recorded: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    """The answers a cache process keeps in memory for a moment obey the news TTL as well: a
    hit slides the answer's expiry, never past `news_ttl_seconds` after it was made."""
    settings, cache, clock = _news_cache(engines_url, tmp_path, news_ttl_seconds=1)
    with serving(settings, cache) as url:
        # The third search comes 1.2 s after the first, within the expiry the hit slid.
        assert await _news_three_times(url, clock, 0.5, 0.7) == [False, True, False]
    assert recorded.counts["google_news"] == 2


def _news_cache(engines_url: str, tmp_path: Path, **ttls: int) -> tuple[Settings, Cache, FakeClock]:
    """The news settings with a SQLite cache of these `ttls` (`news_ttl_seconds=900`), the cache
    and its clock."""
    clock = FakeClock()
    stored = {"backend": "sqlite", "path": str(tmp_path / "cache.sqlite3"), **ttls}
    settings = news_settings(engines_url, stored)
    return settings, open_cache(settings.cache, clock=clock), clock


async def _news_three_times(url: str, clock: FakeClock, *gaps: float) -> list[bool]:
    """Whether each of three identical news searches, `gaps` seconds apart, was cached."""
    cached = [(await search(url, category="news", engines=["google_news"]))["cached"]]
    for gap in gaps:
        clock.advance(gap)
        cached.append((await search(url, category="news", engines=["google_news"]))["cached"])
    return cached


async def test_a_partial_news_answer_keeps_the_shorter_partial_ttl(
    recorded: FakeEngines, engines_url: str, tmp_path: Path
) -> None:
    """A news answer is kept at most `news_ttl_seconds`, and a partial one no longer than
    `partial_ttl_seconds` when that is shorter."""
    recorded.bodies["serper"] = Body(b'{"message": "internal error"}', status=500)
    settings, cache, clock = _news_cache(
        engines_url, tmp_path, news_ttl_seconds=900, partial_ttl_seconds=600
    )
    with serving(settings, cache) as url:
        first = await search(url, category="news", engines=["google_news", "serper"])
        clock.advance(601)
        later = await search(url, category="news", engines=["google_news", "serper"])
    assert first["partial"] is True and statuses(first)["serper"] == "error"
    assert (first["cached"], later["cached"]) == (False, False)
    assert recorded.counts["google_news"] == 2


def test_the_searxng_endpoint_maps_categories_news(recorded: FakeEngines, engines_url: str) -> None:
    with serving(news_settings(engines_url)) as url:
        response = httpx.get(
            f"{url}/search",
            params={"q": QUERY, "format": "json", "categories": "news", "engines": "google_news"},
            timeout=20,
        )
    body = response.json()
    assert response.status_code == 200, body
    assert body["results"] and all(r["category"] == "news" for r in body["results"])
    first = body["results"][0]
    assert first["publishedDate"].startswith("2026-07-14T03:33:16")
    assert first["source"] == "The Washington Post"
    assert recorded.counts["google_news"] == 1
    assert json.dumps(body).count("tavily") == 0


def test_the_searxng_endpoint_naming_only_news_engines_searches_news(
    recorded: FakeEngines, engines_url: str
) -> None:
    # As naming only academic indexes searches papers: google_news has no general search, and
    # a general one would answer nothing without a word.
    with serving(news_settings(engines_url)) as url:
        response = httpx.get(
            f"{url}/search", params={"q": QUERY, "engines": "google_news"}, timeout=20
        )
    body = response.json()
    assert response.status_code == 200, body
    assert body["results"] and all(r["category"] == "news" for r in body["results"])
    assert recorded.counts["google_news"] == 1
