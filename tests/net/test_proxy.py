"""Proxies: which one each engine uses, and that requests really go through it.

The proxies (`testing.proxies`) run on 127.0.0.1 and count what passes through them.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from testing.fake_engines import FakeEngines, ResultsFn, serve_fake_engines
from testing.proxies import CountingProxy, CountingSocks, NotSocks, RefusingProxy
from testing.resilience_helpers import settings_for, statuses, web_search
from testing.serving import serve_app
from testing.wire_formats import wikipedia_result
from websearch_mcp.config import EngineSettings, Settings
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import HttpRequest, Query
from websearch_mcp.net.http import USER_AGENT, bypasses_proxy, choose_proxy
from websearch_mcp.net.useragents import BROWSER_USER_AGENTS, UserAgentRotation
from websearch_mcp.search.engine_call import EngineRun, with_user_agent
from websearch_mcp.search.fan_out import FanOut, Orchestrator
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app

PROXY = "http://proxy.corp:3128"


def results_for(engine: str, query: str) -> list[dict[str, Any]]:
    if engine == "wikipedia":
        return [wikipedia_result("Proxy server", f"{query} explained")]
    return [{"title": f"{query} ({engine})", "url": f"https://{engine}.example/", "snippet": query}]


@pytest.fixture
def engine_results() -> ResultsFn:
    return results_for


@pytest.fixture
def proxy() -> Iterator[CountingProxy]:
    with CountingProxy() as running:
        yield running


async def search(
    settings: Settings, environ: dict[str, str] | None = None, query: str = "proxy server"
) -> FanOut:
    orchestrator = Orchestrator(settings, environ=environ or {})
    try:
        runs, skipped = orchestrator.choose("web", None)
        fan = await orchestrator.fan_out(Query(query), runs, settings.search.deadline_seconds)
        return FanOut(fan.lists, fan.reports + skipped)
    finally:
        await orchestrator.close()


def status_of(fan: FanOut) -> dict[str, str]:
    return {r.name: r.status for r in fan.reports}


# --- choosing a proxy ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "engine", "configured", "no_proxy", "environ", "expected"),
    [
        ("https://api.tavily.com", None, None, [], {}, None),
        ("https://api.tavily.com", None, PROXY, [], {}, PROXY),
        ("https://api.tavily.com", None, PROXY, [], {"HTTPS_PROXY": "http://e:1"}, PROXY),
        ("https://api.tavily.com", "socks5://s:1080", PROXY, [], {}, "socks5://s:1080"),
        ("https://api.tavily.com", False, PROXY, [], {"HTTPS_PROXY": PROXY}, None),
        ("https://api.tavily.com", None, PROXY, ["tavily.com"], {}, None),
        ("https://api.tavily.com", None, PROXY, [], {"NO_PROXY": ".tavily.com"}, None),
        ("https://api.tavily.com", None, PROXY, [], {"no_proxy": "*"}, None),
        ("https://api.tavily.com", None, None, [], {"HTTPS_PROXY": "http://e:1"}, "http://e:1"),
        ("https://api.tavily.com", None, None, [], {"https_proxy": "e:2"}, "http://e:2"),
        (
            "https://api.tavily.com",
            None,
            None,
            [],
            {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1"},
            "http://lower:1",
        ),
        ("https://api.tavily.com", None, None, [], {"HTTP_PROXY": "http://e:1"}, None),
        ("http://127.0.0.1:8080", None, None, [], {"HTTP_PROXY": "http://e:1"}, "http://e:1"),
        ("http://10.0.0.5:8080", None, None, [], {"ALL_PROXY": "socks5://e:3"}, "socks5://e:3"),
        (
            "https://api.tavily.com",
            None,
            None,
            [],
            {"HTTPS_PROXY": "http://e:1", "ALL_PROXY": "http://a:1"},
            "http://e:1",
        ),
        (
            "https://search.internal:8443",
            None,
            None,
            [],
            {"ALL_PROXY": "http://a:1", "NO_PROXY": "example.org, internal"},
            None,
        ),
    ],
)
def test_choose_proxy(
    url: str,
    engine: Any,
    configured: str | None,
    no_proxy: list[str],
    environ: dict[str, str],
    expected: str | None,
) -> None:
    assert choose_proxy(url, engine, configured, no_proxy, environ) == expected


def test_no_proxy_matches_whole_domain_labels() -> None:
    assert bypasses_proxy("https://docs.example.com/x", ["example.com"])
    assert not bypasses_proxy("https://notexample.com/x", ["example.com"])
    assert bypasses_proxy("http://127.0.0.1:8080/", ["127.0.0.1"])
    assert not bypasses_proxy("http://127.0.0.1:8080/", [])
    # An entry with a port exempts that port only.
    assert bypasses_proxy("https://search.internal:8443/", ["internal:8443"])
    assert not bypasses_proxy("https://search.internal/", ["internal:8443"])
    # Networks, as curl, requests and Go read them (a self-hosted SearXNG on 10.1.2.3).
    assert bypasses_proxy("http://10.1.2.3:8080/", ["corp", "10.0.0.0/8"])
    assert bypasses_proxy("http://[fd00::5]/", ["fd00::/8"])
    assert not bypasses_proxy("http://11.1.2.3/", ["10.0.0.0/8", "not/a-network"])
    assert not bypasses_proxy("http://ten.example/", ["10.0.0.0/8"])


# --- requests through the proxy ------------------------------------------------------------------


def test_proxy_url_carries_every_engine_request_through_mcp(
    fake: FakeEngines, engines_url: str, proxy: CountingProxy
) -> None:
    settings = settings_for(
        engines_url, {"searxng": {}, "wikipedia": {}}, top={"proxy": {"url": proxy.url}}
    )
    with serve_app(create_app(settings, SearchService(settings))) as url:
        answer = web_search(url, "proxy server")["structuredContent"]
    assert statuses(answer) == {"searxng": "ok", "wikipedia": "ok"}
    assert proxy.forwarded == {urlsplit(engines_url).netloc: 2}
    assert fake.counts == {"searxng": 1, "wikipedia": 1}


async def test_per_engine_override_and_direct(
    fake: FakeEngines, engines_url: str, proxy: CountingProxy
) -> None:
    with CountingProxy() as other:
        settings = settings_for(
            engines_url,
            {"searxng": {"proxy": other.url}, "wikipedia": {"proxy": False}, "bing": {}},
            top={"proxy": {"url": proxy.url}},
        )
        fan = await search(settings)
    assert status_of(fan) == {"searxng": "ok", "wikipedia": "ok", "bing": "ok"}
    netloc = urlsplit(engines_url).netloc
    assert other.forwarded == {netloc: 1}  # searxng
    assert proxy.forwarded == {netloc: 1}  # bing
    assert fake.counts == {"searxng": 1, "wikipedia": 1, "bing": 1}  # wikipedia went direct


async def test_standard_environment_variables(
    fake: FakeEngines, engines_url: str, proxy: CountingProxy
) -> None:
    settings = settings_for(engines_url, {"searxng": {}})
    fan = await search(settings, {"HTTP_PROXY": proxy.url})
    assert status_of(fan) == {"searxng": "ok"} and sum(proxy.forwarded.values()) == 1
    fan = await search(settings, {"ALL_PROXY": proxy.url})
    assert status_of(fan) == {"searxng": "ok"} and sum(proxy.forwarded.values()) == 2
    fan = await search(settings, {"HTTP_PROXY": proxy.url, "NO_PROXY": "localhost,127.0.0.1"})
    assert status_of(fan) == {"searxng": "ok"} and sum(proxy.forwarded.values()) == 2
    exempt = settings_for(
        engines_url, {"searxng": {}}, top={"proxy": {"url": proxy.url, "no_proxy": ["127.0.0.1"]}}
    )
    fan = await search(exempt)
    assert status_of(fan) == {"searxng": "ok"} and sum(proxy.forwarded.values()) == 2
    assert fake.counts["searxng"] == 4


async def test_https_goes_through_a_connect_tunnel(
    fake: FakeEngines, proxy: CountingProxy, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("cryptography")
    from testing.fetch_helpers import tls_files

    cert, key = tls_files(tmp_path, "localhost")
    monkeypatch.setenv("SSL_CERT_FILE", cert)  # the clients trust the test's own certificate
    with serve_fake_engines(fake, tls=(cert, key)) as base:
        settings = settings_for(base, {"searxng": {}, "wikipedia": {}})
        fan = await search(settings, {"HTTPS_PROXY": proxy.url})
    assert status_of(fan) == {"searxng": "ok", "wikipedia": "ok"}
    assert list(proxy.tunnels) == [urlsplit(base).netloc]
    assert not proxy.forwarded
    assert fake.counts == {"searxng": 1, "wikipedia": 1}


async def test_proxy_credentials_in_the_url_are_sent_to_the_proxy(
    fake: FakeEngines, engines_url: str, proxy: CountingProxy
) -> None:
    with_login = proxy.url.replace("http://", "http://user:p%40ss@")
    settings = settings_for(engines_url, {"searxng": {"proxy": with_login}})
    fan = await search(settings)
    assert status_of(fan) == {"searxng": "ok"}
    assert proxy.credentials == ["Basic " + base64.b64encode(b"user:p@ss").decode()]


async def test_socks5_logins_in_the_url_are_sent_decoded(
    fake: FakeEngines, engines_url: str
) -> None:
    with CountingSocks() as socks:
        login = socks.url.replace("http://", "socks5://us%40er:p%40ss@")
        fan = await search(settings_for(engines_url, {"searxng": {"proxy": login}}))
    assert status_of(fan) == {"searxng": "ok"}
    assert socks.credentials == ["us@er:p@ss"]


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
async def test_socks5_proxy_carries_engine_requests(
    fake: FakeEngines, engines_url: str, scheme: str
) -> None:
    # The engines reached by name: `socks5h` has the proxy resolve it, `socks5` resolves it here.
    named = engines_url.replace("127.0.0.1", "localhost")
    with CountingSocks() as socks:
        proxy_url = socks.url.replace("http://", f"{scheme}://")
        settings = settings_for(
            named, {"searxng": {}, "wikipedia": {}}, top={"proxy": {"url": proxy_url}}
        )
        fan = await search(settings)
    assert status_of(fan) == {"searxng": "ok", "wikipedia": "ok"}
    # One connection each (kept alive otherwise), to the address the client asked for.
    asked = urlsplit(named if scheme == "socks5h" else engines_url).netloc
    assert socks.tunnels == {asked: 2}
    assert fake.counts == {"searxng": 1, "wikipedia": 1}


async def test_a_socks_proxy_that_fails_is_a_connection_failure(
    engines_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """aiohttp_socks raises its own errors, not aiohttp's: a proxy that speaks no SOCKS was
    reported as "unexpected ProxyError", and logged as a parser's bug is."""
    with NotSocks() as proxy, caplog.at_level(logging.WARNING):
        fan = await search(settings_for(engines_url, {"searxng": {"proxy": proxy.url}}))
    [report] = fan.reports
    assert (report.status, report.error) == ("error", "connection failed (the proxy failed)")
    assert not [r for r in caplog.records if "raised" in r.getMessage()]


