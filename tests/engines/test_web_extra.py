"""Web engines beyond the first seven: Baidu, Mojeek, Serper, SerpApi, Programmable Search,
Jina and scraped Google. Parsers run on the recorded samples in shared/fixtures; where no real
result page exists (Baidu, Mojeek, Google) the page below is hand-made from the engine's markup
and says so."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

import pytest

from testing.engine_answers import assert_clean, assert_read_as_missing, params_of, parse, resp
from testing.shared import fixture_bytes
from websearch_mcp.dates import split_cjk_date, split_date_prefix
from websearch_mcp.engines.common import fitted
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.engines.web._google import google_language
from websearch_mcp.engines.web.baidu import Baidu
from websearch_mcp.engines.web.brave import Brave
from websearch_mcp.engines.web.google import Google, result_url
from websearch_mcp.engines.web.google_cse import GoogleCSE, split_credential
from websearch_mcp.engines.web.jina import Jina
from websearch_mcp.engines.web.mojeek import Mojeek
from websearch_mcp.engines.web.serpapi import SerpApi
from websearch_mcp.engines.web.serper import Serper
from websearch_mcp.engines.web.tavily import Tavily
from websearch_mcp.errors import (
    EngineAuthError,
    EngineBlocked,
    EngineError,
    EngineParseError,
    EngineRateLimited,
)
from websearch_mcp.models import Category, HttpRequest, Query

KEY = "sk-extra-7d3e9a1b5c"
NEW_WEB = ("baidu", "mojeek", "serper", "serpapi", "google_cse", "jina", "google")


def assert_secret_safe(req: HttpRequest, key: str) -> None:
    assert key in req.secrets
    assert key not in repr(req) and key not in str(req)


# --- registry and declarations --------------------------------------------------------------------


def test_registry_keeps_the_first_seven_and_adds_the_new_web_engines() -> None:
    for name in ("tavily", "brave", "exa", "searxng", "duckduckgo", "bing", "wikipedia"):
        assert name in ENGINES
    for name in NEW_WEB:
        assert ENGINES[name].kind == "web"
        assert ENGINES[name].name == name


@pytest.mark.parametrize("name", NEW_WEB)
def test_declarations(name: str) -> None:
    cls = ENGINES[name]
    assert cls.base_url.startswith("https://") and not cls.base_url.endswith("/")
    assert cls.default_timeout > 0
    assert cls.key_env == (f"{name.upper()}_API_KEYS" if cls.needs_key else None)
    assert cls.default_enabled is (name != "google")  # scraping Google is opt-in
    assert not cls.returns_score
    cls()  # the orchestrator builds engines without arguments


@pytest.mark.parametrize("name", ["serper", "serpapi", "google_cse", "jina"])
def test_api_engines_reject_non_json_bodies(name: str) -> None:
    with pytest.raises(EngineParseError) as caught:
        parse(ENGINES[name](), "<!DOCTYPE html><p>secret-looking body</p>")
    assert "secret-looking" not in str(caught.value)


@pytest.mark.parametrize("name", ["serper", "serpapi", "jina"])
@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_is_an_auth_error_that_does_not_echo_the_key(name: str, status: int) -> None:
    body = json.dumps({"message": f"invalid key {KEY}", "error": f"invalid key {KEY}"})
    with pytest.raises(EngineAuthError) as caught:
        parse(ENGINES[name](), body, status)
    assert KEY not in str(caught.value)


@pytest.mark.parametrize("name", ["baidu", "mojeek", "google"])
def test_keyless_requests_carry_no_secrets(name: str) -> None:
    req = ENGINES[name]().request(Query("q"), None)
    assert req.secrets == () and req.method == "GET"


def test_google_language_mapping() -> None:
    assert google_language(None) == (None, None, None)
    assert google_language("de") == ("de", None, "lang_de")
    assert google_language("en-US") == ("en", "us", "lang_en")
    assert google_language("pt_BR") == ("pt", "br", "lang_pt")
    # Google's interface languages name Chinese by script: zh-CN and zh-TW, no zh.
    assert google_language("zh") == ("zh-CN", None, "lang_zh-CN")
    assert google_language("zh-CN") == ("zh-CN", "cn", "lang_zh-CN")
    assert google_language("zh-TW") == ("zh-TW", "tw", "lang_zh-TW")
    assert google_language("zh-Hant") == ("zh-TW", None, "lang_zh-TW")
    # Hong Kong and Macao write Traditional Chinese too.
    assert google_language("zh-HK") == ("zh-TW", "hk", "lang_zh-TW")
    assert google_language("zh-MO") == ("zh-TW", "mo", "lang_zh-TW")
    # Google's own codes: Hebrew is `iw`, Norwegian `no`, Filipino `tl`
    assert google_language("he-IL") == ("iw", "il", "lang_iw")
    assert google_language("nb-NO") == ("no", "no", "lang_no")
    assert google_language("nn") == ("no", None, "lang_no")
    assert google_language("fil") == ("tl", None, "lang_tl")


# --- Baidu ----------------------------------------------------------------------------------------

# Hand-made from Baidu's result markup (no real result page was recorded; every recording hit
# the security check): `div.result.c-container` blocks with `mu` (the real URL) and `data-tools`
# JSON, an `h3 a` title pointing at a www.baidu.com/link redirect, a `c-abstract` snippet with a
# leading "2023年5月12日" date, a nested container, an aladdin card and an ad.
BAIDU_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<title>pgvector_百度搜索</title></head><body><div id="content_left">
<div class="result c-container new-pmd" id="1" srcid="1599" tpl="se_com_default"
     mu="https://github.com/pgvector/pgvector"
     data-tools='{"title":"pgvector","url":"http://www.baidu.com/link?url=AAA"}'>
  <div class="c-container"><h3 class="c-title t"><a href="http://www.baidu.com/link?url=AAA"
     target="_blank"><em>pgvector</em>: Open-source vector similarity search for Postgres</a>
  </h3></div>
  <div class="c-abstract"><span class="c-color-gray2">2023年5月12日&nbsp;</span>Store your
     vectors with the rest of your data &amp; query them.</div>
</div>
<div class="result c-container" id="2" tpl="se_com_default"
     data-tools='{"title":"PostgreSQL 向量","url":"http://www.baidu.com/link?url=BBB"}'>
  <h3 class="t"><a href="http://www.baidu.com/link?url=BBB">PostgreSQL 向量检索 <em>pgvector</em>
  教程</a></h3>
  <div class="c-span-last"><span class="content-right_8Zs40">介绍 pgvector 的安装与索引。</span>
  </div>
</div>
<div class="result c-container EC_result" id="3001" data-tuiguang="1">
  <h3 class="t"><a href="http://www.baidu.com/baidu.php?url=ad">广告 向量数据库</a></h3>
</div>
<div class="result-op c-container" id="3" tpl="bk_polysemy" mu="https://baike.baidu.com/item/pgvector">
  <h3 class="t"><a href="http://www.baidu.com/link?url=CCC">pgvector_百度百科</a></h3>
  <div class="c-abstract">pgvector 是 PostgreSQL 的扩展。</div>
</div>
<div class="result c-container" id="4"><h3 class="t">No link here</h3></div>
</div></body></html>"""


