"""News engines: Google News RSS and the news endpoints of Brave, SearXNG, Serper and SerpApi.

Every parser runs on the recorded answers in shared/fixtures/news (SOURCES.md there says where
each comes from); the clock is pinned to the recording time, for the relative dates."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.damaged_answers import RECORDED, assert_keeps_contract, damaged, recorded_bodies
from testing.engine_answers import assert_clean, assert_read_as_missing, parse, resp
from testing.shared import fixture_bytes
from websearch_mcp.dates import parse_date
from websearch_mcp.engines.news import news_time, relative_time, without_source
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.engines.web.google_news import GoogleNews, edition
from websearch_mcp.engines.web.searxng import SearXNG
from websearch_mcp.engines.web.serpapi import SerpApi
from websearch_mcp.engines.web.serper import Serper
from websearch_mcp.errors import EngineBlocked, EngineError, EngineParseError
from websearch_mcp.models import Query

NEWS = Query("bears ears", category="news")
KEY = "news-test-key-5f1e2d"
BEARS_EARS = "news/google_news/monument-watch_bears-ears_2026-07-14.xml"
LEGACY = "news/google_news/jkl_legacy-NFE1_topic-vladimir-putin_2012.xml"
TOP_STORIES = "news/google_news/RSS-Parser_topstories_fr-BE_2020-03-08_trimmed.xml"
CAPTCHA = "news/blocked/unlim-proxy-engine_google_sorry_captcha_2026-07-25.html"
BRAVE = "news/brave/brave-search-python-client_news_hello-world.json"
SEARXNG = "news/searxng/browse-API_searxng_news_artificial-intelligence.json"
SERPER = "news/serper/langchain-docs_serper_news_tesla-inc.json"
SERPER_HOUR = "news/serper/langchain-docs_serper_news_tesla-inc_tbs-qdr-h.json"
SERPAPI = "news/serpapi/serpapi-tutorials_google_news_topic_technology_2025-10-07.json"
SERPAPI_SPORTS = "news/serpapi/serpapi-tutorials_google_news_topic_sports_2025-10-07.json"


def clock(year: int, month: int, day: int, hour: int, minute: int, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def pinned(moment: datetime) -> dict[str, object]:
    return {"now": lambda: moment}


def assert_news(hits: list, engine: str) -> None:
    """What every news parser promises besides `assert_clean`: a source, UTC times."""
    assert_clean(hits, engine)
    for hit in hits:
        assert hit.source and hit.source == hit.source.strip(" |"), hit
        assert hit.published is None or hit.published.endswith("Z") or len(hit.published) == 10


# --- which engines serve news ------------------------------------------------------------------


def test_the_engines_with_a_news_endpoint_declare_it_and_google_news_serves_only_news() -> None:
    news = {name for name, cls in ENGINES.items() if "news" in cls.categories}
    assert news == {"google_news", "brave", "searxng", "serper", "serpapi"}
    assert ENGINES["google_news"].categories == frozenset({"news"})
    assert not ENGINES["google_news"].needs_key
    assert all("general" in ENGINES[name].categories for name in news - {"google_news"})
    assert ENGINES["bing"].categories == frozenset({"general"})


# --- Google News RSS ---------------------------------------------------------------------------


def test_google_news_asks_the_rss_search_with_the_edition_of_the_language() -> None:
    req = GoogleNews().request(Query('"Bears Ears" monument', category="news"), None)
    assert (req.method, req.path) == ("GET", "/rss/search")
    # As in the recorded feed's own request (SOURCES.md).
    assert req.params == {"q": '"Bears Ears" monument', "hl": "en-US", "gl": "US", "ceid": "US:en"}
    assert edition("fr-BE") == {"hl": "fr-BE", "gl": "BE", "ceid": "BE:fr"}
    assert edition("de") == {"hl": "de", "gl": "DE", "ceid": "DE:de"}
    assert edition("ja") == {"hl": "ja", "gl": "JP", "ceid": "JP:ja"}
    assert edition("en") == {"hl": "en", "gl": "US", "ceid": "US:en"}
    # A code read as a country named another (IW, NB; SL is Sierra Leone, ET Ethiopia).
    assert edition("iw") == {"hl": "he", "gl": "IL", "ceid": "IL:he"}
    assert edition("nb") == {"hl": "no", "gl": "NO", "ceid": "NO:no"}
    assert edition("sl")["ceid"] == "SI:sl" and edition("et")["ceid"] == "EE:et"
    assert edition("sr-Latn")["ceid"] == "RS:sr"
    assert edition("es-419") == {"hl": "es-419", "gl": "MX", "ceid": "MX:es-419"}


@pytest.mark.parametrize(
    ("language", "hl", "ceid"),
    [
        ("zh-TW", "zh-TW", "TW:zh-Hant"),
        ("zh-Hant", "zh-TW", "TW:zh-Hant"),
        ("zh-HK", "zh-HK", "HK:zh-Hant"),
        ("zh-CN", "zh-CN", "CN:zh-Hans"),
        ("zh", "zh-CN", "CN:zh-Hans"),
        ("pt-BR", "pt-BR", "BR:pt-419"),
        ("pt-PT", "pt-PT", "PT:pt-150"),
        ("es-MX", "es-419", "MX:es-419"),
        ("es-ES", "es-ES", "ES:es"),
        ("es", "es", "ES:es"),
    ],
)
def test_google_news_names_its_chinese_portuguese_and_spanish_editions_as_it_does(
    language: str, hl: str, ceid: str
) -> None:
    # As Google News's own edition links name them (hl=zh-TW&gl=TW&ceid=TW:zh-Hant, ...).
    found = edition(language)
    assert (found["hl"], found["ceid"]) == (hl, ceid)
    assert found["gl"] == ceid.split(":")[0]


@pytest.mark.parametrize(
    ("time_range", "when"), [("day", "1d"), ("week", "7d"), ("month", "30d"), ("year", "1y")]
)
def test_google_news_narrows_a_time_range_in_the_query(time_range: str, when: str) -> None:
    query = Query("bears ears", time_range=time_range, category="news")  # type: ignore[arg-type]
    assert GoogleNews().request(query, None).params["q"] == f"bears ears when:{when}"  # type: ignore[index]


def test_google_news_reads_the_recorded_search_feed() -> None:
    engine = GoogleNews(**pinned(clock(2026, 7, 14, 4, 8, 56)))  # type: ignore[arg-type]
    hits = parse(engine, fixture_bytes(BEARS_EARS), query=NEWS)
    assert len(hits) == 92
    assert_news(hits, "google_news")
    first = hits[0]
    assert first.title == "Trump again shrinks two national monuments in Utah"
    assert first.source == "The Washington Post"
    assert first.published == "2026-07-14T03:33:16Z"
    # Google's redirect link, kept as given: the publisher's address is not in it.
    assert first.url.startswith("https://news.google.com/rss/articles/CBMi")
    # The first item's description lists the story's other reports (see the test below); a
    # lone item's repeats it.
    assert hits[1].snippet == ""
    assert hits[1].source == "San Juan Record"  # recorded as "San Juan Record |"
    assert all(hit.published for hit in hits)
    # Publishers named with " - " leave the title too, and a lone item repeats no more of it.
    notus = next(h for h in hits if h.source == "News of the United States - NOTUS")
    assert notus.title == "Trump Cuts Two Utah National Monuments by More Than 90%"
    assert notus.snippet == ""
    assert [h.title for h in hits if h.source and h.title.endswith(f" - {h.source}")] == []


def test_google_news_gives_a_story_cluster_as_other_reports_not_as_a_snippet() -> None:
    # The first item's description is Google's cluster: "<li><a>title</a> <font>publisher</font>"
    # per report, this one first. Made plain it read "...in Utah The Washington Post President
    # Trump drastically shrinks ... The Salt Lake Tribune Trump Sharply Cuts ...".
    first = parse(GoogleNews(), fixture_bytes(BEARS_EARS), query=NEWS)[0]
    assert first.snippet == ""
    assert [o.source for o in first.grouped][:3] == [
        "The Salt Lake Tribune", "The New York Times", "NPR Utah | KUER"
    ]  # fmt: skip
    assert all(o.url.startswith("https://news.google.com/rss/articles/") for o in first.grouped)
    # The 2020 top-stories cluster carries each publisher's own address; "full coverage" is none.
    (story,) = parse(GoogleNews(), fixture_bytes(TOP_STORIES), query=NEWS)
    assert [o.source for o in story.grouped] == ["Sudinfo.be", "dh.be", "Le Soir", "Notélé"]
    assert story.grouped[2].url.startswith("https://www.lesoir.be/")


def test_google_news_takes_the_publisher_url_and_name_from_the_legacy_feed() -> None:
    hits = parse(GoogleNews(), fixture_bytes(LEGACY), query=NEWS)
    assert len(hits) == 10
    assert_news(hits, "google_news")
    first = hits[0]
    assert first.url.startswith("http://www.telegraph.co.uk/news/worldnews/vladimir-putin/")
    assert first.source == "Telegraph.co.uk"  # no <source>: the title's ending
    assert first.title == "Russia election loser 'outraged' as Putin loses patience with protesters"
    assert first.published == "2012-03-06T10:52:50Z"


def test_google_news_reads_a_top_stories_feed_too() -> None:
    (hit,) = parse(GoogleNews(), fixture_bytes(TOP_STORIES), query=NEWS)
    assert hit.source == "RTBF" and hit.published == "2020-03-08T10:32:07Z"
    assert hit.title.startswith("Coronavirus en Belgique")


def test_google_news_takes_the_publisher_url_an_article_id_before_2024_carries() -> None:
    # The 2020 feed's article ID is the publisher's address, base64-encoded behind a short
    # header; the current IDs ("CBMi...AU_yqL...") are opaque and stay Google's links.
    (hit,) = parse(GoogleNews(), fixture_bytes(TOP_STORIES), query=NEWS)
    assert hit.url == (
        "https://www.rtbf.be/info/societe/detail_coronavirus-en-belgique-200-cas-detectes-au-total"
        "-la-circulation-du-virus-reste-limitee?id=10450793"
    )
    hits = parse(GoogleNews(), fixture_bytes(BEARS_EARS), query=NEWS)
    assert all(h.url.startswith("https://news.google.com/rss/articles/CBMi") for h in hits)
    cut = _article_id(b"https://example.com/a", length=100)  # the address runs past the ID
    not_utf8 = _article_id(b"https://\xff\xfe")
    for broken in (
        "CBMi",
        "CBMiiwFodHRw",
        "CBMi!!",
        "CBMiBWZ0cDovL3g",
        cut,
        not_utf8,
        "CBMi\u00e9",
    ):
        link = f"https://news.google.com/rss/articles/{broken}?oc=5"
        assert _item_url(link) == link
    # Only Google's own links are read so.
    for host in ("example.org", "notgoogle.com"):
        elsewhere = f"https://{host}/rss/articles/{_article_id(b'https://example.com/a')}"
        assert _item_url(elsewhere) == elsewhere


def _article_id(url: bytes, tail: bytes = b"", length: int | None = None) -> str:
    """An article ID as the feeds before 2024 wrote it: base64 without padding of a protobuf
    header, the address's length as a varint, the address and `tail`."""
    size, varint = len(url) if length is None else length, b""
    while size >= 0x80:
        varint, size = varint + bytes([size & 0x7F | 0x80]), size >> 7
    raw = b"\x08\x13\x22" + varint + bytes([size]) + url + tail
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _item_url(link: str) -> str:
    item = f"<item><title>T - P</title><link>{link}</link></item>"
    (hit,) = parse(GoogleNews(), f"<rss><channel>{item}</channel></rss>", query=NEWS)
    return hit.url


