"""The status page: the hour's buckets, the page and table, then a real server over fake engines
in every state (states, figures adding up, who may open it, no secret shown, the CLI)."""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from testing.cache_helpers import FakeClock
from testing.fake_engines import Body, FakeEngines, Fault, base_urls
from testing.fetch_helpers import LocalServer, page
from testing.redis_server import RedisServer
from testing.server_helpers import BRAVE_KEY, MCP_HEADERS, settings_for, tool_call
from testing.serving import serve_app
from testing.status_mix import (
    EXPECTED,
    RETRY_AFTER,
    faulted,
    mix_settings,
    search,
    serving_mix,
)
from websearch_mcp.cli import main as cli_main
from websearch_mcp.cli import status_proxy, status_target
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.engines.text import plain_text
from websearch_mcp.models import EngineReport
from websearch_mcp.net.breaker import CircuitBreaker
from websearch_mcp.net.cooldowns.recent_reads import MAX_AGE_SECONDS
from websearch_mcp.net.cooldowns.store import MemoryCooldownStore
from websearch_mcp.search.activity import (
    LATENCY_BOUNDS_MS,
    MAX_ERROR_CHARS,
    MINUTES,
    Activity,
    hour_figures,
    last_error,
    merge,
    percentile,
)
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.search.service import SearchService
from websearch_mcp.server.app import create_app
from websearch_mcp.server.metrics import Metrics
from websearch_mcp.server.status.page import render_page
from websearch_mcp.server.status.report import StatusSource, exposure, shown_engines, status_report
from websearch_mcp.server.status.shared import read_snapshots, write_snapshot
from websearch_mcp.server.status.table import render_table

TOKEN = "tok-status-0123456789abcdef"
STATUSES = ("ok", "empty", "irrelevant", "error", "timeout", "blocked", "rate_limited", "skipped")

# --- the hour's buckets ---------------------------------------------------------------------

calls = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(STATUSES),
        st.integers(0, 20),
        st.integers(0, 90_000),
        st.booleans(),
    ),
    max_size=40,
)


def _feed(activity: Activity, items: list[tuple[str, str, int, int, bool]]) -> None:
    for name, status, results, latency, asked in items:
        report = EngineReport(name, status, results=results, latency_ms=latency, error="x")  # type: ignore[arg-type]
        activity.record(report, "the query", asked=asked)


@given(calls, st.integers(0, 40))
def test_the_hours_figures_add_up_and_merge_like_one_process(items: list, cut: int) -> None:
    clock = FakeClock(1_000_000.0)
    whole, first, second = Activity(clock), Activity(clock), Activity(clock)
    _feed(whole, items)
    _feed(first, items[:cut])
    _feed(second, items[cut:])
    merged = merge([first.snapshot(), second.snapshot()])
    for name in ("a", "b"):
        mine = [i for i in items if i[0] == name]
        figures = hour_figures(merge([whole.snapshot()]), name, clock())
        assert figures == hour_figures(merged, name, clock())
        skipped = sum(1 for i in mine if i[1] == "skipped" or not i[4])
        assert figures["skipped"] == skipped
        assert figures["calls"] == len(mine) - skipped
        assert sum(figures["statuses"].values()) == len(mine)
        answered = sum(1 for i in mine if i[4] and i[1] in ("ok", "empty", "irrelevant"))
        assert figures["answered"] == answered
        if figures["calls"]:
            assert figures["success_share"] == answered / figures["calls"]
            assert (figures["success_share"] == 1.0) == (answered == figures["calls"])
            assert figures["latency_p50_ms"] <= figures["latency_p95_ms"]


def test_a_share_short_of_all_never_reads_as_all() -> None:
    clock = FakeClock(1_000_000.0)
    activity = Activity(clock)
    for _ in range(1999):
        activity.record(EngineReport("a", "ok", latency_ms=120), "q")
    activity.record(EngineReport("a", "error", latency_ms=120), "q")
    figures = hour_figures(merge([activity.snapshot()]), "a", clock())
    assert figures["calls"] == 2000 and figures["answered"] == 1999
    assert figures["success_share"] == figures["minutes"]["success_share"][-1] == 0.9995


def test_minutes_older_than_the_hour_are_dropped() -> None:
    clock = FakeClock(1_000_000.0)
    activity = Activity(clock)
    for _ in range(MINUTES + 5):
        activity.record(EngineReport("a", "ok", latency_ms=120), "q")
        activity.searched()
        clock.advance(60)
    assert len(activity.engines) == MINUTES and len(activity.searches) == MINUTES
    figures = hour_figures(merge([activity.snapshot()]), "a", clock())
    # The current minute has had no call yet: the hour holds the 59 minutes before it.
    assert figures["calls"] == MINUTES - 1
    assert figures["minutes"]["success_share"] == [1.0] * (MINUTES - 1) + [None]