def test_baidu_data_tools_nested_too_deep_is_passed_over() -> None:
    # JSON deeper than Python reads, in one result's attribute: that result falls back to its
    # title link, as with any `data-tools` that is not JSON; the rest of the page is read.
    deep = "[" * 100_000 + "]" * 100_000
    page = BAIDU_PAGE.replace(
        """'{"title":"PostgreSQL 向量","url":"http://www.baidu.com/link?url=BBB"}'""", f"'{deep}'"
    )
    hits = parse(Baidu(), page)
    assert [h.url for h in hits][1:] == [
        "http://www.baidu.com/link?url=BBB",
        "https://baike.baidu.com/item/pgvector",
    ]


def test_baidu_block_page_fixture_is_blocked() -> None:
    with pytest.raises(EngineBlocked, match="security verification"):
        parse(Baidu(), fixture_bytes("baidu_html/captcha_wappass_security_verification_2020.html"))


def test_baidu_redirect_to_wappass_is_blocked() -> None:
    location = "https://wappass.baidu.com/static/captcha/tuxing.html?&ak=x&backurl=y"
    with pytest.raises(EngineBlocked):
        parse(Baidu(), "", 302, location=location)
    # The HTTP client follows redirects: then the final URL gives it away.
    with pytest.raises(EngineBlocked):
        Baidu().parse(resp("<html></html>", 200, url=location), Query("q"))


def test_baidu_query_about_the_check_page_is_not_a_block() -> None:
    page = BAIDU_PAGE.replace("pgvector_百度搜索", "百度安全验证_百度搜索")
    assert len(parse(Baidu(), page)) == 3


def test_baidu_hand_made_results_page() -> None:
    hits = parse(Baidu(), BAIDU_PAGE)
    assert_clean(hits, "baidu")
    assert [h.url for h in hits] == [
        "https://github.com/pgvector/pgvector",  # from `mu`
        "http://www.baidu.com/link?url=BBB",  # from `data-tools`: Baidu's redirect
        "https://baike.baidu.com/item/pgvector",  # the aladdin card's `mu`
    ]
    first = hits[0]
    assert first.title == "pgvector: Open-source vector similarity search for Postgres"
    assert first.published == "2023-05-12"
    assert first.snippet == "Store your vectors with the rest of your data & query them."
    assert hits[1].title == "PostgreSQL 向量检索 pgvector 教程"
    assert hits[1].snippet == "介绍 pgvector 的安装与索引。"
    assert hits[1].published is None
    assert hits[2].snippet == "pgvector 是 PostgreSQL 的扩展。"