def test_google_news_reads_an_address_of_any_length_in_an_article_id() -> None:
    # 257 bytes end the ID, which needs padding; 128 bytes (a varint's first byte 0x80) do not.
    for url, tail in (
        (b"https://example.com/" + b"a" * 237, b""),
        (b"https://b.example/" + b"b" * 110, b"\xd2\x01\x00"),
    ):
        article_id = _article_id(url, tail)
        assert _item_url(f"https://news.google.com/rss/articles/{article_id}?oc=5") == url.decode()


def test_the_unusual_traffic_page_is_a_block_with_any_status() -> None:
    page = fixture_bytes(CAPTCHA)
    for status in (200, 429):
        with pytest.raises(EngineBlocked, match="unusual traffic"):
            parse(GoogleNews(), page, status, query=NEWS)
    moved = resp(b"", 302, location="https://www.google.com/sorry/index?continue=x")
    with pytest.raises(EngineBlocked):
        GoogleNews().parse(moved, NEWS)


def test_an_empty_feed_is_no_results_and_other_bodies_are_errors() -> None:
    empty = b'<rss version="2.0"><channel><title>"zzqx" - Google News</title></channel></rss>'
    assert parse(GoogleNews(), empty, query=NEWS) == []
    for body in (b"{}", b"<feed/>", b"<html><p>Sorry, something went wrong</p></html>"):
        with pytest.raises(EngineParseError, match="not an RSS feed"):
            parse(GoogleNews(), body, query=NEWS)
    with pytest.raises(EngineParseError, match="without a channel"):
        parse(GoogleNews(), b"<rss/>", query=NEWS)
    with pytest.raises(EngineError, match="HTTP 503"):
        parse(GoogleNews(), b"", 503, query=NEWS)