def test_a_kept_error_has_no_query_and_is_short() -> None:
    activity = Activity(FakeClock(1_000_000.0))
    query = "where is my secret garden"
    error = f"bad request for {query}: " + "x" * 500
    activity.record(EngineReport("a", "error", latency_ms=5, error=error), query)
    _, status, text = activity.last_errors["a"]
    assert status == "error" and query not in text and "<query>" in text
    assert len(text) == MAX_ERROR_CHARS


def test_a_query_an_api_error_quotes_and_cuts_short_is_masked_too() -> None:
    activity = Activity(FakeClock(1_000_000.0))
    query = " ".join(["marmalade zebra quasar lighthouse"] * 9)
    error = plain_text(f"bad query: {query}", 200)  # an API's error, as an engine keeps it
    activity.record(EngineReport("a", "error", latency_ms=5, error=error), query)
    assert activity.last_errors["a"][2] == "bad query: <query>…"
    # Cut three characters into the query: those are the query's too.
    activity.record(EngineReport("a", "error", latency_ms=5, error="bad query: mar…"), query)
    assert activity.last_errors["a"][2] == "bad query: <query>…"


def test_percentiles_read_from_the_histogram_are_within_a_bucket() -> None:
    assert percentile({}, 0.5) is None
    # Half of two calls fell within the first bucket: that is the median.
    assert percentile({0: 1, 20: 1}, 0.5) == LATENCY_BOUNDS_MS[0]
    activity = Activity(FakeClock(1_000_000.0))
    for ms in range(1, 1001):  # 1 ms .. 1 s, evenly
        activity.record(EngineReport("a", "ok", latency_ms=ms), "q")
    figures = hour_figures(merge([activity.snapshot()]), "a", 1_000_000.0)
    assert 500 <= figures["latency_p50_ms"] <= 500 * 1.25
    assert 950 <= figures["latency_p95_ms"] <= 950 * 1.25
    assert figures["latency_p95_ms"] in LATENCY_BOUNDS_MS


def test_a_call_as_long_as_the_longest_deadline_is_not_shown_shorter() -> None:
    # An engine cut off at the deadline took the whole deadline (`search.deadline_seconds`, up
    # to 120 s).
    for ms in (61_000, 90_000, 120_000):
        activity = Activity(FakeClock(1_000_000.0))
        activity.record(EngineReport("a", "timeout", latency_ms=ms, error="deadline"), "q")
        figures = hour_figures(merge([activity.snapshot()]), "a", 1_000_000.0)
        assert ms <= figures["latency_p50_ms"] <= ms * 1.25, ms
        assert figures["minutes"]["latency_p50_ms"][-1] == figures["latency_p50_ms"]


def test_a_single_call_is_shown_within_a_quarter_of_its_length() -> None:
    # docs: a percentile read from the histogram is within a quarter of the true one.
    for ms in (11, 37, 150, 999, 4_321, 33_333, 100_000):
        activity = Activity(FakeClock(1_000_000.0))
        activity.record(EngineReport("a", "ok", latency_ms=ms), "q")
        figures = hour_figures(merge([activity.snapshot()]), "a", 1_000_000.0)
        assert ms <= figures["latency_p50_ms"] <= ms * 1.25, ms