def test_baidu_ad_marked_by_its_class_alone_is_skipped() -> None:
    # Baidu marks some ads only by an `ec_` class (`EC_result`), without `data-tuiguang`.
    page = BAIDU_PAGE.replace(' data-tuiguang="1"', "")
    assert [h.url for h in parse(Baidu(), page)] == [
        "https://github.com/pgvector/pgvector",
        "http://www.baidu.com/link?url=BBB",
        "https://baike.baidu.com/item/pgvector",
    ]


def test_baidu_link_from_data_tools_when_the_title_link_has_none() -> None:
    page = BAIDU_PAGE.replace('<a href="http://www.baidu.com/link?url=BBB">', "<a>")
    hits = parse(Baidu(), page)
    assert [h.url for h in hits][1] == "http://www.baidu.com/link?url=BBB"
    assert hits[1].title == "PostgreSQL 向量检索 pgvector 教程"


def test_baidu_date_opening_the_snippet_is_the_published_date() -> None:
    # No date element: the date that opens the snippet is the result's date.
    page = BAIDU_PAGE.replace("介绍 pgvector", "2023年12月1日 - 介绍 pgvector")
    second = parse(Baidu(), page)[1]
    assert second.published == "2023-12-01"
    assert second.snippet == "介绍 pgvector 的安装与索引。"


@pytest.mark.parametrize("age", ["3天前", "5小时前", "昨天 14:20"])
def test_baidu_age_opening_the_snippet_is_taken_off(age: str) -> None:
    # A recent page's age where an older page's date is: taken off, not dated (as Bing's).
    first = parse(Baidu(), BAIDU_PAGE.replace("2023年5月12日", age))[0]
    assert first.snippet == "Store your vectors with the rest of your data & query them."
    assert first.published is None


@pytest.mark.parametrize("age", ["今天 09:15", "刚刚", "2年前"])
def test_baidu_age_of_today_just_now_or_years_is_taken_off(age: str) -> None:
    """Only ages in seconds to months and "昨天"/"前天" were read: "今天 09:15" (today), "刚刚"
    (just now) and "2年前" (two years ago) stayed at the head of the snippet."""
    first = parse(Baidu(), BAIDU_PAGE.replace("2023年5月12日", age))[0]
    assert first.snippet == "Store your vectors with the rest of your data & query them."
    assert first.published is None
    second = parse(Baidu(), BAIDU_PAGE.replace("介绍 pgvector", f"{age} - 介绍 pgvector"))[1]
    assert second.snippet == "介绍 pgvector 的安装与索引。"
    # "Today" or "just now" opening a sentence, with no separator after it, is its own word.
    for sentence in ("今天发布的新版本", "刚刚发布的新版本", "2年前发布的版本"):
        assert split_cjk_date(sentence) == (sentence, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023年5月12日 - 摘要", ("摘要", "2023-05-12")),
        ("  2023年12月1日·正文", ("正文", "2023-12-01")),
        ("2023年2月30日 — 正文", ("2023年2月30日 — 正文", None)),  # no such day: kept whole
        ("2021-06-07", ("2021-06-07", "2021-06-07")),  # a date span holding an ISO date
        ("3天前", ("3天前", None)),
        ("2周前 - 摘要", ("摘要", None)),  # an age in weeks or months is taken off too
        ("1个月前 摘要", ("摘要", None)),
        ("昨天发布的新版本", ("昨天发布的新版本", None)),  # "yesterday" opening a sentence
    ],
)
def test_cjk_date_prefix_split_like_other_date_prefixes(
    text: str, expected: tuple[str, str | None]
) -> None:
    # Same order as split_date_prefix: the rest of the text first, then the date.
    assert split_cjk_date(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sept. 3, 2020 · The rover landed.", ("The rover landed.", "2020-09-03")),  # AP style
        ("3 Sept 2020 · The rover landed.", ("The rover landed.", "2020-09-03")),  # en-GB
        ("Jan. 15, 2024 — Text.", ("Text.", "2024-01-15")),
        ("5 days ago · Text.", ("Text.", None)),
        # No date, though it looks like one: the snippet stays whole.
        ("Python 3, 2020 - what changed", ("Python 3, 2020 - what changed", None)),
    ],
)
def test_a_printed_date_before_a_snippet_is_taken_off_as_its_date(
    text: str, expected: tuple[str, str | None]
) -> None:
    assert split_date_prefix(text) == expected


def test_baidu_no_results_notice_and_unknown_pages() -> None:
    assert parse(Baidu(), '<html><body><div class="nors">抱歉没有找到</div></body></html>') == []
    assert parse(Baidu(), '<html><body><div id="content_left"></div></body></html>') == []
    with pytest.raises(EngineParseError):
        parse(Baidu(), "<html><body><p>Something else entirely</p></body></html>")