@pytest.mark.parametrize("encoding", ["WTF-8", "hex", "utf-32", "idna"])
def test_a_feed_in_an_encoding_python_cannot_read_is_a_parse_error(encoding: str) -> None:
    feed = fixture_bytes(BEARS_EARS).replace(b'encoding="UTF-8"', f'encoding="{encoding}"'.encode())
    with pytest.raises(EngineParseError, match="not an RSS feed"):
        parse(GoogleNews(), feed, query=NEWS)


def test_a_feed_whose_articles_quote_the_block_page_is_still_a_feed() -> None:
    item = (
        "<item><title>Why Google says: unusual traffic from your computer network - The Verge"
        "</title><link>https://news.google.com/rss/articles/x</link><source>The Verge</source>"
        "</item>"
    )
    feed = f'<rss version="2.0"><channel>{item}</channel></rss>'
    (hit,) = parse(GoogleNews(), feed, query=NEWS)
    assert hit.source == "The Verge" and "unusual traffic" in hit.title


# --- Brave -------------------------------------------------------------------------------------


def test_brave_asks_its_news_endpoint_for_news_and_its_web_endpoint_otherwise() -> None:
    news = Brave().request(Query("hello world", time_range="day", category="news"), KEY)
    assert news.path == "/res/v1/news/search" and news.params["freshness"] == "pd"  # type: ignore[index]
    assert Brave().request(Query("hello world"), KEY).path == "/res/v1/web/search"
    assert KEY in news.secrets and KEY not in repr(news)


