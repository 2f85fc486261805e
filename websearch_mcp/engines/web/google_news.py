"""Google News search as RSS: `GET /rss/search?q=..&hl=..&gl=..&ceid=..`, no key.

A time range is written into the query as Google News reads it (`when:1d`). Items link to
Google's redirect pages (`news.google.com/rss/articles/<id>`): kept as given where the ID is
opaque (the current feeds); the feeds before 2024 wrote the publisher's address into the ID,
and the legacy feed's links carry it as `url=`: that address is used.
"""

from __future__ import annotations

import base64
import binascii
import xml.etree.ElementTree as ET
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser

from websearch_mcp.engines.base import Engine
from websearch_mcp.engines.common import (
    http_url,
    link_parts,
    query_value,
    ranked_hits,
    xml_root,
)
from websearch_mcp.engines.news import GOOGLE_WHEN, news_hit, news_time, without_source
from websearch_mcp.engines.text import clean_text
from websearch_mcp.errors import EngineCaptcha, EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query

BLOCKED = "Google 'unusual traffic' CAPTCHA"
# An article ID of the feeds before 2024, decoded: a protobuf whose field 4 is the address.
_ARTICLE_HEAD = b"\x08\x13\x22"
# Markup and text of Google's "unusual traffic" page (served for any Google host, /sorry/).
_BLOCK_MARKERS = ('id="captcha-form"', "/sorry/index", "unusual traffic from your computer")
# Where Chinese is written in its traditional script.
_TRADITIONAL = frozenset({"TW", "HK", "MO"})
# The country of a bare language tag where it is not the language code in capitals.
_COUNTRIES = {
    "en": "US",
    "ja": "JP",
    "zh": "CN",
    "ko": "KR",
    "sv": "SE",
    "da": "DK",
    "el": "GR",
    "he": "IL",
    "uk": "UA",
    "cs": "CZ",
    "hi": "IN",
    "vi": "VN",
    "ar": "EG",
    "fa": "IR",
    # Languages whose code, read as a country, names another one (sl: Sierra Leone).
    "sr": "RS",
    "sl": "SI",
    "et": "EE",
    "ca": "ES",
    "bn": "BD",
    "ta": "IN",
    "te": "IN",
    "ml": "IN",
    "mr": "IN",
    "no": "NO",
}
#: Codes of one language that Google News names otherwise.
_LANGUAGES = {"iw": "he", "nb": "no", "nn": "no"}


def edition(language: str | None) -> dict[str, str]:
    """`hl`, `gl` and `ceid` for a language tag: `de` -> de, DE, DE:de; `en-GB` -> en-GB, GB,
    GB:en; none -> the US edition in English. Chinese, Portuguese and Latin American Spanish
    editions name their language as Google News does: `zh-TW` -> zh-TW, TW, TW:zh-Hant; `pt-BR`
    -> pt-BR, BR, BR:pt-419; `es-MX` -> es-419, MX, MX:es-419."""
    parts = (language or "en-US").strip().replace("_", "-").split("-")
    lang = _LANGUAGES.get(parts[0].lower(), parts[0].lower())
    region = next((p.upper() for p in parts[1:] if len(p) == 2 and p.isalpha()), None)
    if lang == "es" and region is None and "419" in parts[1:]:
        region = "MX"  # Latin America: its largest edition
    if lang == "zh" and region is None and "hant" in (p.lower() for p in parts[1:]):
        region = "TW"
    country = region or _COUNTRIES.get(lang, lang.upper())
    hl = f"{lang}-{region}" if region else lang
    written = lang
    if lang == "zh":
        hl, written = f"zh-{country}", "zh-Hant" if country in _TRADITIONAL else "zh-Hans"
    elif lang == "pt":
        hl, written = f"pt-{country}", "pt-150" if country == "PT" else "pt-419"
    elif lang == "es" and country != "ES":
        hl = written = "es-419"
    return {"hl": hl, "gl": country, "ceid": f"{country}:{written}"}


