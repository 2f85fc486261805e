"""Auth, Host/Origin checks, limits and exposure: units, then real uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from testing.fake_engines import FakeEngines, Fault
from testing.server_helpers import (
    MCP_HEADERS,
    TOOLS_LIST,
    bearer,
    settings_for,
    tool_call,
)
from testing.serving import serve_app
from websearch_mcp.cli import main as cli_main
from websearch_mcp.config.patterns import parse_host_pattern, parse_origin_pattern
from websearch_mcp.errors import ConfigError, ToolInputError
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app
from websearch_mcp.server.argument_checks import check_query_length
from websearch_mcp.server.middleware.auth import (
    TokenAuth,
    client_address,
    limit_key,
    parse_networks,
)
from websearch_mcp.server.middleware.exposure import is_loopback
from websearch_mcp.server.middleware.origin_host import OriginPolicy
from websearch_mcp.server.middleware.rate_limits import ConcurrencyLimiter, RateLimiter

TOKEN = "tok-alpha-0123456789abcdef"
OTHER = "tok-beta-0123456789abcdef0"

# --- units ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("search.example.com", False),
        # A name that merely begins with "localhost" resolves wherever its DNS says.
        ("localhost.search.example.com", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_host_policy_defaults_allow_only_loopback_names() -> None:
    policy = OriginPolicy([], [])
    for host in ("127.0.0.1:8338", "localhost:8338", "[::1]:8338", "localhost", "LOCALHOST:1"):
        assert policy.host_allowed(host), host
    others = ("evil.example:8338", "127.0.0.1.evil.example", "10.0.0.5:8338", "", None, "[::1")
    for other in (*others, "[::1]x8338", "localhost:http"):
        assert not policy.host_allowed(other), other


def test_host_patterns() -> None:
    policy = OriginPolicy(["search.example.com", "*.corp.example:*", "10.0.0.5:8338"], [])
    assert policy.host_allowed("search.example.com")
    assert not policy.host_allowed("search.example.com:8080")  # no port in the pattern
    assert policy.host_allowed("a.corp.example:443") and policy.host_allowed("a.b.corp.example")
    assert not policy.host_allowed("corp.example")  # the wildcard needs a subdomain
    assert not policy.host_allowed("evilcorp.example")
    assert policy.host_allowed("10.0.0.5:8338") and not policy.host_allowed("10.0.0.5:9000")
    assert OriginPolicy(["*"], []).host_allowed("anything.at.all:1")


def test_origin_policy() -> None:
    policy = OriginPolicy([], ["https://*.example.com", "https://app.example.org:8443"])
    assert policy.origin_allowed(None)  # not a browser
    assert policy.origin_allowed("http://localhost:3000")
    assert policy.origin_allowed("http://127.0.0.1:8338")
    assert policy.origin_allowed("https://app.example.com")
    assert policy.origin_allowed("https://a.b.example.com")
    assert not policy.origin_allowed("http://app.example.com")  # scheme differs
    assert not policy.origin_allowed("https://app.example.com:8443")  # port not in the pattern
    assert not policy.origin_allowed("https://example.com.evil.net")
    assert not policy.origin_allowed("https://evilexample.com")
    assert policy.origin_allowed("https://app.example.org:8443")
    assert not policy.origin_allowed("https://app.example.org")
    assert not policy.origin_allowed("null")
    assert not policy.origin_allowed("https://evil.example")
    assert not policy.origin_allowed("http://localhost:3000/page")  # an origin has no path
    assert not policy.origin_allowed("http://localhost:3000?x=1")


ORIGIN_PATTERNS = [
    "https://*.example.com",
    "https://app.example.org:8443",
    "http://intranet:*",
    "https://*:*",
    "http://[2001:db8::1]:*",
]


@given(
    scheme=st.sampled_from(["http", "https", "chrome-extension"]),
    host=st.sampled_from(
        [
            "localhost",
            "127.0.0.1",
            "[::1]",
            "[2001:db8::1]",
            "app.example.com",
            "a.b.Example.com",
            "example.com",
            "evilexample.com",
            "example.com.evil.net",
            "app.example.org",
            "intranet",
            "intranet.evil",
        ]
    ),
    port=st.sampled_from(["", ":80", ":443", ":3000", ":8443"]),
    tail=st.sampled_from(["", "/", "/page", "?x=1"]),
    patterns=st.lists(st.sampled_from([*ORIGIN_PATTERNS, "*"]), max_size=3),
)
def test_the_cors_origin_regex_allows_exactly_the_allowed_origins(
    scheme: str, host: str, port: str, tail: str, patterns: list[str]
) -> None:
    # Starlette's CORS middleware reads the allowed origins as one expression; `Guard` decides
    # with the policy itself. A browser may read an answer only where the request is allowed.
    policy = OriginPolicy([], patterns)
    origin = f"{scheme}://{host}{port}{tail}"
    allowed = re.fullmatch(policy.origin_regex(), origin) is not None
    assert allowed == policy.origin_allowed(origin), (origin, patterns)
    assert re.fullmatch(policy.origin_regex(), "null") is None


@pytest.mark.parametrize(
    "pattern", ["example.com/path", "ftp://x.example", "https://a.*.example.com", "https://"]
)
def test_bad_origin_patterns_are_config_errors(pattern: str) -> None:
    with pytest.raises(ConfigError, match=r"server\.allowed_origins"):
        parse_config({"server": {"allowed_origins": [pattern]}}, "conf.yaml", environ={})


@pytest.mark.parametrize(
    "pattern",
    ["a:b:c:d", "search.example.com:http", "[evil.example]", "[::1]x80", "*.ex*ample.com", "a.*.b"],
)
def test_bad_host_patterns_are_config_errors(pattern: str) -> None:
    # Each item is checked, not only the first, and the message names the bad one.
    hosts = ["search.example.com", pattern]
    with pytest.raises(
        ConfigError, match=rf"server\.allowed_hosts: Value error, {re.escape(repr(pattern))}"
    ):
        parse_config({"server": {"allowed_hosts": hosts}}, "conf.yaml", environ={})


def test_bad_host_and_proxy_settings_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"server\.allowed_hosts"):
        parse_config({"server": {"allowed_hosts": ["a:b:c:d"]}}, "conf.yaml", environ={})
    with pytest.raises(ConfigError, match=r"server\.trusted_proxies.*CIDR"):
        parse_config({"server": {"trusted_proxies": ["proxy.local"]}}, "conf.yaml", environ={})
    assert parse_host_pattern("[::1]:*").host == "::1"
    # A network is taken with its host bits set, as an operator copies it from `ip addr`.
    proxies = ["192.168.1.5/24"]
    settings = parse_config({"server": {"trusted_proxies": proxies}}, "conf.yaml", environ={})
    assert settings.server.trusted_proxies == proxies
    assert parse_origin_pattern("HTTPS://App.Example.com").host == "app.example.com"


def test_tokens_from_environment_and_never_echoed() -> None:
    settings = parse_config({}, "test", environ={"WEBSEARCH_MCP_TOKENS": f"{TOKEN}, {OTHER}"})
    assert settings.server.auth_tokens == [TOKEN, OTHER]
    settings = parse_config(
        {}, "test", environ={"WEBSEARCH_MCP_SERVER__ALLOWED_HOSTS": "a.example.com,b.example.com"}
    )
    assert settings.server.allowed_hosts == ["a.example.com", "b.example.com"]
    with pytest.raises(ConfigError) as caught:
        parse_config({"server": {"auth_tokens": {"nested": TOKEN}}}, "conf.yaml", environ={})
    assert TOKEN not in str(caught.value)
    assert TOKEN not in repr(settings.server) and TOKEN not in repr(settings)


def test_token_auth_constant_time_identity() -> None:
    auth = TokenAuth([TOKEN, OTHER])
    first = auth.identify(f"Bearer {TOKEN}")
    assert first is not None and first.startswith("token:") and TOKEN not in first
    assert auth.identify(f"bearer   {OTHER}") not in (None, first)
    for header in (None, "", "Bearer", f"Basic {TOKEN}", f"Bearer {TOKEN}x", TOKEN):
        assert auth.identify(header) is None, header
    assert not TokenAuth([]).enabled


def test_token_in_basic_credentials() -> None:
    auth = TokenAuth([TOKEN])

    def basic(credentials: str) -> str:
        return "Basic " + base64.b64encode(credentials.encode()).decode()

    assert auth.identify(basic(f"openwebui:{TOKEN}")) == auth.identify(f"Bearer {TOKEN}")
    assert auth.identify(basic(f"{TOKEN}:")) is not None  # a lone user name is the token
    for credentials in (f"openwebui:{TOKEN}x", "user:", ":", f"{TOKEN}x:"):
        assert auth.identify(basic(credentials)) is None, credentials
    assert auth.identify("Basic !!!not-base64!!!") is None
    assert auth.identify("Basic " + base64.b64encode(b"\xff\xfe:x").decode()) is None


def _scope(peer: str, forwarded: list[str]) -> dict[str, Any]:
    headers = [(b"x-forwarded-for", v.encode()) for v in forwarded]
    return {"type": "http", "client": (peer, 5000), "headers": headers}


def test_client_address_trusts_forwarded_for_only_from_proxies() -> None:
    trusted = parse_networks(["10.0.0.0/8", "127.0.0.1"])
    assert client_address(_scope("203.0.113.9", ["1.2.3.4"]), trusted) == "203.0.113.9"
    assert client_address(_scope("127.0.0.1", ["1.2.3.4"]), trusted) == "1.2.3.4"
    # A client-supplied left part is not believed: the right-most untrusted hop is the client.
    chain = ["6.6.6.6, 198.51.100.7, 10.1.1.1"]
    assert client_address(_scope("10.0.0.2", chain), trusted) == "198.51.100.7"
    assert client_address(_scope("10.0.0.2", ["10.0.0.3", "10.0.0.4"]), trusted) == "10.0.0.3"
    assert client_address(_scope("10.0.0.2", ["garbage"]), trusted) == "10.0.0.2"
    assert client_address(_scope("10.0.0.2", []), trusted) == "10.0.0.2"
    assert client_address(_scope("127.0.0.1", ["1.2.3.4"]), []) == "127.0.0.1"
    # A dual-stack socket (`serve --host :: --workers N`) sees IPv4 peers as mapped addresses.
    assert client_address(_scope("::ffff:10.0.0.2", ["198.51.100.7"]), trusted) == "198.51.100.7"
    assert client_address(_scope("::ffff:203.0.113.9", ["1.2.3.4"]), trusted) == "203.0.113.9"
    assert client_address(_scope("10.0.0.2", ["1.2.3.4", "::ffff:10.0.0.3"]), trusted) == "1.2.3.4"
    # One client however a proxy writes it: mapped, or with a port.
    for written in ("::ffff:198.51.100.7", "198.51.100.7:4711", "[::ffff:198.51.100.7]:80"):
        assert client_address(_scope("10.0.0.2", [written]), trusted) == "198.51.100.7"


@pytest.mark.parametrize(
    ("one", "other", "same"),
    [
        # Native IPv6: one host or home network is one /64.
        ("2001:db8:1:2::1", "2001:db8:1:2::ffff", True),
        ("2001:db8:1:2::1", "2001:db8:1:3::1", False),
        # NAT64 (RFC 6052's 64:ff9b::/96): each IPv4 client in the last 32 bits, all of them.
        ("64:ff9b::c000:221", "64:ff9b::c633:6407", False),
        ("64:ff9b::c000:221", "64:ff9b::c633:221", False),
        # RFC 8215's local-use prefix, a translator's /96 or /48 in it (RFC 6052 2.2).
        ("64:ff9b:1::c000:221", "64:ff9b:1::c633:6407", False),
        ("64:ff9b:1:c000:2:2100::", "64:ff9b:1:c000:2:2200::", False),
        # Teredo: the clients of one relay share its /64.
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378:8000:1234:1fff:aaaa", False),
    ],
)
def test_the_limits_count_an_ipv6_64_and_an_ipv4_client_inside_ipv6_by_itself(
    one: str, other: str, same: bool
) -> None:
    """Counted by the /64, every IPv4 client of a translator or relay would be one client, and
    one guesser would lock all of them out of the failed-login limit."""
    assert (limit_key(one) == limit_key(other)) is same
    assert limit_key("64:ff9b::c000:221") == "192.0.2.33"


def test_rate_limiter_bucket() -> None:
    now = [100.0]
    limiter = RateLimiter(60, 3, clock=lambda: now[0])
    assert [limiter.acquire("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("a") == pytest.approx(1.0)  # one token a second
    assert limiter.acquire("b") == 0.0  # other clients have their own bucket
    now[0] += 2.5
    assert limiter.acquire("a") == 0.0 and limiter.acquire("a") == 0.0
    assert limiter.acquire("a") > 0
    off = RateLimiter(0, 1, clock=lambda: now[0])
    assert all(off.acquire("a") == 0.0 for _ in range(100))


def test_rate_limiter_forgets_least_recent_clients() -> None:
    limiter = RateLimiter(60, 1, clock=lambda: 0.0, max_clients=2)
    assert limiter.acquire("a") == 0.0 and limiter.acquire("b") == 0.0
    assert limiter.acquire("a") > 0
    limiter.acquire("c")  # evicts b, the least recently seen
    assert limiter.acquire("b") == 0.0


def test_concurrency_limiter() -> None:
    slots = ConcurrencyLimiter(total=3, per_client=2)
    assert slots.enter("a") is None and slots.enter("a") is None
    assert slots.enter("a") == "client"
    assert slots.enter("b") is None
    assert slots.enter("c") == "total"
    slots.leave("a")
    assert slots.enter("c") is None and slots.in_flight == 3
    for client in ("a", "b", "c"):
        slots.leave(client)
    assert slots.in_flight == 0 and slots.enter("a") is None


def test_concurrency_limiter_counts_what_a_client_still_holds() -> None:
    slots = ConcurrencyLimiter(total=10, per_client=2)
    assert slots.enter("a") is None and slots.enter("a") is None
    slots.leave("a")  # one of two ends: one still in flight
    assert slots.enter("a") is None
    assert slots.enter("a") == "client"


def test_a_loopback_server_behind_a_proxy_limits_each_client() -> None:
    # operations.md: per-client limits apply when server.trusted_proxies is set.
    from websearch_mcp.config import ServerSettings
    from websearch_mcp.server.middleware.exposure import serves_this_machine_only

    assert serves_this_machine_only(ServerSettings(host="127.0.0.1"))
    assert not serves_this_machine_only(
        ServerSettings(host="127.0.0.1", trusted_proxies=["127.0.0.1"])
    )


def test_check_query_length() -> None:
    check_query_length("a   b", 3)  # whitespace collapsed first
    with pytest.raises(ToolInputError, match="at most 3 characters"):
        check_query_length("abcd", 3)


# --- exposure -------------------------------------------------------------------------------


def test_non_loopback_without_tokens_refuses_to_start() -> None:
    settings = parse_config(
        {"server": {"host": "0.0.0.0"}, "cache": {"backend": "none"}}, "test", environ={}
    )
    with pytest.raises(ConfigError, match=r"refusing to serve 0\.0\.0\.0:8338.*allow_anonymous"):
        create_app(settings)
    for server in ({"allow_anonymous": True}, {"auth_tokens": [TOKEN]}):
        ok = parse_config(
            {"server": {"host": "0.0.0.0", **server}, "cache": {"backend": "none"}},
            "test",
            environ={},
        )
        assert create_app(ok).state.settings.server.host == "0.0.0.0"


def test_a_token_shorter_than_sixteen_characters_is_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for token, warned in (("t" * 15, True), ("t" * 16, False)):
        server = {"auth_tokens": [token]}
        settings = parse_config({"server": server, "cache": {"backend": "none"}}, "test", {})
        caplog.clear()
        create_app(settings)
        assert ("easy to guess" in caplog.text) == warned, token
        assert token not in caplog.text


def test_cli_serve_refuses_public_address_without_tokens(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("WEBSEARCH_MCP_TOKENS", raising=False)
    monkeypatch.delenv("WEBSEARCH_MCP_SERVER__ALLOW_ANONYMOUS", raising=False)
    config = tmp_path / "c.yaml"
    config.write_text("cache: {backend: none}\n", encoding="utf-8")
    assert cli_main(["serve", "--config", str(config), "--host", "0.0.0.0", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "refusing to serve 0.0.0.0:1 without authentication" in err
    assert "WEBSEARCH_MCP_TOKENS" in err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_cli_serve_refuses_public_address_without_tokens_before_listening(
    tmp_path, monkeypatch, capsys, workers: str
) -> None:
    # The exposure is refused first: a port in use says nothing of a setting to fix.
    monkeypatch.delenv("WEBSEARCH_MCP_TOKENS", raising=False)
    monkeypatch.delenv("WEBSEARCH_MCP_SERVER__ALLOW_ANONYMOUS", raising=False)
    config = tmp_path / "c.yaml"
    config.write_text("cache: {backend: none}\n", encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        command = ["serve", "--config", str(config), "--host", "0.0.0.0", "--port", port]
        assert cli_main([*command, "--workers", workers]) == 2
    assert f"refusing to serve 0.0.0.0:{port} without authentication" in capsys.readouterr().err


# --- real server ----------------------------------------------------------------------------


@pytest.fixture
def no_uvicorn_proxy_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    # uvicorn would rewrite the peer from X-Forwarded-For itself for 127.0.0.1; the CLI turns
    # that off (proxy_headers=False) and so do these tests, so that the app alone decides.
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "")


def serve(engines_url: str, **server: Any) -> Any:
    return serve_app(create_app(settings_for(engines_url, server=server)))


def test_tokens_right_wrong_and_missing(engines_url: str) -> None:
    with serve(engines_url, auth_tokens=[TOKEN, OTHER]) as url, httpx.Client(timeout=10) as http:
        missing = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=TOOLS_LIST)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="websearch-mcp"'
        assert "bearer token is required" in missing.json()["error"]
        wrong = http.post(f"{url}/mcp", headers=bearer(TOKEN + "x"), json=TOOLS_LIST)
        assert wrong.status_code == 401
        assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
        for token in (TOKEN, OTHER):
            right = http.post(f"{url}/mcp", headers=bearer(token), json=TOOLS_LIST)
            assert right.status_code == 200 and right.json()["result"]["tools"]
        for path in ("/search?q=asyncio&format=json", "/metrics", "/readyz"):
            assert http.get(url + path).status_code == 401, path
            authorized = http.get(url + path, headers={"Authorization": f"Bearer {TOKEN}"})
            assert authorized.status_code == 200, path
        health = http.get(f"{url}/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"


def test_oauth_discovery_is_told_there_is_none(engines_url: str) -> None:
    """A client answered 401 looks for OAuth metadata (RFC 9728, RFC 8414): those paths answer
    404 without a token, so it learns the server takes no OAuth, and its probes never count as
    failed authentications that would then refuse its real token."""
    paths = (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    )
    with serve(engines_url, auth_tokens=[TOKEN]) as url, httpx.Client(timeout=10) as http:
        for _ in range(8):
            for path in paths:
                probed = http.get(url + path)
                assert probed.status_code == 404, (path, probed.status_code)
                assert "www-authenticate" not in probed.headers
        right = http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST)
        assert right.status_code == 200 and right.json()["result"]["tools"]


async def test_official_client_with_token(engines_url: str) -> None:
    with serve(engines_url, auth_tokens=[TOKEN]) as url:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            result = await client.call_tool("web_search", {"query": "python asyncio"})
    assert not result.is_error and result.structured_content["results"]


def test_evil_origin_and_host(engines_url: str) -> None:
    with serve(engines_url) as url, httpx.Client(timeout=10) as http:
        evil = http.post(
            f"{url}/mcp", headers={**MCP_HEADERS, "Origin": "https://evil.example"}, json=TOOLS_LIST
        )
        assert evil.status_code == 403 and "Origin" in evil.json()["error"]
        rebound = http.post(
            f"{url}/mcp", headers={**MCP_HEADERS, "Host": "evil.example:8338"}, json=TOOLS_LIST
        )
        assert rebound.status_code == 421 and "allowed_hosts" in rebound.json()["error"]
        search = http.get(
            f"{url}/search", params={"q": "x"}, headers={"Origin": "http://evil.example"}
        )
        assert search.status_code == 403
        local = http.post(
            f"{url}/mcp",
            headers={**MCP_HEADERS, "Origin": "http://localhost:3000"},
            json=TOOLS_LIST,
        )
        assert local.status_code == 200
        # The liveness probe answers whatever the Host (container and cluster probes).
        assert http.get(f"{url}/healthz", headers={"Host": "10.1.2.3:8338"}).status_code == 200


def test_another_sites_page_cannot_make_a_browser_search(
    fake: FakeEngines, engines_url: str
) -> None:
    # A browser sends no Origin with a GET it makes for an `<img>`, `<script>` or frame of
    # another site's page; its Sec-Fetch-Site still says where the request comes from.
    embedded = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}
    params = {"q": "python asyncio", "format": "json"}
    with serve(engines_url) as url, httpx.Client(timeout=10) as http:
        for site in ("cross-site", "same-site"):
            headers = {**embedded, "Sec-Fetch-Site": site, "Sec-Fetch-Dest": "image"}
            answer = http.get(f"{url}/search", params=params, headers=headers)
            assert answer.status_code == 403, site
            assert "another site" in answer.json()["error"]
        assert sum(fake.counts.values()) == 0  # no engine was asked
        # Typed in the address bar, or fetched by an allowed origin's page (which names itself).
        typed = {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}
        assert http.get(f"{url}/search", params=params, headers=typed).status_code == 200
        allowed = {**embedded, "Sec-Fetch-Mode": "cors", "Origin": "http://localhost:3000"}
        assert http.get(f"{url}/search", params=params, headers=allowed).status_code == 200
        # Pages that search nothing may still be linked to or framed from elsewhere.
        assert http.get(f"{url}/status", headers=embedded).status_code == 200


def test_configured_host_and_origin_patterns_reach_the_mcp_transport(engines_url: str) -> None:
    # The SDK alone would refuse this Host (its default allows loopback names only): ours decides.
    with (
        serve(
            engines_url,
            allowed_hosts=["search.example.com"],
            allowed_origins=["https://*.example.com"],
        ) as url,
        httpx.Client(timeout=10) as http,
    ):
        headers = {
            **MCP_HEADERS,
            "Host": "search.example.com",
            "Origin": "https://chat.example.com",
        }
        response = http.post(
            f"{url}/mcp", headers=headers, json=tool_call({"query": "python asyncio"})
        )
        assert response.status_code == 200
        assert response.json()["result"]["structuredContent"]["results"]
        other = http.post(
            f"{url}/mcp",
            headers={**headers, "Origin": "https://chat.example.net"},
            json=TOOLS_LIST,
        )
        assert other.status_code == 403


def test_a_page_of_an_allowed_origin_may_call_the_server_from_a_browser(
    engines_url: str,
) -> None:
    # A browser asks first (CORS preflight: OPTIONS, no token), then reads the answer only when
    # it names the page's origin.
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
    }
    page = {"Origin": "https://chat.example.com"}
    with (
        serve(engines_url, allowed_origins=["https://*.example.com"], auth_tokens=[TOKEN]) as url,
        httpx.Client(timeout=10) as http,
    ):
        for origin in ("https://chat.example.com", "http://localhost:6274"):
            asked = http.options(f"{url}/mcp", headers={**preflight, "Origin": origin})
            assert asked.status_code == 200, asked.text
            assert asked.headers["access-control-allow-origin"] == origin
            assert "POST" in asked.headers["access-control-allow-methods"]
            allowed_headers = asked.headers["access-control-allow-headers"].lower()
            assert {"authorization", "content-type", "mcp-protocol-version"} <= {
                h.strip() for h in allowed_headers.split(",")
            }
        called = http.post(
            f"{url}/mcp", headers={**MCP_HEADERS, **page, **bearer(TOKEN)}, json=TOOLS_LIST
        )
        assert called.status_code == 200 and called.json()["result"]["tools"]
        assert called.headers["access-control-allow-origin"] == page["Origin"]
        # Refusals are readable too, with their challenge.
        refused = http.post(f"{url}/mcp", headers={**MCP_HEADERS, **page}, json=TOOLS_LIST)
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == page["Origin"]
        assert "www-authenticate" in refused.headers["access-control-expose-headers"].lower()
        # Another site's page is told nothing and may not call.
        evil = {"Origin": "https://chat.example.net"}
        asked = http.options(f"{url}/mcp", headers={**preflight, **evil})
        assert asked.status_code >= 400 and "access-control-allow-origin" not in asked.headers
        called = http.post(
            f"{url}/mcp", headers={**MCP_HEADERS, **evil, **bearer(TOKEN)}, json=TOOLS_LIST
        )
        assert called.status_code == 403 and "access-control-allow-origin" not in called.headers
        # The operator's pages are read by no other page, even an allowed one.
        for path in ("/metrics", "/status.json", "/readyz"):
            read = http.get(f"{url}{path}", headers={**page, **bearer(TOKEN)})
            assert read.status_code == 200 and "access-control-allow-origin" not in read.headers
            asked = http.options(f"{url}{path}", headers={**preflight, **page})
            assert "access-control-allow-origin" not in asked.headers


def test_oversized_bodies_get_413(engines_url: str) -> None:
    with serve(engines_url, max_body_bytes=2048) as url, httpx.Client(timeout=10) as http:
        big = tool_call({"query": "x" * 4000})
        declared = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=big)
        assert declared.status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while streaming
            for _ in range(8):
                yield b" " * 1000

        streamed = http.post(f"{url}/mcp", headers=MCP_HEADERS, content=chunks())
        assert streamed.status_code == 413
        small = http.post(f"{url}/mcp", headers=MCP_HEADERS, json=TOOLS_LIST)
        assert small.status_code == 200


def test_a_body_of_exactly_the_cap_is_served(engines_url: str) -> None:
    with serve(engines_url, max_body_bytes=2048) as url, httpx.Client(timeout=10) as http:
        body = json.dumps(TOOLS_LIST).encode()
        at_cap = body + b" " * (2048 - len(body))
        answer = http.post(f"{url}/mcp", headers=MCP_HEADERS, content=at_cap)
        assert answer.status_code == 200 and answer.json()["result"]["tools"]
        over = http.post(f"{url}/mcp", headers=MCP_HEADERS, content=at_cap + b" ")
        assert over.status_code == 413


def test_a_client_that_waits_as_retry_after_says_is_served(engines_url: str) -> None:
    # 40 a minute: a request every 1.5 s, so the wait is not a whole number of seconds.
    limits = {"rate_limit_per_minute": 40, "rate_limit_burst": 1}
    with serve(engines_url, auth_tokens=[TOKEN], **limits) as url, httpx.Client(timeout=10) as http:
        assert http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST).status_code == 200
        limited = http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST)
        assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
        time.sleep(int(limited.headers["retry-after"]))
        assert http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST).status_code == 200


def test_burst_over_the_per_client_rate_limit(engines_url: str) -> None:
    with (
        serve(
            engines_url, auth_tokens=[TOKEN, OTHER], rate_limit_per_minute=6, rate_limit_burst=3
        ) as url,
        httpx.Client(timeout=10) as http,
    ):
        codes = [
            http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST).status_code
            for _ in range(5)
        ]
        assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
        limited = http.post(f"{url}/mcp", headers=bearer(TOKEN), json=TOOLS_LIST)
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["retry-after"]) <= 10
        # Another token is another client with its own bucket.
        assert http.post(f"{url}/mcp", headers=bearer(OTHER), json=TOOLS_LIST).status_code == 200
        # The SearXNG endpoint shares the bucket; the metrics endpoint is not limited.
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert http.get(f"{url}/search?q=x&format=json", headers=auth).status_code == 429
        assert http.get(f"{url}/metrics", headers=auth).status_code == 200


@pytest.mark.usefixtures("no_uvicorn_proxy_headers")
def test_forwarded_for_only_from_trusted_proxies(engines_url: str) -> None:
    limits = {"rate_limit_per_minute": 1, "rate_limit_burst": 1}

    def statuses(url: str) -> list[int]:
        with httpx.Client(timeout=10) as http:
            return [
                http.post(
                    f"{url}/mcp",
                    headers={**MCP_HEADERS, "X-Forwarded-For": f"198.51.100.{i}"},
                    json=TOOLS_LIST,
                ).status_code
                for i in range(3)
            ]

    with serve(engines_url, trusted_proxies=["127.0.0.1/32"], **limits) as url:
        assert statuses(url) == [200, 200, 200]  # three clients behind the proxy
    with serve(engines_url, limit_local_clients=True, **limits) as url:
        assert statuses(url) == [200, 429, 429]  # an untrusted peer's header is ignored


async def test_concurrency_per_client_and_overall(fake: FakeEngines, engines_url: str) -> None:
    fake.faults["tavily"] = Fault(delay=0.8)
    body = tool_call({"query": "python asyncio"})

    async def burst(url: str, tokens: list[str]) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=10) as http:
            return await asyncio.gather(
                *(http.post(f"{url}/mcp", headers=bearer(t), json=body) for t in tokens)
            )

    with serve(engines_url, auth_tokens=[TOKEN, OTHER], max_concurrent_per_client=1) as url:
        answers = await burst(url, [TOKEN, TOKEN, TOKEN])
        codes = sorted(r.status_code for r in answers)
        assert codes == [200, 429, 429]
        busy = next(r for r in answers if r.status_code == 429)
        assert busy.headers["retry-after"] == "1" and "in flight" in busy.json()["error"]
    with serve(engines_url, auth_tokens=[TOKEN, OTHER], max_concurrent_requests=1) as url:
        codes = sorted(r.status_code for r in await burst(url, [TOKEN, OTHER]))
        assert codes == [200, 503]


def test_query_length_cap(engines_url: str) -> None:
    with serve(engines_url, max_query_chars=20) as url, httpx.Client(timeout=10) as http:
        long_query = "python asyncio event loop tutorial"
        result = http.post(
            f"{url}/mcp", headers=MCP_HEADERS, json=tool_call({"query": long_query})
        ).json()["result"]
        assert result["isError"] is True
        assert "query must be at most 20 characters (got 34)" in result["content"][0]["text"]
        search = http.get(f"{url}/search", params={"q": long_query, "format": "json"})
        assert search.status_code == 400 and "at most 20 characters" in search.json()["error"]
        ok = http.get(f"{url}/search", params={"q": "python asyncio", "format": "json"})
        assert ok.status_code == 200


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("https://app.example.com", True),
        ("https://a.b.example.com", True),
        ("https://evilexample.com", False),  # a look-alike host, not a subdomain
        ("https://xexample.com", False),
        ("https://example.com.evil.net", False),
    ],
)
def test_the_cors_regex_of_a_wildcard_subdomain_takes_subdomains_only(
    origin: str, allowed: bool
) -> None:
    # The hypothesis property meets a look-alike host only now and then: these always.
    policy = OriginPolicy([], ["https://*.example.com"])
    assert (re.fullmatch(policy.origin_regex(), origin) is not None) is allowed
    assert policy.origin_allowed(origin) is allowed