def test_brave_reads_the_recorded_news_answer() -> None:
    engine = Brave(**pinned(clock(2024, 12, 31, 17, 57)))  # type: ignore[arg-type]
    hits = parse(engine, fixture_bytes(BRAVE), query=NEWS)
    assert len(hits) == 20
    assert_news(hits, "brave")
    assert hits[0].published == "2024-12-31T17:09:03Z"  # page_age, UTC
    assert hits[0].source == "npr.org"
    named = json.loads(fixture_bytes(BRAVE))
    named["results"][0]["source"] = "NPR"  # the publisher's name, where Brave gives one
    assert parse(engine, json.dumps(named), query=NEWS)[0].source == "NPR"
    assert [h.published[:10] for h in hits[:3]] == ["2024-12-31", "2024-12-31", "2024-12-27"]  # type: ignore[index]


def test_brave_news_without_page_age_is_dated_by_its_age() -> None:
    item = {"title": "T", "url": "https://a.example/n", "age": "48 minutes ago"}
    body = json.dumps({"type": "news", "results": [item]})
    [hit] = parse(Brave(**pinned(clock(2024, 12, 31, 17, 57))), body, query=NEWS)  # type: ignore[arg-type]
    assert hit.published == "2024-12-31T17:09:00Z"


# --- SearXNG -----------------------------------------------------------------------------------