class GoogleNews(Engine):
    """Google News: an RSS item per article with `pubDate` and the publisher in `<source>`."""

    name = "google_news"
    # Serper's and SerpApi's news answers come from the same index: one voter in the fusion.
    index = "google"
    base_url = "https://news.google.com"
    categories = frozenset({"news"})
    supports_time_range = True
    supports_language = True

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """`q` (with `when:` for a time range) and the edition of the query's language."""
        text = query.text
        if query.time_range:
            text = f"{text} when:{GOOGLE_WHEN[query.time_range]}"
        params: dict[str, Any] = {"q": text, **edition(query.language)}
        return HttpRequest("GET", "/rss/search", params=params)

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """RSS items -> hits; the "unusual traffic" page is a block, whatever its status."""
        target = response.headers.get("location", "") or response.url
        if "/sorry/" in target:
            raise EngineCaptcha(BLOCKED)
        feed = _feed(response)
        if feed is None:  # a page, not a feed: a block, or an error by its status
            if any(marker in response.text for marker in _BLOCK_MARKERS):
                raise EngineCaptcha(BLOCKED)
            self.check_status(response)
            raise EngineParseError("Google News answered with a body that is not an RSS feed")
        self.check_status(response)
        channel = feed.find("channel")
        if channel is None:
            raise EngineParseError("Google News answered with an RSS feed without a channel")
        hits = ranked_hits(channel.findall("item"), self.name, partial(_hit, now=self.now()))
        # A story's grouped reports name their publisher only: its site is the one the feed
        # gives that publisher's own items.
        sites = {hit.source: hit.site for hit in hits if hit.source and hit.site}
        for hit in hits:
            for report in hit.grouped:
                report.site = sites.get(report.source) if report.source else None
        return hits


def _feed(response: HttpResponse) -> ET.Element | None:
    """The RSS document, or None when the body is not one."""
    try:
        root = xml_root(response.content)
    except ET.ParseError:
        return None
    return root if root.tag == "rss" else None


def _hit(item: ET.Element, rank: int, engine: str, now: datetime) -> Hit | None:
    link = (item.findtext("link") or "").strip()
    url = _publisher_url(link) or http_url(link)
    source_node = item.find("source")
    given = source_node.text if source_node is not None and source_node.text else None
    title, source = without_source(clean_text(item.findtext("title")), clean_text(given) or None)
    description = item.findtext("description") or ""
    snippet = clean_text(description)
    # The description of a lone article is its title and publisher again, and a story's is the
    # list of its reports: no text of the article's own, so no snippet.
    reports = _cluster(description, rank, engine)
    if reports or snippet in (f"{title} {source}", title, clean_text(item.findtext("title"))):
        snippet = ""
    published = news_time(item.findtext("pubDate"), now)
    hit = news_hit(url, title, snippet, rank, engine, published=published, source=source)
    if hit is not None:
        hit.grouped = tuple(r for r in reports if r.url != hit.url)
        site = http_url(source_node.get("url") or "") if source_node is not None else None
        hit.site = urlsplit(site).hostname if site else None
    return hit


def _cluster(description: str, rank: int, engine: str) -> list[Hit]:
    """The reports a story's description lists (`<li><a href>headline</a> <font>publisher
    </font></li>`, this item's own among them; the "full coverage" link names no publisher)."""
    if "<li" not in description:
        return []
    reports = []
    for entry in LexborHTMLParser(description).css("li"):
        link, publisher = entry.css_first("a[href]"), entry.css_first("font")
        if link is None or publisher is None:
            continue
        href = (link.attributes.get("href") or "").strip()
        report = news_hit(
            _publisher_url(href) or http_url(href),
            link.text(),
            "",
            rank,
            engine,
            published=None,
            source=clean_text(publisher.text()) or None,
        )
        if report is not None:
            reports.append(report)
    return reports


def _publisher_url(link: str) -> str | None:
    """The article's own address where a Google link carries it: `news/url?...&url=...`, or
    an article ID that encodes it (`/articles/<id>`)."""
    try:
        host, path, params = link_parts(link)
    except ValueError:
        return None
    if not (host == "google.com" or host.endswith(".google.com")):
        return None
    _, articles, article_id = path.rpartition("/articles/")
    if articles:
        return _encoded_url(article_id)
    return http_url(query_value(params, "url")) if params else None


def _encoded_url(article_id: str) -> str | None:
    """The address an article ID of the feeds before 2024 holds (base64 of a protobuf whose
    field 4 is the address), None for the opaque IDs of the current feeds."""
    try:
        raw = base64.urlsafe_b64decode(article_id + "=" * (-len(article_id) % 4))
    except (binascii.Error, ValueError):
        return None
    if not raw.startswith(_ARTICLE_HEAD):
        return None
    read = _varint(raw, len(_ARTICLE_HEAD))
    if read is None or read[0] + read[1] > len(raw):
        return None
    length, start = read
    try:
        return http_url(raw[start : start + length].decode("utf-8"))
    except UnicodeDecodeError:
        return None


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    """The protobuf varint at `at` (7 bits a byte, low first; a set high bit says another byte
    follows) and where it ends; None when `data` ends inside it."""
    value = 0
    for shift, byte in enumerate(data[at : at + 4]):
        value |= (byte & 0x7F) << (7 * shift)
        if byte < 0x80:
            return value, at + shift + 1
    return None