def test_baidu_request() -> None:
    engine = Baidu(today=lambda: date(2024, 5, 10))
    req = engine.request(Query("向量 数据库", max_results=20, page=3), None)
    assert (req.method, req.path) == ("GET", "/s")
    assert req.params == {"wd": "向量 数据库", "rn": 20, "ie": "utf-8", "pn": 40}
    assert "pn" not in params_of(engine.request(Query("q"), None))
    week = params_of(engine.request(Query("q", time_range="week"), None))["gpc"]
    end = int(datetime(2024, 5, 11, tzinfo=UTC).timestamp())
    assert week == f"stf={end - 8 * 86400},{end}|stftype=1"
    assert "gpc" not in params_of(engine.request(Query("q"), None))


# --- Mojeek ---------------------------------------------------------------------------------------

# Hand-made from Mojeek's result markup (no recorded page exists): `ul.results-standard > li`
# with `a.ob` (the URL), `h2 a.title` and `p.s`.
MOJEEK_PAGE = """<!DOCTYPE html><html><head><title>rust async - Mojeek Search</title></head><body>
<div class="results"><ul class="results-standard">
<li class="r1"><a class="ob" href="https://rust-lang.github.io/async-book/">https://rust-lang.github.io
 › async-book</a><h2><a class="title" href="https://rust-lang.github.io/async-book/">Asynchronous
 Programming in <strong>Rust</strong></a></h2><p class="s">Getting started with
 <strong>async</strong> &amp; await in Rust.</p></li>
<li class="r2"><a class="ob" href="https://tokio.rs/tokio/tutorial">https://tokio.rs › tutorial</a>
<h2><a class="title" href="https://tokio.rs/tokio/tutorial">Tutorial | Tokio</a></h2></li>
<li class="r3"><h2><a class="title" href="/relative/only">Relative</a></h2></li>
</ul></div></body></html>"""


def test_mojeek_hand_made_results_page() -> None:
    hits = parse(Mojeek(), MOJEEK_PAGE)
    assert_clean(hits, "mojeek")
    assert [(h.title, h.url) for h in hits] == [
        ("Asynchronous Programming in Rust", "https://rust-lang.github.io/async-book/"),
        ("Tutorial | Tokio", "https://tokio.rs/tokio/tutorial"),
    ]
    assert hits[0].snippet == "Getting started with async & await in Rust."
    assert hits[1].snippet == ""


def test_mojeek_query_about_automated_queries_is_not_a_block() -> None:
    page = MOJEEK_PAGE.replace("rust async", "automated queries")
    assert len(parse(Mojeek(), page)) == 2


def test_mojeek_blocks_empty_pages_and_unknown_pages() -> None:
    refusal = "<html><body><p>Sorry your network appears to be sending automated queries</p>"
    with pytest.raises(EngineBlocked):
        parse(Mojeek(), refusal, 403)
    with pytest.raises(EngineBlocked):
        parse(Mojeek(), refusal)
    assert parse(Mojeek(), "<html><body><p>No pages found matching: zzqx</p></body></html>") == []
    with pytest.raises(EngineParseError):
        parse(Mojeek(), "<html><body><p>maintenance</p></body></html>")


def test_mojeek_request() -> None:
    engine = Mojeek(today=lambda: date(2024, 3, 1))
    req = engine.request(Query("rust async"), None)
    assert (req.method, req.path, req.params) == ("GET", "/search", {"q": "rust async"})
    params = engine.request(Query("q", page=3, time_range="month", language="de-AT"), None).params
    assert params == {"q": "q", "s": 20, "since": "20240130", "lb": "de"}
    assert params_of(engine.request(Query("q", time_range="day"), None))["since"] == "20240229"


# --- Serper ---------------------------------------------------------------------------------------


def test_serper_recorded_search() -> None:
    hits = parse(Serper(), fixture_bytes("serper/search_olivia_wilde.json"))
    assert len(hits) == 9
    assert_clean(hits, "serper")
    first = hits[0]
    assert first.title.startswith("Olivia Wilde embraces Jason Sudeikis amid custody battle")
    assert first.url == (
        "https://pagesix.com/2023/01/29/olivia-wilde-hugs-it-out-with-jason-sudeikis-after-"
        "harry-styles-split/"
    )
    assert first.published == "2023-01-29"
    assert hits[1].snippet.startswith("Olivia Wilde is “quietly dating again”")
    assert hits[5].published is None  # the People timeline has no date
    assert (
        hits[8].url == "https://www.the-sun.com/entertainment/5221040/olivia-wildes-dating-history/"
    )
    assert hits[8].published == "2022-11-19"


def test_serper_empty_and_error_bodies() -> None:
    assert parse(Serper(), json.dumps({"searchParameters": {"q": "x"}})) == []
    with pytest.raises(EngineRateLimited, match="credits"):
        parse(Serper(), json.dumps({"message": "Not enough credits", "statusCode": 400}), 400)
    with pytest.raises(EngineError, match="Query is required"):
        parse(Serper(), json.dumps({"message": "Query is required", "statusCode": 400}), 400)