def test_searxng_asks_the_news_category() -> None:
    req = SearXNG().request(Query("artificial intelligence", category="news"), None)
    assert req.params["categories"] == "news"  # type: ignore[index]
    assert "categories" not in SearXNG().request(Query("x"), None).params  # type: ignore[operator]


def test_searxng_news_dates_come_from_the_printed_metadata() -> None:
    now = clock(2026, 8, 14, 12, 0)
    hits = parse(SearXNG(**pinned(now)), fixture_bytes(SEARXNG), query=NEWS)  # type: ignore[arg-type]
    assert len(hits) == 10
    assert_news(hits, "searxng")
    # "13 hours ago | Barchart on MSN", with publishedDate null.
    assert hits[0].source == "Barchart on MSN"
    assert hits[0].published == "2026-08-13T23:00:00Z"
    by_source = {h.source: h.published for h in hits}
    assert by_source["The Wall Street Journal"] == "2023-06-13"  # "6/13/2023 | ..."
    assert hits[0].score == 1.0


def test_searxng_news_dates_come_from_published_date_before_the_metadata() -> None:
    item = {
        "title": "T",
        "url": "https://a.example/n",
        "publishedDate": "2026-08-14T09:30:00",
        "metadata": "13 hours ago | Barchart on MSN",
    }
    body = json.dumps({"results": [item]})
    [hit] = parse(SearXNG(**pinned(clock(2026, 8, 14, 12, 0))), body, query=NEWS)  # type: ignore[arg-type]
    assert (hit.published, hit.source) == ("2026-08-14T09:30:00Z", "Barchart on MSN")


@pytest.mark.parametrize(
    ("metadata", "published", "source"),
    [
        ("Reuters", None, "Reuters"),  # SearXNG's Bing News leaves out a part it did not find
        ("13 hours ago", "2026-08-13T23:00:00Z", None),
        ("", None, None),
    ],
)
def test_searxng_news_metadata_of_one_part_is_a_time_or_the_publisher(
    metadata: str, published: str | None, source: str | None
) -> None:
    item = {"title": "T", "url": "https://a.example/n", "metadata": metadata}
    body = json.dumps({"results": [item]})
    [hit] = parse(SearXNG(**pinned(clock(2026, 8, 14, 12, 0))), body, query=NEWS)  # type: ignore[arg-type]
    assert (hit.published, hit.source) == (published, source)


# --- Serper ------------------------------------------------------------------------------------


def test_serper_posts_news_searches_to_its_news_path() -> None:
    req = Serper().request(Query("Tesla Inc.", time_range="day", category="news"), KEY)
    assert (req.method, req.path) == ("POST", "/news")
    assert req.json["q"] == "Tesla Inc." and req.json["tbs"] == "qdr:d"
    assert Serper().request(Query("Tesla Inc."), KEY).path == "/search"


@pytest.mark.parametrize("recorded", [SERPER, SERPER_HOUR])
def test_serper_reads_the_recorded_news_answers(recorded: str) -> None:
    now = clock(2023, 5, 4, 15, 0)
    hits = parse(Serper(**pinned(now)), fixture_bytes(recorded), query=NEWS)  # type: ignore[arg-type]
    assert hits and all(h.published for h in hits)
    assert_news(hits, "serper")
    if recorded == SERPER:
        first = json.loads(fixture_bytes(recorded))["news"][0]
        assert (hits[0].title, hits[0].url) == (first["title"], first["link"])
        assert hits[0].snippet.startswith("Proxy advisory firm ISS on Wednesday recommended")
        assert hits[0].source == "Reuters" and hits[0].published == "2023-05-04T14:55:00Z"
        assert hits[1].published == "2023-05-03T15:00:00Z"  # "1 day ago"


# --- SerpApi -----------------------------------------------------------------------------------


def test_serpapi_asks_the_google_news_engine_with_when_for_a_time_range() -> None:
    req = SerpApi().request(
        Query("tesla", time_range="week", language="en-US", category="news"), KEY
    )
    assert req.params == {  # type: ignore[comparison-overlap]
        "engine": "google_news",
        "q": "tesla when:7d",
        "hl": "en",
        "gl": "us",
        "api_key": KEY,
    }
    assert KEY in req.secrets