def test_worker_snapshots_are_read_together(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    one, two = Activity(clock), Activity(clock)
    one.record(EngineReport("a", "ok", latency_ms=50), "q")
    two.record(EngineReport("a", "error", latency_ms=70, error="HTTP 500"), "q")
    write_snapshot(tmp_path, one.snapshot(), pid=11)
    write_snapshot(tmp_path, two.snapshot(), pid=12)
    (tmp_path / "13.json").write_text("{half a fi")  # being replaced: skipped
    snapshots = read_snapshots(tmp_path)
    assert len(snapshots) == 2
    figures = hour_figures(merge(snapshots), "a", clock())
    assert figures["calls"] == 2 and figures["statuses"] == {"error": 1, "ok": 1}


def test_the_latest_error_of_any_worker_is_shown_while_it_is_in_the_hour() -> None:
    clock = FakeClock(1_000_020.0)
    early, late = Activity(clock), Activity(clock)
    early.record(EngineReport("a", "error", latency_ms=5, error="HTTP 500"), "q")
    clock.advance(30)
    late.record(EngineReport("a", "timeout", latency_ms=5, error="no answer"), "q")
    for snapshots in ([early.snapshot(), late.snapshot()], [late.snapshot(), early.snapshot()]):
        shown = last_error(merge(snapshots), "a", clock())
        assert shown is not None and shown[1:] == ["timeout", "no answer"]
    merged = merge([late.snapshot()])
    # The hour is this minute and the 59 before it, as its figures are.
    assert last_error(merged, "a", clock() + (MINUTES - 1) * 60) is not None
    assert last_error(merged, "a", clock() + MINUTES * 60) is None


# --- the page and the table -----------------------------------------------------------------


def _report(text: str) -> dict[str, Any]:
    activity = Activity(FakeClock(1_000_000.0))
    activity.record(EngineReport("a", "blocked", latency_ms=50, error=text), "q")
    return {
        "generated_at": "2026-01-01T00:00:00Z",
        "service": {
            "version": "1",
            "replica": "<host>",
            "pid": 1,
            "started_at": "2026-01-01T00:00:00Z",
            "uptime_seconds": 5,
            "workers": {"configured": 1, "reporting": 1, "ended": 0},
            "figures": "process",
            "shared_state": "memory",
            "searches_per_minute": 1.0,
            "cache": {
                "backend": "none",
                "hits": 0,
                "misses": 0,
                "hit_share": None,
                "size_bytes": 0,
            },
            "single_flight_joins": 0,
            "extract_workers": 2,
            "exposure": {"address": "127.0.0.1:1", "tokens_required": True, "tokens": 2},
        },
        "engines": [
            {
                "name": "a",
                "state": "blocked",
                "seconds_left": 3000.0,
                "keys": {"configured": 0, "resting": 0},
                "last_error": {"at": "2026-01-01T00:00:00Z", "status": "blocked", "text": text},
                "hour": hour_figures(merge([activity.snapshot()]), "a", 1_000_000.0),
            }
        ],
    }


def test_the_page_escapes_every_text_and_loads_nothing_from_outside() -> None:
    page = render_page(_report('<script>alert("x")</script> <img src="https://evil.example/">'))
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;host&gt;" in page
    assert not re.search(r"""<[^>]*\s(src|href)\s*=|url\(|@import|<script|<link""", page)
    assert '<meta http-equiv="refresh" content="30">' in page
    assert 'name="viewport"' in page
    assert 'data-engine="a" data-state="blocked"' in page and "blocked, 50 min left" in page
    # The hour's one minute: a bar all red (nothing answered) and a dot at its latency.
    assert 'fill="#f8b4b4"' in page and "<circle" in page


@pytest.mark.parametrize(
    ("answered", "calls", "shown"),
    [(2499, 2500, "99.9%"), (399, 400, "99.7%"), (400, 400, "100%"), (1, 400, "0.3%"),
     (0, 400, "0%"), (1, 3, "33%")],
)  # fmt: skip
def test_a_share_short_of_all_never_reads_as_all_on_the_page_or_in_the_table(
    answered: int, calls: int, shown: str
) -> None:
    # Whole percents rounded 399 of 400 calls to "100%": the failures an operator looks for.
    report = _report("CAPTCHA page")
    report["engines"][0]["hour"].update(calls=calls, answered=answered)
    report["service"]["cache"].update(hits=answered, misses=calls - answered)
    assert f'data-label="Success" class="n">{shown}<' in render_page(report)
    assert f"hit share {shown}" in render_page(report)
    table = render_table(report)
    assert f" {shown} " in table.splitlines()[1]
    assert f"hit share {shown};" in table


def test_the_table_has_a_line_per_engine() -> None:
    text = render_table(_report("CAPTCHA page"))
    head, row = text.splitlines()[:2]
    assert head.split()[:3] == ["engine", "state", "calls"]
    assert row.startswith("a ") and "blocked, 50 min left" in row and "CAPTCHA page" in row
    assert "tokens required" in text


def test_workers_that_ended_within_the_hour_are_said_so() -> None:
    report = _report("CAPTCHA page")
    report["service"]["workers"] = {"configured": 2, "reporting": 3, "ended": 1}
    assert "3 reporting of 2 (1 ended within the hour)" in render_page(report)
    assert ", up 5 s, 3 worker(s) (1 ended);" in render_table(report)
    del report["service"]["workers"]["ended"]  # asked of a server of an earlier release
    assert ", up 5 s, 3 worker(s);" in render_table(report)


def test_the_table_prints_the_joiners_of_a_word_and_no_terminal_action() -> None:
    error = "\u062a\u0645\u0627\u0645\u200c\u0634\u062f \U0001f468\u200d\U0001f469 \x1b[2J"
    row = render_table(_report(error)).splitlines()[1]
    assert "\u200c\u0634\u062f \U0001f468\u200d\U0001f469 ?[2J" in row


# --- a real server over fake engines in every state -----------------------------------------


@pytest.fixture
def fake(engine_results: Any) -> FakeEngines:
    return faulted(FakeEngines(engine_results))


@pytest.fixture
def mix(engines_url: str) -> Iterator[str]:
    """The service on the faulted engines, open (loopback, no tokens); each engine asked."""
    with serving_mix(engines_url, ["python asyncio event loop"]) as url:
        yield url


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in report["engines"]}