def test_serper_request() -> None:
    req = Serper().request(
        Query("olivia wilde", max_results=5, time_range="week", language="en-GB", page=2), KEY
    )
    assert (req.method, req.path) == ("POST", "/search")
    assert req.json == {
        "q": "olivia wilde",
        "num": 5,
        "page": 2,
        "tbs": "qdr:w",
        "hl": "en",
        "gl": "gb",
    }
    assert req.headers["X-API-KEY"] == KEY
    assert req.secrets == (KEY,)
    assert_secret_safe(req, KEY)
    assert req.params is None and KEY not in json.dumps(req.json)
    plain = Serper().request(Query("q"), KEY).json
    assert plain == {"q": "q", "num": 10}


# --- SerpApi --------------------------------------------------------------------------------------


def test_serpapi_modern_format() -> None:
    hits = parse(SerpApi(), fixture_bytes("serpapi/google_capital_of_france_2025.json"))
    assert [h.url for h in hits] == [
        "https://en.wikipedia.org/wiki/Paris",
        "https://home.adelphi.edu/~ca19535/page%204.html",
        "https://en.wikipedia.org/wiki/List_of_capitals_of_France",
    ]
    assert_clean(hits, "serpapi")
    assert hits[0].title == "Paris"
    assert hits[2].snippet == "The capital of France has been Paris since its liberation in 1944."


def test_serpapi_legacy_2018_format() -> None:
    hits = parse(SerpApi(), fixture_bytes("serpapi/google_coffee_2018_legacy.json"))
    assert len(hits) == 12  # organic results only: the local pack and knowledge graph are not
    assert_clean(hits, "serpapi")
    assert hits[0].title == "Portland Roasting Coffee"
    assert hits[0].snippet.endswith("FOLLOW US ON INSTAGRAM @pdxroasting ...")  # nbsp collapsed
    assert hits[1].published == "2017-09-20"
    assert hits[3].url == "http://www.publicdomaincoffee.com/"
    assert [h.published for h in hits if h.published] == ["2017-09-20", "2017-02-20", "2017-09-27"]


@pytest.mark.parametrize("status", [200, 429])
def test_serpapi_low_credit_error_is_rate_limited(status: int) -> None:
    with pytest.raises(EngineRateLimited, match="credit is too low"):
        parse(SerpApi(), fixture_bytes("serpapi/error_low_credit.json"), status)


def test_serpapi_other_errors() -> None:
    invalid = json.dumps(
        {
            "error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"
        }
    )
    with pytest.raises(EngineAuthError):
        parse(SerpApi(), invalid, 401)
    with pytest.raises(EngineError, match="Unsupported"):
        parse(SerpApi(), json.dumps({"error": "Unsupported `xx` location"}), 400)
    nothing = {
        "search_metadata": {"status": "Success"},
        "error": "Google hasn't returned any results for this query.",
    }
    assert parse(SerpApi(), json.dumps(nothing)) == []


def test_serpapi_request_puts_the_key_only_in_params() -> None:
    req = SerpApi().request(Query("coffee", time_range="year", language="fr-CA", page=3), KEY)
    assert (req.method, req.path) == ("GET", "/search.json")
    assert req.params == {
        "engine": "google",
        "q": "coffee",
        "num": 10,
        "start": 20,
        "tbs": "qdr:y",
        "hl": "fr",
        "gl": "ca",
        "api_key": KEY,
    }
    assert req.secrets == (KEY,)
    assert all(KEY not in value for value in req.headers.values())
    assert req.json is None
    assert_secret_safe(req, KEY)


# --- Google Programmable Search -------------------------------------------------------------------


def test_google_cse_recorded_search() -> None:
    hits = parse(GoogleCSE(), fixture_bytes("google_cse/web_search_youtube.json"))
    assert len(hits) == 10
    assert_clean(hits, "google_cse")
    assert hits[0].title == "YouTube - Home | Facebook"
    assert hits[0].snippet.startswith("YouTube. 86434294 likes · 122218 talking about this.")
    assert hits[2].url == "https://www.google.com/ads/video"
    gambino = hits[3]
    assert gambino.title == "Childish Gambino - This Is America (Official Video) - YouTube"
    assert gambino.published == "2018-05-05"  # pagemap videoobject upload date
    assert gambino.snippet.startswith('"This Is America" by Childish Gambino')  # date cut off
    # Google wraps its snippets: after a space, or inside a long link, which is joined again.
    assert "https://ChildishGambino.lnk.to/listenYDWatch" in gambino.snippet
    assert hits[0].snippet.endswith("greatest music videos, trends and channels from YouTube.")
    assert [h.published for h in hits] == [
        None,
        None,
        None,
        "2018-05-05",
        None,
        "2020-04-10",
        None,
        None,
        "2018-04-06",
        "2017-05-22",
    ]
    assert hits[5].snippet.startswith("Coachella: 20 Years in the Desert")