@pytest.mark.parametrize(("recorded", "count"), [(SERPAPI, 70), (SERPAPI_SPORTS, 46)])
def test_serpapi_reads_the_recorded_topic_pages(recorded: str, count: int) -> None:
    hits = parse(SerpApi(), fixture_bytes(recorded), query=NEWS)
    assert len(hits) == count
    assert_news(hits, "serpapi")
    assert all(h.published and h.published.startswith("2025-10-0") for h in hits)
    if recorded == SERPAPI:
        # A story's lead article (its `highlight`), "10/07/2025, 01:25 PM, +0000 UTC".
        assert hits[0].source == "Engadget" and hits[0].published == "2025-10-07T13:25:00Z"


def test_serpapi_keeps_a_storys_other_reports_with_its_lead() -> None:
    hits = parse(SerpApi(), fixture_bytes(SERPAPI), query=NEWS)
    lead = hits[0]
    assert [(o.source, o.published) for o in lead.grouped] == [
        ("The New York Times", "2025-10-07T10:00:00Z"),
        ("The Verge", "2025-10-07T16:37:00Z"),
        ("AOL.com", "2025-10-02T15:25:00Z"),
    ]
    assert lead.grouped[1].url.startswith("https://www.theverge.com/tech/794046/")
    assert sum(len(h.grouped) for h in hits) == 188
    assert all(o.url != h.url and not o.grouped for h in hits for o in h.grouped)


def test_serpapi_reads_a_story_from_its_stories_alone_and_skips_broken_ones() -> None:
    story = {"title": "Dam breaks upstream", "link": "https://a.example/dam", "date": "2 hours ago",
             "source": {"name": "A"}}  # fmt: skip
    other = {"title": "Dam breaks", "link": "https://b.example/dam", "source": {"name": "B"}}
    body = {"news_results": [
        {"stories": [story, 7, None, {"link": "ftp://c.example/x"}, other, dict(story)]},
        {"highlight": {"title": "Lead", "link": "https://d.example/lead"}, "stories": "x"},
    ]}  # fmt: skip
    first, second = parse(SerpApi(), json.dumps(body), query=NEWS)
    assert (first.url, first.source) == ("https://a.example/dam", "A")
    assert [o.url for o in first.grouped] == ["https://b.example/dam"]  # not the lead again
    assert second.url == "https://d.example/lead" and second.grouped == ()


def test_serpapi_reports_no_news_as_no_results() -> None:
    body = '{"error": "Google News hasn\'t returned any results for this query."}'
    assert parse(SerpApi(), body, query=NEWS) == []


# --- fields of another type than documented ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "recorded", "field"),
    [
        ("brave", BRAVE, ("results", 0, "description")),
        ("searxng", SEARXNG, ("results", 0, "content")),
        ("searxng", SEARXNG, ("results", 0, "metadata")),
        ("serper", SERPER, ("news", 0, "snippet")),
    ],
)
@pytest.mark.parametrize(
    "value", [["a", "b"], {"value": "x y"}, True, 12345, ["13 hours ago | Barchart on MSN"]]
)
def test_a_text_field_of_another_type_is_read_as_missing(
    name: str, recorded: str, field: tuple[str | int, ...], value: object
) -> None:
    engine = ENGINES[name](**pinned(clock(2026, 8, 14, 12, 0)))  # type: ignore[arg-type]
    assert_read_as_missing(engine, fixture_bytes(recorded), field, value, NEWS)


# --- publication times -------------------------------------------------------------------------