def test_each_engine_shows_its_true_state_and_the_hour_adds_up(mix: str, fake: FakeEngines) -> None:
    for query in ("asyncio coroutines", "asyncio tasks and futures"):
        search(mix, query)
    report = httpx.get(f"{mix}/status.json", timeout=10).json()
    rows = _rows(report)
    assert {name: rows[name]["state"] for name in EXPECTED} == EXPECTED
    assert RETRY_AFTER - 30 < rows["brave"]["seconds_left"] <= RETRY_AFTER
    assert rows["brave"]["keys"] == {"configured": 1, "resting": 1}
    assert 3000 < rows["bing"]["seconds_left"] <= 3600
    assert 500 < rows["wikipedia"]["seconds_left"] <= 600
    # Every request an engine received is one call; the searches after a failure skip it.
    for name in ("searxng", "brave", "bing", "wikipedia"):
        hour = rows[name]["hour"]
        assert hour["calls"] == fake.counts[name], name
        assert hour["calls"] + hour["skipped"] == 3, name
    assert rows["searxng"]["hour"]["success_share"] == 1.0
    assert rows["searxng"]["hour"]["results_per_call"] == 3.0
    assert rows["bing"]["last_error"]["status"] == "blocked"
    assert rows["brave"]["last_error"]["status"] == "rate_limited"
    assert rows["tavily"]["hour"]["calls"] == 0 and rows["tavily"]["keys"]["configured"] == 0
    service = report["service"]
    assert service["searches_per_minute"] == 3.0
    assert service["exposure"]["tokens_required"] is False
    assert service["figures"] == "process" and service["workers"]["reporting"] == 1
    page = httpx.get(f"{mix}/status", timeout=10)
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    shown = dict(re.findall(r'data-engine="(\w+)" data-state="(\w+)"', page.text))
    assert {name: shown[name] for name in EXPECTED} == EXPECTED


def test_metrics_count_the_calls_the_status_page_counts(mix: str, fake: FakeEngines) -> None:
    # A search that sent an engine nothing (its key resting, its breaker open) is `skipped`
    # on /metrics too, not a call with the status its report gives.
    for query in ("asyncio coroutines", "asyncio tasks and futures"):
        search(mix, query)
    rows = _rows(httpx.get(f"{mix}/status.json", timeout=10).json())
    metrics = httpx.get(f"{mix}/metrics", timeout=10).text
    found = re.findall(
        r'websearch_engine_calls_total\{engine="(\w+)",status="(\w+)"\} ([0-9.]+)', metrics
    )
    for name in ("brave", "bing", "wikipedia"):
        counted = {status: float(n) for engine, status, n in found if engine == name}
        sent = sum(n for status, n in counted.items() if status != "skipped")
        assert sent == rows[name]["hour"]["calls"] == fake.counts[name], (name, counted)
        assert counted.get("skipped", 0) == rows[name]["hour"]["skipped"], name


def test_an_engine_whose_every_key_was_refused_shows_it(
    engines_url: str, fake: FakeEngines
) -> None:
    fake.faults["brave"] = Fault(status=401, body='{"error": "bad key"}')
    with serve_app(create_app(settings_for(engines_url, brave=True))) as url:
        search(url, "python asyncio")
        brave = _rows(httpx.get(f"{url}/status.json", timeout=10).json())["brave"]
        page = httpx.get(f"{url}/status", timeout=10).text
    assert brave["state"] == "keys_refused" and brave["seconds_left"] > 0
    assert brave["keys"] == {"configured": 1, "resting": 1}
    assert 'data-engine="brave" data-state="keys_refused"' in page and "keys refused, " in page


def test_a_failure_older_than_the_hour_is_no_last_error(
    engines_url: str, fake: FakeEngines
) -> None:
    settings = mix_settings(engines_url)
    service = SearchService(settings)
    # The searches happen two hours ago by the clock of the hour's figures.
    service.orchestrator.activity = Activity(FakeClock(time.time() - 2 * 3600))
    with serve_app(create_app(settings, service)) as url:
        search(url, "python asyncio event loop")
        rows = _rows(httpx.get(f"{url}/status.json", timeout=10).json())
    for name in ("brave", "bing", "wikipedia"):
        assert rows[name]["hour"]["calls"] == 0, name
        assert rows[name]["last_error"] is None, name
    # Their breakers are open still: why is no longer in the hour's figures.
    assert rows["bing"]["state"] == "breaker_open"