@pytest.mark.parametrize("status", [407, 502])
async def test_a_tunnel_the_proxy_refuses_says_what_it_answered(status: int) -> None:
    """A proxy refusing CONNECT (a login it wants, an origin it cannot reach) showed only as
    "connection failed (ClientHttpProxyError)"."""
    with RefusingProxy(status) as proxy:
        engines = {"searxng": {"base_url": "https://127.0.0.1:9", "proxy": proxy.url}}
        fan = await search(settings_for(None, engines))
    [report] = fan.reports
    assert (report.status, report.error) == (
        "error",
        f"connection failed (the proxy refused the tunnel: HTTP {status})",
    )


async def test_engines_needing_a_proxy_join_a_restricted_network_only_with_one(
    fake: FakeEngines, engines_url: str, proxy: CountingProxy
) -> None:
    engines: dict[str, dict[str, Any]] = {"duckduckgo": {}, "searxng": {}}
    restricted = settings_for(engines_url, engines, top={"network": "restricted"})
    fan = await search(restricted)
    ddg = next(r for r in fan.reports if r.name == "duckduckgo")
    assert (ddg.status, ddg.error) == (
        "skipped",
        "needs a proxy on this restricted network (set proxy.url or engines.duckduckgo.proxy)",
    )
    assert fake.counts == {"searxng": 1}
    with_proxy = settings_for(
        engines_url,
        {"duckduckgo": {"proxy": proxy.url}, "searxng": {"proxy": False}},
        top={"network": "restricted"},
    )
    fan = await search(with_proxy)
    assert status_of(fan) == {"duckduckgo": "ok", "searxng": "ok"}
    assert proxy.forwarded == {urlsplit(engines_url).netloc: 1}
    fan = await search(settings_for(engines_url, engines))  # an open network needs none
    assert status_of(fan) == {"duckduckgo": "ok", "searxng": "ok"}
    assert fake.counts == {"duckduckgo": 2, "searxng": 3}


