"""Metrics parsed with prometheus_client after real traffic; logs with request ids, no secrets."""

from __future__ import annotations

import ast
import io
import json
import logging
import socket
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from testing.fake_engines import FakeEngines, Fault, base_urls
from testing.resilience_helpers import FakeClock
from testing.server_helpers import MCP_HEADERS, TAVILY_KEY, bearer, settings_for, tool_call
from testing.serving import serve_app
from testing.shared import REPO
from websearch_mcp.net.store_failures import CacheStats
from websearch_mcp.search.fan_out import Orchestrator
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app
from websearch_mcp.server.metrics import REJECTION_REASONS, Metrics
from websearch_mcp.server.middleware import guard
from websearch_mcp.server.observability import configure_logging, request_id_from

TOKEN = "tok-PLANTED-token-4b2e8d19c0"
KEY = "tvly-PLANTED-key-7f3a9c55e1"
SERPER_KEY = "serper-test-key-1"


def scrape(
    url: str, token: str | None = TOKEN
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """`/metrics` parsed by prometheus_client: (sample name, sorted labels) -> value."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(f"{url}/metrics", headers=headers, timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def test_metrics_after_traffic(fake: FakeEngines, engines_url: str) -> None:
    settings = settings_for(engines_url, brave=True, server={"auth_tokens": [TOKEN]})
    with serve_app(create_app(settings)) as url, httpx.Client(timeout=10) as http:

        def call(arguments: dict[str, Any]) -> dict[str, Any]:
            response = http.post(f"{url}/mcp", headers=bearer(TOKEN), json=tool_call(arguments))
            return response.json()["result"]

        assert not call({"query": "python asyncio"})["isError"]
        searx = http.get(
            f"{url}/search", params={"q": "python asyncio"}, headers=bearer(TOKEN)
        ).json()
        assert searx["results"]
        fake.faults["brave"] = Fault(status=500, body=b"oops")
        assert call({"query": "python asyncio"})["structuredContent"]["partial"] is True
        fake.faults["searxng"] = Fault(status=429)
        assert call({"query": "python asyncio"})["structuredContent"]["partial"] is True
        fake.faults["tavily"] = Fault(status=503)
        assert call({"query": "python asyncio"})["isError"] is True  # no engine answered
        assert call({"query": "python", "max_results": 0})["isError"] is True
        page = http.post(
            f"{url}/mcp",
            headers=bearer(TOKEN),
            json=tool_call({"url": "http://127.0.0.1:1/"}, name="fetch_page"),
        )
        assert page.json()["result"]["isError"] is True  # a private address, refused
        assert http.post(f"{url}/mcp", json=tool_call({"query": "x"})).status_code == 401
        assert http.get(f"{url}/wp-login.php", headers=bearer(TOKEN)).status_code == 404
        samples = scrape(url)

    tool = "websearch_tool_requests_total"
    assert value(samples, tool, tool="web_search", interface="mcp", outcome="ok") == 1
    assert value(samples, tool, tool="web_search", interface="mcp", outcome="partial") == 2
    assert value(samples, tool, tool="web_search", interface="mcp", outcome="failed") == 1
    assert value(samples, tool, tool="web_search", interface="mcp", outcome="invalid") == 1
    assert value(samples, tool, tool="web_search", interface="searxng", outcome="ok") == 1
    assert value(samples, tool, tool="fetch_page", interface="mcp", outcome="refused") == 1

    calls = "websearch_engine_calls_total"
    assert value(samples, calls, engine="tavily", status="ok") == 4
    assert value(samples, calls, engine="tavily", status="error") == 1
    assert value(samples, calls, engine="brave", status="ok") == 2
    assert value(samples, calls, engine="brave", status="error") == 1
    assert value(samples, calls, engine="searxng", status="rate_limited") == 1
    latency = "websearch_engine_latency_seconds"
    assert value(samples, f"{latency}_count", engine="tavily") == 5
    assert value(samples, f"{latency}_bucket", engine="tavily", le="+Inf") == 5
    latency_sum = value(samples, f"{latency}_sum", engine="tavily")
    assert latency_sum is not None and latency_sum > 0

    # The 429 opened searxng's breaker for minutes.
    assert value(samples, "websearch_breaker_open", engine="searxng") == 1
    assert value(samples, "websearch_http_rejections_total", reason="unauthorized") == 1
    http_total = "websearch_http_requests_total"
    assert value(samples, http_total, route="/mcp", status="200") == 6
    assert value(samples, http_total, route="/mcp", status="401") == 1
    assert value(samples, http_total, route="/search", status="200") == 1
    # A path no route serves (a scanner's) is one label, however many the scanner tries.
    assert value(samples, http_total, route="other", status="404") == 1
    assert value(samples, "websearch_in_flight_requests") == 0
    assert value(samples, "websearch_http_request_duration_seconds_count", route="/mcp") == 7


def test_engines_of_a_search_shared_by_several_requests_are_counted_once(
    fake: FakeEngines, engines_url: str
) -> None:
    fake.faults["searxng"] = Fault(delay=0.5)  # long enough for the others to join the flight
    service = SearchService(settings_for(engines_url, server={"auth_tokens": [TOKEN]}))
    with serve_app(create_app(service.settings, service)) as url:
        with ThreadPoolExecutor(3) as pool:
            body = tool_call({"query": "python asyncio"})
            answers = list(
                pool.map(
                    lambda _: httpx.post(
                        f"{url}/mcp", headers=bearer(TOKEN), json=body, timeout=10
                    ),
                    range(3),
                )
            )
        samples = scrape(url)
    assert all(a.json()["result"]["isError"] is False for a in answers)
    assert service.single_flight_joins == 2 and fake.counts["searxng"] == 1
    calls = "websearch_engine_calls_total"
    assert value(samples, calls, engine="searxng", status="ok") == 1
    assert (
        value(
            samples,
            "websearch_tool_requests_total",
            tool="web_search",
            interface="mcp",
            outcome="ok",
        )
        == 3
    )


class StubCache:
    """A cache that never hits; `broken` makes lookups fail (counted, as the backends do)."""

    backend = "stub"

    def __init__(self) -> None:
        self.stats = CacheStats(hits=3, misses=2, sets=1)
        self.stats.errors["locked"] = 1
        self.broken = False
        self.crashed = False

    async def get(self, namespace: str, key: str, *, max_age_seconds: Any = None) -> None:
        if self.crashed:
            raise RuntimeError("a bug")
        if self.broken:
            self.stats.errors["unavailable"] += 1
        self.stats.misses += 1

    def remembered(self, namespace: str, key: str, *, max_age_seconds: Any = None) -> None:
        return None

    async def set(self, namespace: str, key: str, value: Any, *, ttl_seconds: Any = None) -> None:
        self.stats.sets += 1

    async def cleanup(self) -> int:
        return 0

    async def close(self) -> None:
        return None


def test_a_search_no_engine_could_take_counts_the_engines_it_skipped(engines_url: str) -> None:
    """A search naming only an engine the configuration turned off fails without a fan-out;
    the engine's `skipped` counts all the same, as it does beside engines that were asked."""
    service = SearchService(settings_for(engines_url, server={"auth_tokens": [TOKEN]}))
    with serve_app(create_app(service.settings, service)) as url:
        body = tool_call({"query": "python asyncio", "engines": ["brave"]})
        result = httpx.post(f"{url}/mcp", headers=bearer(TOKEN), json=body, timeout=10).json()
        samples = scrape(url)
    assert result["result"]["isError"] is True
    calls = "websearch_engine_calls_total"
    assert value(samples, calls, engine="brave", status="skipped") == 1


def test_an_engine_the_strategy_never_reached_counts_as_skipped(
    fake: FakeEngines, engines_url: str
) -> None:
    """`sequential` reports an engine it had no time left to reach `timeout` ("too late"): it
    counted as a timeout of a call never made, which the status page does not count."""
    fake.faults["searxng"] = Fault(hang=True)
    order = {
        "strategy": "sequential",
        "deadline_seconds": 1,
        "sequential": {"order": ["searxng", "tavily"]},
    }
    service = SearchService(
        settings_for(engines_url, search=order, server={"auth_tokens": [TOKEN]})
    )
    with serve_app(create_app(service.settings, service)) as url:
        body = tool_call({"query": "python asyncio"})
        httpx.post(f"{url}/mcp", headers=bearer(TOKEN), json=body, timeout=10)
        samples = scrape(url)
    assert fake.counts.get("tavily", 0) == 0
    calls = "websearch_engine_calls_total"
    assert value(samples, calls, engine="tavily", status="skipped") == 1
    assert not value(samples, calls, engine="tavily", status="timeout")
    assert value(samples, calls, engine="searxng", status="timeout") == 1


def test_a_call_whose_client_went_away_counts_as_cancelled(
    fake: FakeEngines, engines_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The client closes its connection mid-search: the call is cancelled, counted and logged
    as such, and the request is a 499 (the client's doing), not a 200 or a 500."""
    fake.faults["searxng"] = Fault(delay=1.0)
    settings = settings_for(engines_url, server={"auth_tokens": [TOKEN]})
    body = json.dumps(tool_call({"query": "python asyncio"})).encode()
    headers = "".join(f"{k}: {v}\r\n" for k, v in bearer(TOKEN).items())
    with serve_app(create_app(settings)) as url, caplog.at_level(logging.INFO):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            time.sleep(0.3)  # the engines are asked
        time.sleep(1.2)  # past the slow engine's answer: the call would have ended by now
        samples = scrape(url)

    tool = "websearch_tool_requests_total"
    assert value(samples, tool, tool="web_search", interface="mcp", outcome="cancelled") == 1
    assert value(samples, tool, tool="web_search", interface="mcp", outcome="ok") is None
    http_total = "websearch_http_requests_total"
    assert value(samples, http_total, route="/mcp", status="499") == 1
    assert value(samples, "websearch_in_flight_requests") == 0
    assert "web_search via mcp: cancelled" in caplog.text


def test_cache_metrics_and_readiness(engines_url: str) -> None:
    settings = settings_for(engines_url)
    service = SearchService(settings)
    cache = service.cache = StubCache()  # type: ignore[attr-defined]
    with serve_app(create_app(settings, service=service)) as url:
        ready = httpx.get(f"{url}/readyz", timeout=10)
        assert ready.status_code == 200 and ready.json() == {"status": "ready", "cache": "stub"}
        samples = scrape(url, token=None)
        assert value(samples, "websearch_cache_hits_total") == 3
        assert value(samples, "websearch_cache_misses_total") == cache.stats.misses
        assert value(samples, "websearch_cache_sets_total") == cache.stats.sets
        assert value(samples, "websearch_cache_errors_total", cause="locked") == 1
        # Counted once however often they are read, on /metrics as on the status page.
        again = scrape(url, token=None)
        assert value(again, "websearch_cache_hits_total") == 3
        assert value(again, "websearch_cache_errors_total", cause="locked") == 1
        shown = httpx.get(f"{url}/status.json", timeout=10).json()["service"]["cache"]
        misses = cache.stats.misses
        assert shown["hits"] == 3 and shown["misses"] == misses
        assert shown["hit_share"] == 3 / (3 + misses)
        cache.broken = True
        down = httpx.get(f"{url}/readyz", timeout=10)
        assert down.status_code == 503 and down.json()["status"] == "not ready"
        assert value(scrape(url, token=None), "websearch_cache_errors_total", cause="unavailable")
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
        # A request the app fails on is counted as the 500 it is answered with.
        cache.crashed = True
        assert httpx.get(f"{url}/readyz", timeout=10).status_code == 500
        failed = scrape(url, token=None)
    assert value(failed, "websearch_http_requests_total", route="/readyz", status="500") == 1


def test_ready_without_a_cache(engines_url: str) -> None:
    with serve_app(create_app(settings_for(engines_url))) as url:
        response = httpx.get(f"{url}/readyz", timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "ready"


async def test_breaker_states_and_gauge() -> None:
    settings = settings_for("http://127.0.0.1:9")  # tavily and searxng enabled; nothing is sent
    orchestrator = Orchestrator(settings, environ={}, clock=FakeClock())
    try:
        for name in ("searxng", "bing"):  # bing is disabled: its breaker is not exported
            breaker = orchestrator.runs[name].breaker
            assert breaker is not None
            await breaker.failure("error", "HTTP 500")
        states = await orchestrator.breaker_states()
        assert states == {"searxng": True, "tavily": False}
        metrics = Metrics()
        metrics.watch_breakers(orchestrator.breaker_states)
        await metrics.refresh()
    finally:
        await orchestrator.close()
    text = metrics.render().decode()
    assert 'websearch_breaker_open{engine="searxng"} 1.0' in text
    assert 'websearch_breaker_open{engine="tavily"} 0.0' in text
    assert 'engine="bing"' not in text
    without = settings_for("http://127.0.0.1:9", search={"breaker": {"enabled": False}})
    unbroken = Orchestrator(without, environ={})
    try:
        assert await unbroken.breaker_states() == {}
    finally:
        await unbroken.close()


async def test_breaker_questions_claim_no_probe() -> None:
    clock = FakeClock()
    orchestrator = Orchestrator(settings_for("http://127.0.0.1:9"), environ={}, clock=clock)
    try:
        breaker = orchestrator.runs["searxng"].breaker
        assert breaker is not None
        assert not await orchestrator.any_breaker_tripped(["searxng", "tavily"])
        await breaker.failure("error", "HTTP 500")
        clock.advance(3600)  # the cooldown is over: half-open, the next real call probes
        assert await orchestrator.breaker_states() == {"searxng": False, "tavily": False}
        assert await orchestrator.any_breaker_tripped(["tavily", "searxng"])
        assert await breaker.check() is None  # the probe was still free to claim
        still = await breaker.check()
        assert still is not None and still.probing
    finally:
        await orchestrator.close()


def test_request_ids() -> None:
    assert request_id_from("req-123.abc:9") == "req-123.abc:9"
    for bad in (None, "", "x" * 65, "has space", 'quote"'):
        generated = request_id_from(bad)
        assert len(generated) == 32 and generated != bad


# --- logs -----------------------------------------------------------------------------------


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    level = root.level
    stream = io.StringIO()
    yield stream
    for handler in [h for h in root.handlers if getattr(h, "websearch_mcp", False)]:
        root.removeHandler(handler)
    root.setLevel(level)


def test_json_logs_have_request_ids_and_no_secrets(
    fake: FakeEngines, engines_url: str, log_stream: io.StringIO, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_for(engines_url, brave=True, server={"auth_tokens": [TOKEN]})
    settings.engines["tavily"] = settings.engines["tavily"].model_copy(update={"api_keys": [KEY]})
    assert KEY in settings.secrets() and TOKEN in settings.secrets()
    configure_logging("json", "debug", settings.secrets(), stream=log_stream)
    caplog.set_level(logging.DEBUG)
    # The engine echoes the key in its refusal, as some APIs do.
    fake.faults["tavily"] = Fault(status=401, body=json.dumps({"detail": f"invalid key {KEY}"}))
    with serve_app(create_app(settings)) as url, httpx.Client(timeout=10) as http:
        headers = {**bearer(TOKEN), "X-Request-Id": "req-0042"}
        answered = http.post(f"{url}/mcp", headers=headers, json=tool_call({"query": "asyncio"}))
        assert answered.headers["x-request-id"] == "req-0042"
        assert answered.json()["result"]["structuredContent"]["partial"] is True
        assert fake.last["tavily"].headers["authorization"] == f"Bearer {KEY}"
        wrong = http.post(f"{url}/mcp", headers=bearer(TOKEN + "-guess"), json=tool_call({}))
        assert wrong.status_code == 401
        assert len(wrong.headers["x-request-id"]) == 32
        http.get(f"{url}/search", params={"q": "asyncio"}, headers=bearer(TOKEN))
        assert http.get(f"{url}/metrics").status_code == 401  # a scraper without the token
        assert http.get(f"{url}/metrics", headers=bearer(TOKEN)).status_code == 200
        assert http.get(f"{url}/readyz", headers=bearer(TOKEN)).status_code == 200  # a balancer

    output = log_stream.getvalue()
    assert KEY not in output and TOKEN not in output
    assert KEY not in caplog.text and TOKEN not in caplog.text
    assert TAVILY_KEY not in output
    lines = [json.loads(line) for line in output.splitlines()]
    assert all({"ts", "level", "logger", "message", "request_id"} <= set(line) for line in lines)
    mine = [line for line in lines if line["request_id"] == "req-0042"]
    loggers = Counter(line["logger"] for line in mine)
    # The id reaches the tool handler and the engine fan-out, not only the access log.
    assert loggers["websearch_mcp.access"] == 1 and loggers["websearch_mcp.tool"] == 1
    search = next(line for line in mine if line["logger"] == "websearch_mcp.tool")
    assert search["outcome"] == "partial" and search["engines"]["tavily"] == "error"
    access = next(line for line in mine if line["logger"] == "websearch_mcp.access")
    assert access["status"] == 200 and access["path"] == "/mcp"
    assert access["client"].startswith("token:")
    refused = [line for line in lines if line.get("status") == 401 and line["path"] == "/mcp"]
    assert len(refused) == 1 and refused[0]["client"] == "127.0.0.1"
    # Scrapes are debug lines; a refused one is an info line, as on any other route.
    scrapes = [(line["status"], line["level"]) for line in lines if line.get("path") == "/metrics"]
    assert scrapes == [(401, "info"), (200, "debug")]
    checks = [(line["status"], line["level"]) for line in lines if line.get("path") == "/readyz"]
    assert checks == [(200, "debug")]


def test_no_log_line_holds_the_query_of_a_search_no_engine_answered(
    fake: FakeEngines, engines_url: str, log_stream: io.StringIO
) -> None:
    settings = settings_for(engines_url)
    url = base_urls(engines_url)["serper"]
    serper = {"enabled": True, "api_keys": [SERPER_KEY], "base_url": url}
    settings.engines["serper"] = settings.engines["serper"].model_copy(update=serper)
    configure_logging("json", "info", settings.secrets(), stream=log_stream)
    query = "merger talks with zanzibar holdings"
    # Serper explains a refusal in its body, as some APIs do quoting the query.
    fake.faults["serper"] = Fault(status=400, body=json.dumps({"message": f"bad query: {query}"}))
    with serve_app(create_app(settings)) as served:
        body = tool_call({"query": query, "engines": ["serper"]})
        answered = httpx.post(f"{served}/mcp", headers=MCP_HEADERS, json=body, timeout=10)
    assert answered.json()["result"]["isError"] is True
    lines = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    tool = [line for line in lines if line["logger"] == "websearch_mcp.tool"]
    assert [(line["outcome"], line["engines"]) for line in tool] == [
        ("failed", {"serper": "error"})
    ]
    assert [line for line in lines if "zanzibar" in json.dumps(line)] == []


def test_formatters_redact_messages_extras_and_tracebacks(log_stream: io.StringIO) -> None:
    log = logging.getLogger("websearch_mcp.test")
    configure_logging("json", "info", [KEY, TOKEN], stream=log_stream)
    log.warning("key %s and token %s", KEY, TOKEN, extra={"detail": {"sent": [KEY]}})
    try:
        raise RuntimeError(f"refused {KEY}")
    except RuntimeError:
        log.exception("engine failed")
    configure_logging("text", "info", [KEY, TOKEN], stream=log_stream)
    log.info("plain %s", TOKEN, extra={"why": KEY})
    output = log_stream.getvalue()
    assert KEY not in output and TOKEN not in output
    first, second, third = output.splitlines()[0], output.splitlines()[1], output.splitlines()[-1]
    assert json.loads(first)["message"] == "key *** and token ***"
    assert json.loads(first)["detail"] == {"sent": ["***"]}
    assert "RuntimeError: refused ***" in json.loads(second)["exc"]
    assert " INFO websearch_mcp.test [-] plain *** why=***" in third
    assert len(output.splitlines()) == 3  # the second call replaced the first one's handler
    # A secret holding a control character is found before the character is escaped.
    tabbed = "key\twith-a-tab-51"
    configure_logging("text", "info", [tabbed], stream=log_stream)
    log.info("sent %s", tabbed)
    assert log_stream.getvalue().splitlines()[-1].endswith(" sent ***")


def test_client_request_lines_only_when_debugging(log_stream: io.StringIO) -> None:
    # httpx logs each engine request's URL, query text included, at INFO.
    client = logging.getLogger("httpx")
    configure_logging("text", "info", [], stream=log_stream)
    client.info("HTTP Request: GET https://engine.test/search?q=private+words")
    client.warning("connection pool full")
    assert "private" not in log_stream.getvalue()
    assert "connection pool full" in log_stream.getvalue()
    configure_logging("text", "debug", [], stream=log_stream)
    client.info("HTTP Request: GET https://engine.test/search?q=debugging+words")
    assert "debugging" in log_stream.getvalue()


def test_a_request_path_cannot_forge_a_text_log_line(
    engines_url: str, log_stream: io.StringIO
) -> None:
    settings = settings_for(engines_url, server={"auth_tokens": [TOKEN]})
    configure_logging("text", "info", settings.secrets(), stream=log_stream)
    forged = "2026-01-01 00:00:00,000 INFO websearch_mcp.access [-] POST /mcp 200 1 ms"
    with serve_app(create_app(settings)) as url, httpx.Client(timeout=10) as http:
        # The path reaches the app percent-decoded: a line break, a carriage return, and the
        # terminal escape that clears the screen.
        path = f"/x%0a{forged}%0d%1b[2J"
        assert http.get(f"{url}{path}", headers=bearer(TOKEN)).status_code == 404
    lines = log_stream.getvalue().splitlines()
    access = [line for line in lines if " websearch_mcp.access " in line]
    assert len(access) == 1
    assert not any(line.startswith("2026-01-01") for line in lines)
    assert "\x1b" not in log_stream.getvalue() and "\r" not in log_stream.getvalue()
    assert f"GET /x\\n{forged}\\r\\x1b[2J 404" in access[0]


def test_every_reason_the_guard_refuses_with_is_documented() -> None:
    """The reasons passed to the guard's `_refuse` are the metric's documented label values."""
    tree = ast.parse(Path(guard.__file__).read_text(encoding="utf-8"))
    given = {
        node.args[2].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_refuse"
        and isinstance(node.args[2], ast.Constant)
    }
    assert given == set(REJECTION_REASONS)
    operations = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    assert all(f"`{reason}`" in operations for reason in REJECTION_REASONS)


def test_an_answer_from_the_cache_is_counted_as_cached() -> None:
    metrics = Metrics()
    with metrics.track("web_search", "mcp") as record:
        record.answer = {"cached": True, "partial": True, "results": [], "engines": []}
    labels = {"tool": "web_search", "interface": "mcp"}
    sample = metrics.registry.get_sample_value
    assert sample("websearch_tool_requests_total", {**labels, "outcome": "cached"}) == 1
    assert sample("websearch_tool_requests_total", {**labels, "outcome": "partial"}) is None


def test_an_engine_that_sent_nothing_adds_no_latency() -> None:
    metrics = Metrics()
    reports = [
        {"name": "brave", "status": "ok", "latency_ms": 0},
        {"name": "tavily", "status": "ok", "latency_ms": 800},
    ]
    metrics.record_engines(reports, unasked={"brave"})
    sample = metrics.registry.get_sample_value
    assert sample("websearch_engine_calls_total", {"engine": "brave", "status": "skipped"}) == 1
    assert sample("websearch_engine_latency_seconds_count", {"engine": "brave"}) is None
    assert sample("websearch_engine_latency_seconds_count", {"engine": "tavily"}) == 1