def test_a_search_its_rate_limit_left_no_slot_for_made_no_call(
    engines_url: str, fake: FakeEngines
) -> None:
    """`calls` are the requests the engine received: a search that found no slot of the
    engine's own rate limit sent none, and counts as `skipped`, as with every key resting."""
    settings = settings_for(engines_url)
    settings.engines["searxng"] = settings.engines["searxng"].model_copy(
        update={"rate_limit": 0.01}
    )
    with serve_app(create_app(settings)) as url:
        first = search(url, "python asyncio event loop")
        second = search(url, "python asyncio tasks")
        rows = _rows(httpx.get(f"{url}/status.json", timeout=10).json())
    assert (first["searxng"]["status"], second["searxng"]["status"]) == ("ok", "rate_limited")
    hour = rows["searxng"]["hour"]
    assert hour["calls"] == fake.counts["searxng"] == 1
    assert hour["skipped"] == 1 and hour["success_share"] == 1.0


def _basic(user: str, password: str) -> dict[str, str]:
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def test_basic_and_bearer_open_it_and_nothing_else_does(engines_url: str) -> None:
    server = {"auth_tokens": [TOKEN], "auth_failures_per_minute": 1, "auth_failure_burst": 4}
    with serve_app(create_app(mix_settings(engines_url, server))) as url:
        for path in ("/status", "/status.json"):
            for headers in ({"Authorization": f"Bearer {TOKEN}"}, _basic("anyone", TOKEN)):
                opened = httpx.get(url + path, headers=headers)
                assert opened.status_code == 200, path
                # Kept by no browser or proxy, for the next one who asks without the token.
                assert opened.headers["cache-control"] == "no-store", path
            refused = httpx.get(url + path)
            assert refused.status_code == 401
            challenges = refused.headers.get_list("www-authenticate")
            assert any(c.startswith("Basic ") for c in challenges)
            assert any(c.startswith("Bearer ") for c in challenges)
            assert httpx.get(url + path, headers=_basic(TOKEN, "wrong")).status_code == 401
        # Failed attempts count toward the throttle: four refused, then even the token waits.
        throttled = httpx.get(f"{url}/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert throttled.status_code == 429 and "retry-after" in throttled.headers


def _planted() -> dict[str, str]:
    """A distinct key for every keyed engine (Google's CSE takes `<cx>:<key>`)."""
    keys = {name: f"PLANTED{name.upper()}x0123456789secret" for name in ENGINES}
    keys["google_cse"] = "cx0123456789planted:" + keys["google_cse"]
    return {name: key for name, key in keys.items() if ENGINES[name].needs_key}


def _secret_settings(engines_url: str, keys: dict[str, str]) -> Any:
    urls = base_urls(engines_url)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name, key in keys.items():
        base = urls.get(name, f"{engines_url}/other/{name}")
        engines[name] = {"enabled": True, "api_keys": [key], "base_url": base}
    return parse_config(
        {
            "engines": engines,
            "search": {"deadline_seconds": 3},
            "cache": {"backend": "none"},
            "proxy": {"url": "http://user:proxy-pass-0123456789@127.0.0.1:9", "no_proxy": "*"},
            "server": {"auth_tokens": [TOKEN], "rate_limit_per_minute": 0},
        },
        "test",
        environ={},
    )


def test_no_key_token_proxy_password_or_query_is_shown(engines_url: str, fake: FakeEngines) -> None:
    keys = _planted()
    query = "zebra quasar marmalade"
    for name, key in keys.items():  # every keyed API refuses its key, quoting it and the query
        error = f"invalid api key {key} for {query} (GET /x?q={quote(query, safe='')})"
        body = json.dumps({"error": error, "message": key})
        fake.faults[name] = Fault(status=401, body=body)
    settings = _secret_settings(engines_url, keys)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with serve_app(create_app(settings)) as url:
        # Every engine fails: the searches' own answers are not what this test looks at.
        httpx.get(f"{url}/search", params={"q": query, "format": "json"}, headers=auth, timeout=20)
        academic = tool_call({"query": query}, "academic_search")
        httpx.post(f"{url}/mcp", json=academic, headers={**MCP_HEADERS, **auth}, timeout=20)
        shown = [
            httpx.get(f"{url}/status.json", headers=auth).text,
            httpx.get(f"{url}/status", headers=auth).text,
        ]
    rows = _rows(json.loads(shown[0]))
    assert all(rows[name]["last_error"] for name in keys), "every keyed engine failed"
    secrets = [*keys.values(), TOKEN, "proxy-pass-0123456789", query]
    secrets += [part for key in keys.values() for part in key.split(":")]
    for text in shown:
        for secret in secrets:
            for form in {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}:
                assert form not in text, secret


def test_the_cli_prints_the_table_with_the_token_from_the_environment(
    engines_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve_app(create_app(mix_settings(engines_url, {"auth_tokens": [TOKEN]}))) as url:
        search(url, "python asyncio", {"Authorization": f"Bearer {TOKEN}"})
        monkeypatch.delenv("WEBSEARCH_MCP_TOKENS", raising=False)
        assert cli_main(["status", "--url", url]) == 1
        err = capsys.readouterr().err
        assert "answered 401 (set $WEBSEARCH_MCP_TOKENS or server.auth_tokens)" in err
        monkeypatch.setenv("WEBSEARCH_MCP_TOKENS", f"{TOKEN},another-token-0123456789")
        assert cli_main(["status", "--url", url]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "blocked, 1 h left" in lines["bing"]
    assert "rate limited" in lines["brave"] and "ok" in lines["searxng"]
    assert TOKEN not in out and BRAVE_KEY not in out


def test_the_cli_shows_how_many_of_an_engines_keys_rest(
    engines_url: str, fake: FakeEngines, capsys: pytest.CaptureFixture[str]
) -> None:
    second = "brave-test-key-2"
    fake.faults.pop("brave")
    fake.key_faults[second] = Fault(status=429, body='{"error": "slow down"}', retry_after="120")
    settings = mix_settings(engines_url)
    settings.engines["brave"].api_keys.append(second)
    with serve_app(create_app(settings)) as url:
        for query in ("python asyncio", "python asyncio tasks"):  # each key once
            search(url, query)
        assert cli_main(["status", "--url", url]) == 0
        rows = _rows(httpx.get(f"{url}/status.json", timeout=10).json())
    assert fake.key_counts == {BRAVE_KEY: 2, second: 1}
    assert rows["brave"]["state"] == "ok"
    assert rows["brave"]["keys"] == {"configured": 2, "resting": 1}
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("brave "))
    assert "2 (1 resting)" in line


def test_the_cli_prints_no_control_character_an_engine_sent(
    engines_url: str, fake: FakeEngines, capsys: pytest.CaptureFixture[str]
) -> None:
    # A SearXNG instance names its own engines in its answer: an escape sequence there (clear
    # the screen, write the clipboard) must not reach the operator's terminal.
    silent = [["\x1b[2J\x1b[Hgoogle\x1b]52;c;cm0gLXJmIH4=\x07", "time\x1b[8mout"]]
    body = json.dumps({"results": [], "unresponsive_engines": silent})
    fake.faults["searxng"] = Fault(status=200, body=body)
    with serve_app(create_app(mix_settings(engines_url))) as url:
        httpx.get(f"{url}/search", params={"q": "python asyncio", "format": "json"}, timeout=20)
        assert cli_main(["status", "--url", url]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("searxng "))
    assert "did not answer: " in line
    assert [c for c in out if not c.isprintable() and c != "\n"] == []


def test_the_cli_sends_the_token_of_the_configuration_file(
    engines_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's own file holds its tokens: the same file is all `status` needs.
    config = tmp_path / "websearch-mcp.yaml"
    config.write_text(f"server:\n  auth_tokens: [{TOKEN}]\n", encoding="utf-8")
    monkeypatch.delenv("WEBSEARCH_MCP_TOKENS", raising=False)
    monkeypatch.delenv("WEBSEARCH_MCP_CONFIG", raising=False)
    with serve_app(create_app(mix_settings(engines_url, {"auth_tokens": [TOKEN]}))) as url:
        assert cli_main(["status", "--config", str(config), "--url", url, "--json"]) == 0


@pytest.mark.parametrize(
    ("listening", "host"), [("::1", "::1"), ("::1", "::"), ("127.0.0.1", "0.0.0.0")]
)
def test_the_cli_finds_the_server_its_file_describes(
    engines_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listening: str, host: str
) -> None:
    # On the server's machine the server's file is all it needs: where that server listens is
    # in it (a wildcard address is reached on loopback).
    monkeypatch.delenv("WEBSEARCH_MCP_TOKENS", raising=False)
    monkeypatch.delenv("WEBSEARCH_MCP_CONFIG", raising=False)
    with serve_app(create_app(mix_settings(engines_url)), host=listening) as url:
        config = tmp_path / "websearch-mcp.yaml"
        port = urlsplit(url).port
        config.write_text(f"server:\n  host: '{host}'\n  port: {port}\n", encoding="utf-8")
        assert cli_main(["status", "--config", str(config), "--json"]) == 0


def test_the_cli_asks_a_server_on_this_machine_directly_whatever_the_proxy_variables(
    engines_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A proxy set for the engines (HTTP_PROXY) cannot reach this machine's loopback, and would
    # be handed the token in clear.
    with (
        LocalServer() as proxy,
        serve_app(create_app(mix_settings(engines_url, {"auth_tokens": [TOKEN]}))) as url,
    ):
        monkeypatch.setenv("HTTP_PROXY", proxy.url(""))
        monkeypatch.setenv("ALL_PROXY", proxy.url(""))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.setenv("WEBSEARCH_MCP_TOKENS", TOKEN)
        assert cli_main(["status", "--json", "--url", url]) == 0
        assert cli_main(["status", "--json", "--url", url.replace("127.0.0.1", "localhost")]) == 0
        assert cli_main(["status", "--json", "--url", f"{url}/"]) == 0  # as a browser shows it
    assert proxy.seen == []
    assert json.loads(capsys.readouterr().out.splitlines()[0])["service"]


def test_the_cli_asks_another_machine_through_the_proxy_its_variables_name() -> None:
    """As the engines read them: `NO_PROXY` networks (which httpx's own reading takes for one
    host) and `proxy.no_proxy` exempt a server; none is proxied on this machine."""
    env = {"HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "10.0.0.0/8,.internal"}
    assert status_proxy("https://10.1.2.3:8338", [], env) is None
    assert status_proxy("https://search.internal", [], env) is None
    assert status_proxy("https://192.0.2.7", ["192.0.2.0/24"], env) is None
    assert status_proxy("https://192.0.2.7", [], env) == "http://proxy.corp:3128"
    assert status_proxy("http://127.0.0.1:8338", [], {"ALL_PROXY": "http://p:1"}) is None
    # Without --url, the server its file describes is on this machine, whatever its address.
    settings = parse_config({"server": {"host": "192.0.2.7", "port": 8338}}, "f", environ={})
    assert status_target(None, settings, env) == ("http://192.0.2.7:8338", None)
    assert status_target("https://192.0.2.7/", settings, env) == (
        "https://192.0.2.7",
        "http://proxy.corp:3128",
    )


def test_replicas_share_breakers_and_keys_and_show_their_own_hour(
    engines_url: str, fake: FakeEngines, redis_server: RedisServer
) -> None:
    assert redis_server.command("FLUSHALL") == b"+OK"
    cache = {"backend": "redis", "redis_url": redis_server.url}
    settings = mix_settings(engines_url).model_copy(
        update={"cache": parse_config({"cache": cache}, "test", environ={}).cache}
    )
    with serve_app(create_app(settings)) as one, serve_app(create_app(settings)) as two:
        search(one, "python asyncio event loop")
        time.sleep(MAX_AGE_SECONDS + 0.1)  # the other replica's recent reads have aged
        mine = _rows(httpx.get(f"{one}/status.json", timeout=10).json())
        other = httpx.get(f"{two}/status.json", timeout=10).json()
    assert other["service"]["shared_state"] == "redis"
    theirs = _rows(other)
    # The state is shared; which failure opened a breaker is known where it was seen.
    assert {name: mine[name]["state"] for name in EXPECTED} == EXPECTED
    assert {name: theirs[name]["state"] for name in EXPECTED} == {
        **EXPECTED,
        "bing": "breaker_open",
    }
    assert theirs["brave"]["keys"] == {"configured": 1, "resting": 1}
    for name in ("searxng", "brave", "bing", "wikipedia"):
        assert mine[name]["hour"]["calls"] == 1 and theirs[name]["hour"]["calls"] == 0, name


async def test_the_breakers_state_is_read_without_claiming_its_probe() -> None:
    clock = FakeClock(1_000_000.0)
    breaker = CircuitBreaker("a", MemoryCooldownStore(), clock=clock)
    assert await breaker.state() is None
    await breaker.failure("error", "HTTP 500")
    opened = await breaker.state()
    assert opened is not None and not opened.probing and opened.seconds_left == 5.0
    clock.advance(6)
    for _ in range(2):  # looking twice claims nothing
        half = await breaker.state()
        assert half is not None and half.probing and half.seconds_left == 0.0
    assert await breaker.check() is None  # the probe is still there for a search to take
    await breaker.success()
    assert await breaker.state() is None


@pytest.mark.parametrize("body", ["<html>Sign in</html>", "[1, 2]", '{"engines": "none"}'])
def test_the_cli_says_when_the_url_answers_no_status_report(
    body: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Another service on the port given (or a sign-in page in front of the server) answers 200.
    with LocalServer(routes={"/status.json": page(body)}) as other:
        url = other.url("")
        assert cli_main(["status", "--url", url]) == 1
        assert cli_main(["status", "--url", url, "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"error: {url}/status.json answered no status report" in err


def test_the_cli_json_holds_no_character_a_terminal_would_act_on(
    engines_url: str, fake: FakeEngines, capsys: pytest.CaptureFixture[str]
) -> None:
    # An engine's error text, shown as it came: a C1 control (CSI) would clear the screen.
    answer = {"results": [], "unresponsive_engines": [["google\x9b2J\x9b8m", "timeout"]]}
    fake.bodies["searxng"] = Body(json.dumps(answer).encode())
    with serve_app(create_app(mix_settings(engines_url))) as url:
        body = tool_call({"query": "python asyncio"})
        httpx.post(f"{url}/mcp", json=body, headers=MCP_HEADERS, timeout=20)
        assert cli_main(["status", "--json", "--url", url]) == 0
    out = capsys.readouterr().out
    assert [c for c in out if not c.isprintable() and c != "\n"] == []
    report = json.loads(out)
    # The text is kept, without its controls (engines' texts lose them as results' do).
    assert "google2J8m" in json.dumps(report, ensure_ascii=False)


def test_the_cli_json_of_any_report_holds_no_character_a_terminal_would_act_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The report is printed as the server at the URL sent it, whichever server that is: its
    # controls (a CSI that would clear the screen) are escaped, never written to the terminal.
    report = {"engines": [{"name": "google\x9b2J", "status": "error\x1b[8m"}]}
    with LocalServer(routes={"/status.json": page(json.dumps(report))}) as other:
        assert cli_main(["status", "--json", "--url", other.url("")]) == 0
    out = capsys.readouterr().out
    assert [c for c in out if not c.isprintable() and c != "\n"] == []
    assert json.loads(out) == report


def test_a_query_an_api_error_quotes_as_ascii_json_is_masked() -> None:
    """An API that writes its error as JSON escapes a non-ASCII query (`caf\\u00e9`): the kept
    error (on the status page) must not show the query in that form either."""
    activity = Activity(FakeClock(1_000_000.0))
    query = "café münchen öffnungszeiten"
    error = "bad request: " + json.dumps({"q": query})  # ensure_ascii: caf\u00e9 ...
    assert "\\u00e9" in error
    activity.record(EngineReport("a", "error", latency_ms=5, error=error), query)
    text = activity.last_errors["a"][2]
    assert "caf\\u00e9" not in text and "<query>" in text, text


def test_a_disabled_engine_is_named_below_the_table_not_given_a_row() -> None:
    report = _report("CAPTCHA page")
    off = copy.deepcopy(report["engines"][0])
    off.update(name="offline", state="disabled", seconds_left=None, last_error=None)
    report["engines"].append(off)
    page = render_page(report)
    assert '<tr data-engine="offline"' not in page
    assert '<span data-engine="offline" data-state="disabled">offline</span>' in page
    assert '<tr data-engine="a" data-state="blocked">' in page


def test_the_report_counts_the_configured_tokens() -> None:
    settings = parse_config(
        {"server": {"auth_tokens": ["tok-one-0123456789", "tok-two-0123456789"]}}, "t", environ={}
    )
    shown = exposure(settings, ("127.0.0.1", 8338))
    assert shown["tokens"] == 2 and shown["tokens_required"] is True
    assert "tok-one" not in repr(shown)


def test_rows_are_the_enabled_engines_then_the_disabled_ones_the_configuration_names() -> None:
    def run(name: str, enabled: bool) -> Any:
        return SimpleNamespace(name=name, enabled=enabled)

    runs = {
        r.name: r for r in (run("off1", False), run("b", True), run("off2", False), run("a", True))
    }
    source: Any = SimpleNamespace(
        service=SimpleNamespace(orchestrator=SimpleNamespace(runs=runs)),
        settings=SimpleNamespace(engines={"off2": object()}),
    )
    assert [r.name for r in shown_engines(source)] == ["b", "a", "off2"]


async def test_the_servers_uptime_is_its_oldest_workers(tmp_path: Path) -> None:
    settings = parse_config({"cache": {"backend": "none"}}, "t", environ={})
    service = SearchService(settings)
    now = time.time()
    # Another worker, started an hour before this one (a replacement, say).
    other = {
        **Activity().snapshot(),
        "process": {"pid": os.getpid() + 1, "started": now - 3600, "single_flight_joins": 0},
    }
    write_snapshot(tmp_path, other, pid=os.getpid() + 1)
    try:
        source = StatusSource(service, settings, Metrics(), started=now, shared=tmp_path)
        report = await status_report(source)
    finally:
        await service.close()
    assert report["service"]["workers"]["reporting"] == 2
    assert report["service"]["uptime_seconds"] >= 3600


async def test_the_report_redacts_every_configured_secret_itself() -> None:
    key = "PLANTEDbravex0123456789secret"
    settings = parse_config(
        {"cache": {"backend": "none"}, "engines": {"brave": {"api_keys": [key]}}}, "t", environ={}
    )
    service = SearchService(settings)
    service.orchestrator.activity.record(
        EngineReport("brave", "error", latency_ms=5, error=f"HTTP 401 for key {key}"), "q"
    )
    try:
        source = StatusSource(service, settings, Metrics(), started=time.time())
        report = await status_report(source)
    finally:
        await service.close()
    text = json.dumps(report)
    assert "HTTP 401 for key" in text and key not in text