def test_google_cse_marketing_redirect_links_name_the_page_they_lead_to() -> None:
    # Recorded: "YouTube - Home | Facebook" at https://www.google.com/appserve/mkt/p/AM7k...,
    # a Google redirect; the page it leads to is in the item's own `pagemap` (og:url).
    hits = parse(GoogleCSE(), fixture_bytes("google_cse/web_search_youtube.json"))
    assert hits[0].url == "https://www.facebook.com/youtube/"
    assert hits[3].url == "https://www.youtube.com/watch?v=VYOjWnS4cMY"  # This Is America
    assert not any("/appserve/mkt/" in h.url and h.url != hits[1].url for h in hits)
    # A pagemap that is not what Google sends keeps the link.
    pagemap: object
    for pagemap in (
        {"metatags": "x"},
        {"metatags": [1]},
        [],
        {"metatags": [{"og:url": "ftp://x"}]},
    ):
        item: dict[str, object] = {"title": "T", "link": hits[1].url, "pagemap": pagemap}
        [hit] = parse(GoogleCSE(), json.dumps({"items": [item]}).encode())
        assert hit.url == hits[1].url


def test_google_cse_snippet_date_without_pagemap() -> None:
    body = {
        "items": [{"title": "T", "link": "https://a.example/", "snippet": "Mar 3, 2021 ... Text"}]
    }
    [hit] = parse(GoogleCSE(), json.dumps(body))
    assert (hit.published, hit.snippet) == ("2021-03-03", "Text")


@pytest.mark.parametrize("age", ["3 days ago", "1 hour ago", "7 hours ago"])
def test_google_cse_snippet_age_is_taken_off(age: str) -> None:
    body = {"items": [{"title": "T", "link": "https://a.example/", "snippet": f"{age} ... Text"}]}
    [hit] = parse(GoogleCSE(), json.dumps(body))
    assert (hit.published, hit.snippet) == (None, "Text")


@pytest.mark.parametrize("value", [["a", "b"], {"value": "x y"}, True, 12345])
def test_google_cse_snippet_of_another_type_is_no_snippet(value: object) -> None:
    body = fixture_bytes("google_cse/web_search_youtube.json")
    assert_read_as_missing(GoogleCSE(), body, ("items", 0, "snippet"), value, Query("q"))


def test_google_cse_no_items_is_empty() -> None:
    body = {"kind": "customsearch#search", "searchInformation": {"totalResults": "0"}}
    assert parse(GoogleCSE(), json.dumps(body)) == []


def test_google_cse_errors() -> None:
    # A quota however Google words it: RESOURCE_EXHAUSTED whatever the status and message, or a
    # daily limit's reason.
    cases: list[tuple[int, str, dict[str, Any]]] = [
        (429, "Quota exceeded for quota metric 'Queries'", {"status": "RESOURCE_EXHAUSTED"}),
        (403, "This API requires billing", {"errors": [{"reason": "dailyLimitExceeded"}]}),
        (403, "Queries per day for this project were used up", {"status": "RESOURCE_EXHAUSTED"}),
    ]
    for code, message, more in cases:
        body = {"error": {"code": code, "message": message, **more}}
        with pytest.raises(EngineRateLimited):
            parse(GoogleCSE(), json.dumps(body), code)
    bad_key = {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
        }
    }
    with pytest.raises(EngineAuthError):
        parse(GoogleCSE(), json.dumps(bad_key), 400)
    with pytest.raises(EngineError, match="Invalid Value"):
        parse(GoogleCSE(), json.dumps({"error": {"code": 400, "message": "Invalid Value"}}), 400)


def test_google_cse_credentials_are_cx_key_pairs() -> None:
    assert split_credential("9bc67f2b2ef848ce2:AIzaKEY") == ("9bc67f2b2ef848ce2", "AIzaKEY")
    # Old-style engine ids contain a colon: the key is after the last one.
    assert split_credential("017576662512468239146:omuauf_lfve:AIzaKEY") == (
        "017576662512468239146:omuauf_lfve",
        "AIzaKEY",
    )
    for bad in ("AIzaKEYwithoutcx", ":AIzaKEY", "cx:"):
        with pytest.raises(EngineAuthError) as caught:
            split_credential(bad)
        assert "AIzaKEY" not in str(caught.value)