NOW = clock(2026, 7, 14, 4, 0)


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("Tue, 14 Jul 2026 03:33:16 GMT", "2026-07-14T03:33:16Z"),
        ("Tue, 14 Jul 2026 05:33:16 +0200", "2026-07-14T03:33:16Z"),
        ("2024-12-31T17:09:03", "2024-12-31T17:09:03Z"),
        ("2024-12-31T17:09:03+01:00", "2024-12-31T16:09:03Z"),
        ("2024-12-31T17:09:03Z", "2024-12-31T17:09:03Z"),
        ("3 hours ago", "2026-07-14T01:00:00Z"),
        ("5 mins ago", "2026-07-14T03:55:00Z"),
        ("an hour ago", "2026-07-14T03:00:00Z"),
        ("48 minutes ago", "2026-07-14T03:12:00Z"),
        ("2 weeks ago", "2026-06-30T04:00:00Z"),
        ("2 mo ago", "2026-05-15T04:00:00Z"),  # a month counts 30 days
        ("1 month ago", "2026-06-14T04:00:00Z"),
        ("yesterday", "2026-07-13T04:00:00Z"),
        ("10/07/2025, 01:25 PM, +0000 UTC", "2025-10-07T13:25:00Z"),
        ("10/07/2025, 12:05 AM, -0500 UTC", "2025-10-07T05:05:00Z"),
        ("June 3, 2024", "2024-06-03"),
        ("Jun 3, 2024, 3:00 PM", "2024-06-03"),  # no time zone said, no misread 03:00
        ("June 3, 2024 at 3:00 p.m.", "2024-06-03"),
        ("6/13/2023", "2023-06-13"),
        ("2024-06-03", "2024-06-03"),  # a day, not its midnight
        ("", None),
        ("soon", None),
        ("3 fortnights ago", None),
        ("99999999999 years ago", None),
        ("3000 years ago", None),
        ("1200 years ago", "0827-05-01T04:00:00Z"),  # a year before 1000 has four digits too
        ("0999-12-31T23:00:00-02:00", "1000-01-01T01:00:00Z"),
        ("0999-12-31T23:00:00Z", "0999-12-31T23:00:00Z"),
        ("01/01/0001, 01:00 AM, +0500 UTC", None),
        ("0001-01-01T00:00:00+05:00", None),
        (None, None),
    ],
)
def test_a_news_time_is_read_in_every_printed_form(
    printed: str | None, expected: str | None
) -> None:
    assert news_time(printed, NOW) == expected


@given(st.integers(1, 10_000), st.sampled_from(["minute", "hour", "day", "week"]))
def test_a_relative_time_is_that_long_before_now(count: int, unit: str) -> None:
    text = f"{count} {unit}{'s' if count > 1 else ''} ago"
    seconds = {"minute": 60, "hour": 3600, "day": 86_400, "week": 604_800}[unit] * count
    read = relative_time(text, NOW)
    assert read is not None
    assert datetime.fromisoformat(read) == NOW - timedelta(seconds=seconds)


def test_a_google_news_title_loses_only_the_publisher_it_names() -> None:
    assert without_source("Storm hits coast - AP News", "AP News") == (
        "Storm hits coast",
        "AP News",
    )
    assert without_source("Cats - dogs - AP News", None) == ("Cats - dogs", "AP News")
    assert without_source("Storm - hits", "AP News") == ("Storm - hits", "AP News")
    assert without_source(" - AP News", "AP News") == (" - AP News", "AP News")
    # A publisher whose name holds the separator itself.
    assert without_source("Utah cuts - News of the US - NOTUS", "News of the US - NOTUS") == (
        "Utah cuts",
        "News of the US - NOTUS",
    )
    assert without_source("No ending", None) == ("No ending", None)


@given(st.one_of(st.text(max_size=60), st.from_regex(r"\d{1,12} [a-z]{1,8}s? ago", fullmatch=True)))
def test_any_printed_time_reads_as_a_date_or_nothing(printed: str) -> None:
    read = news_time(printed, NOW)
    assert read is None or parse_date(read) is not None


def test_a_time_without_an_offset_is_utc_whatever_the_servers_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        assert news_time("2024-12-31T17:09:03", NOW) == "2024-12-31T17:09:03Z"
    finally:
        monkeypatch.undo()
        time.tzset()


# --- damaged recorded answers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path"),
    [
        (name, path)
        for name, answers in RECORDED.items()
        for path, category in answers
        if category == "news"
    ],
)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_damaged_recorded_news_answers_are_hits_or_an_engine_error(
    name: str, path: str, data: st.DataObject
) -> None:
    body, content_type = data.draw(damaged(fixture_bytes(path), recorded_bodies()))
    assert_keeps_contract(ENGINES[name](), body, NEWS, content_type)