async def test_scraped_engines_rotate_browser_user_agents(
    fake: FakeEngines, engines_url: str
) -> None:
    settings = settings_for(engines_url, {"bing": {}, "searxng": {}})
    orchestrator = Orchestrator(settings, environ={})
    agents = []
    try:
        runs, _ = orchestrator.choose("web", None)
        for _ in range(3):
            await orchestrator.fan_out(Query("proxy"), runs, 2)
            agents.append(fake.last["bing"].headers["user-agent"])
            assert fake.last["searxng"].headers["user-agent"] == USER_AGENT  # an API
    finally:
        await orchestrator.close()
    assert all(agent in BROWSER_USER_AGENTS for agent in agents)
    assert len(set(agents)) == 3


def test_a_scraped_engines_own_user_agent_is_kept() -> None:
    """The rotation gives a scraped engine's request a browser User-Agent only when it has none:
    a User-Agent the engine sets itself (in any case) goes out as it is."""
    run = EngineRun(
        engine=ENGINES["bing"](),
        settings=EngineSettings(),
        base_url="http://127.0.0.1:9",
        timeout=1.0,
        enabled=True,
    )
    assert run.engine.scraped
    agents = UserAgentRotation()
    own = HttpRequest("GET", "/search", headers={"user-agent": "Own/1.0", "Accept": "text/html"})
    assert with_user_agent(run, own, agents).headers == own.headers
    plain = HttpRequest("GET", "/search", headers={"Accept": "text/html"})
    rotated = with_user_agent(run, plain, agents).headers
    assert rotated["Accept"] == "text/html" and rotated["User-Agent"] in BROWSER_USER_AGENTS


@pytest.mark.parametrize(
    ("no_proxy", "environ"),
    [(["*"], {"NO_PROXY": "localhost"}), (["search.example"], {"no_proxy": "*"})],
)
async def test_a_star_exempts_every_host_beside_the_other_list(
    fake: FakeEngines,
    engines_url: str,
    proxy: CountingProxy,
    no_proxy: list[str],
    environ: dict[str, str],
) -> None:
    """`*` in `proxy.no_proxy` or in `NO_PROXY` reaches every engine directly, whatever the
    other list holds."""
    settings = settings_for(
        engines_url, {"searxng": {}}, top={"proxy": {"url": proxy.url, "no_proxy": no_proxy}}
    )
    fan = await search(settings, environ)
    assert status_of(fan) == {"searxng": "ok"}
    assert not proxy.forwarded
    assert fake.counts == {"searxng": 1}