def test_google_cse_request_puts_the_key_only_in_params() -> None:
    entry = f"9bc67f2b2ef848ce2:{KEY}"
    req = GoogleCSE().request(Query("youtube", time_range="day", language="zh-TW", page=2), entry)
    assert (req.method, req.path) == ("GET", "/customsearch/v1")
    assert req.params == {
        "key": KEY,
        "cx": "9bc67f2b2ef848ce2",
        "q": "youtube",
        "num": 10,
        "start": 11,
        "dateRestrict": "d1",
        "hl": "zh-TW",
        "lr": "lang_zh-TW",
    }
    assert KEY in req.secrets and entry in req.secrets
    assert all(KEY not in value for value in req.headers.values())
    assert_secret_safe(req, KEY)
    ranges = {
        r: params_of(GoogleCSE().request(Query("q", time_range=r), entry))["dateRestrict"]
        for r in ("day", "week", "month", "year")
    }
    assert ranges == {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}
    assert params_of(GoogleCSE().request(Query("q", max_results=50), entry))["num"] == 10


# --- Jina -----------------------------------------------------------------------------------------


def test_jina_documented_search() -> None:
    hits = parse(Jina(), fixture_bytes("jina/docs_search_example_abridged.json"))
    assert [(h.title, h.url) for h in hits] == [
        ("Jina AI - Your Search Foundation, Supercharged.", "https://jina.ai/"),
        (
            "Jina AI CEO, Founder, Key Executive Team, Board of Directors & Employees",
            "https://www.cbinsights.com/company/jina-ai/people",
        ),
    ]
    assert_clean(hits, "jina")
    assert hits[0].snippet.startswith("Our frontier models form the search foundation")


@pytest.mark.parametrize("value", [["a", "b"], {"value": "x y"}, True, 12345])
def test_jina_description_of_another_type_is_read_as_missing(value: object) -> None:
    body = fixture_bytes("jina/docs_search_example_abridged.json")
    assert_read_as_missing(Jina(), body, ("data", 0, "description"), value, Query("q"))


def test_jina_dates_empty_and_errors() -> None:
    body = {
        "code": 200,
        "data": [
            {
                "title": "A",
                "url": "https://a.example/",
                "description": "d",
                "publishedTime": "2025-02-03T10:00:00.000Z",
            }
        ],
    }
    [hit] = parse(Jina(), json.dumps(body))
    assert hit.published == "2025-02-03"
    assert parse(Jina(), json.dumps({"code": 200, "status": 20000, "data": []})) == []
    assert parse(Jina(), json.dumps({"code": 200, "status": 20000, "data": None})) == []
    with pytest.raises(EngineRateLimited):
        parse(Jina(), json.dumps({"code": 402, "name": "InsufficientBalanceError"}), 402)


def test_jina_request() -> None:
    req = Jina().request(Query("when was jina founded", max_results=5, language="de", page=2), KEY)
    assert (req.method, req.path) == ("POST", "/")
    assert req.json == {"q": "when was jina founded", "num": 5, "page": 2, "hl": "de"}
    assert req.headers["Accept"] == "application/json"
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.headers["X-Respond-With"] == "no-content"
    assert req.secrets == (KEY,)
    assert_secret_safe(req, KEY)


# --- Google (scraped) -----------------------------------------------------------------------------

# Hand-made from Google's result markup (no recorded page exists): `div.g` blocks whose title is
# an `a` around an `h3`, `/url?q=` redirect links as the basic page serves them, a snippet with a
# "Mar 3, 2020 — " date, a nested `div.g`, and a link to Google's own search.
GOOGLE_PAGE = """<!DOCTYPE html><html><body><div id="search"><div id="rso">
<div class="g"><div><a href="/url?q=https://docs.python.org/3/library/asyncio.html&amp;sa=U&amp;ved=x">
<h3>asyncio — Asynchronous I/O</h3><cite>docs.python.org</cite></a></div>
<div class="VwiC3b">Mar 3, 2020 — asyncio is a library to write <em>concurrent</em> code.</div>
<div class="g"><a href="https://nested.example/"><h3>Nested block</h3></a></div></div>
<div class="g"><a href="https://realpython.com/async-io-python/"><h3>Async IO in Python</h3></a>
<div class="VwiC3b">A walkthrough &amp; examples.</div></div>
<div class="g"><a href="/search?q=related"><h3>People also search for</h3></a></div>
<div class="g"><a href="https://realpython.com/async-io-python/"><h3>Duplicate</h3></a></div>
</div></div></body></html>"""


def test_google_hand_made_results_page() -> None:
    hits = parse(Google(), GOOGLE_PAGE)
    assert_clean(hits, "google")
    assert [h.url for h in hits] == [
        "https://docs.python.org/3/library/asyncio.html",
        "https://realpython.com/async-io-python/",
    ]
    assert hits[0].title == "asyncio — Asynchronous I/O"
    assert hits[0].published == "2020-03-03"
    assert hits[0].snippet == "asyncio is a library to write concurrent code."
    assert hits[1].snippet == "A walkthrough & examples."


def test_google_result_url() -> None:
    assert result_url("/url?q=https://a.example/x%3Fy%3D1&sa=U") == "https://a.example/x?y=1"
    assert result_url("/url?url=https://b.example/&sa=U") == "https://b.example/"
    assert result_url("https://www.google.com/search?q=x") is None
    assert result_url("/search?q=x") is None
    assert result_url("https://c.example/") == "https://c.example/"


def test_google_consent_and_captcha_are_blocked() -> None:
    with pytest.raises(EngineBlocked, match="consent"):
        parse(Google(), "", 302, location="https://consent.google.com/ml?continue=x")
    with pytest.raises(EngineBlocked, match="consent"):
        Google().hits(resp("<html></html>", url="https://consent.google.com/ml?x=1"), Query("q"))
    consent = '<html><body><form action="https://consent.google.com/save" method="POST"></form>'
    with pytest.raises(EngineBlocked, match="consent"):
        parse(Google(), consent)
    sorry = (
        '<html><body><div id="captcha-form">Our systems have detected unusual traffic from your'
        " computer network.</div></body></html>"
    )
    with pytest.raises(EngineBlocked, match="unusual traffic"):
        parse(Google(), sorry, 429)
    with pytest.raises(EngineBlocked):
        Google().hits(
            resp("<html></html>", url="https://www.google.com/sorry/index?q=x"), Query("q")
        )


def test_google_query_about_unusual_traffic_is_not_a_block() -> None:
    page = GOOGLE_PAGE.replace("A walkthrough", "unusual traffic from your computer network")
    assert len(parse(Google(), page)) == 2
    # The page repeats the query, in its title and its search box.
    asked = "google /sorry/index captcha-form"
    echo = f'<title>{asked}</title><input value="{asked}" id="q">'
    page = GOOGLE_PAGE.replace("<body>", f"<body>{echo}", 1)
    assert echo in page and len(parse(Google(), page, query=Query(asked))) == 2


def test_google_empty_and_unknown_pages() -> None:
    assert (
        parse(Google(), "<html><body><p>Your search - zzqx - did not match any documents.</p>")
        == []
    )
    assert parse(Google(), '<html><body><div id="search"></div></body></html>') == []
    with pytest.raises(EngineParseError):
        parse(Google(), "<html><body><p>Something else</p></body></html>")


def test_google_request() -> None:
    req = Google().request(Query("asyncio", page=2, time_range="month", language="ja"), None)
    assert (req.method, req.path) == ("GET", "/search")
    assert req.params == {
        "q": "asyncio",
        "ie": "utf8",
        "oe": "utf8",
        "start": 10,
        "tbs": "qdr:m",
        "hl": "ja",
        "lr": "lang_ja",
    }
    assert Google().request(Query("q"), None).params == {"q": "q", "ie": "utf8", "oe": "utf8"}


@pytest.mark.parametrize("category", ["general", "news"])
def test_a_query_past_braves_and_tavilys_bounds_is_sent_as_its_first_words(
    category: Category,
) -> None:
    # Brave: "Maximum of 400 characters and 50 words"; Tavily refuses a query over 400
    # characters. A query the tools accept (500 characters) would fail the search there.
    many = " ".join(f"w{n}" for n in range(62))
    brave = params_of(Brave().request(Query(many, category=category), "k"))["q"]
    assert brave == " ".join(many.split()[:50])
    long = " ".join(f"climate{n}" for n in range(62))[:500]
    for sent in (
        params_of(Brave().request(Query(long, category=category), "k"))["q"],
        (Tavily().request(Query(long), "k").json or {})["query"],
    ):
        assert len(sent) <= 400 and long.startswith(sent) and long[len(sent)] == " "
    # Within the bounds, the query is sent as written.
    assert params_of(Brave().request(Query("python  asyncio"), "k"))["q"] == "python  asyncio"
    assert params_of(Brave().request(Query("x" * 450), "k"))["q"] == "x" * 400


def test_a_query_cut_inside_a_quoted_phrase_is_sent_without_its_open_quote() -> None:
    # An open quote would make the engine read the rest as one phrase, or refuse the query.
    phrase = " ".join(f"w{n}" for n in range(60))
    sent = params_of(Brave().request(Query(f'a b "{phrase}" c'), "k"))["q"]
    assert sent == "a b " + " ".join(phrase.split()[:48])
    closed = " ".join(f"w{n}" for n in range(45))
    sent = params_of(Brave().request(Query(f'"a b" {closed} "c d e f g h i j"'), "k"))["q"]
    assert sent == f'"a b" {closed} c d e'
    # A lone quote the query had (an inch mark) is the engine's to read; a query is never empty.
    inches = params_of(Brave().request(Query(f'27" monitor {closed} x y z w'), "k"))["q"]
    assert inches.startswith('27" monitor ')
    assert params_of(Brave().request(Query('" ' + "x" * 450), "k"))["q"]
    # An inch mark later in the query does not keep a phrase's open quote.
    assert fitted('say "hello world" to a 12" record', 400, 2) == "say hello"
