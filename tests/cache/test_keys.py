"""Cache keys: query normalisation, argument canonicalisation, config fingerprints."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict, dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from websearch_mcp.cache import cache_key, config_fingerprint, normalise_query
from websearch_mcp.config import EngineSettings, SearchSettings
from websearch_mcp.models import Query
from websearch_mcp.search.service import _query_args


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  Rust   async\tbook\n", "rust async book"),
        ("Ｒｕｓｔ　ＡＳＹＮＣ", "rust async"),  # full-width letters and ideographic space (NFKC)
        ("ÉCOLE normale", "école normale"),
        ("Straße", "strasse"),  # case folding, not just lower-casing
        ("ﬁle\u00a0system", "file system"),  # ligature and no-break space
        ("e\u0301clair", "éclair"),  # combining accent composed
        ("\u01f0", "\u01f0"),  # case folding decomposes it; NFKC composes it again
        ("", ""),
        ("kappa OR lambda", "kappa OR lambda"),  # an operator engines read only in capitals
        ("Kappa Or NOT", "kappa or NOT"),
        ("ｎｏｔ ＡＮＤ", "not AND"),
    ],
)
def test_normalise_query(raw: str, expected: str) -> None:
    assert normalise_query(raw) == expected


@given(st.text())
def test_normalise_query_is_idempotent(text: str) -> None:
    once = normalise_query(text)
    assert normalise_query(once) == once


def key(query: str = "rust async", **args: object) -> str:
    return cache_key("web_search", query, {"max_results": 10, **args}, "fp1")


def test_equivalent_queries_share_a_key_and_the_key_is_a_hash() -> None:
    k = key("Rust  ASYNC")
    assert k == key("rust async") == key(" Ｒｕｓｔ\tasync ")
    assert len(k) == 64 and int(k, 16) >= 0
    assert "rust" not in k


def test_any_difference_that_matters_changes_the_key() -> None:
    base = key()
    others = {
        key("rust sync"),
        key(max_results=11),
        key(time_range="week"),
        key(engines=["bing"]),
        key(engines=["bing", "brave"]),
        cache_key("academic_search", "rust async", {"max_results": 10}, "fp1"),
        cache_key("web_search", "rust async", {"max_results": 10}, "fp2"),
    }
    assert base not in others
    assert len(others) == 7


def test_argument_order_and_absent_values_do_not_change_the_key() -> None:
    a = cache_key("web_search", "q", {"max_results": 5, "language": "en"}, "fp")
    b = cache_key("web_search", "q", {"language": "en", "max_results": 5, "time_range": None}, "fp")
    assert a == b
    assert key(sites={"b", "a"}) == key(sites={"a", "b"})


def test_a_set_argument_gives_the_same_key_in_every_process() -> None:
    """Workers and replicas share the cache: the engines named, a set whose order follows each
    process's string hashing, give one key whatever the process."""
    code = (
        "from websearch_mcp.cache import cache_key;"
        "print(cache_key('web_search', 'q', {'engines': frozenset("
        "['bing', 'brave', 'duckduckgo', 'searxng', 'wikipedia'])}, 'fp'))"
    )
    keys = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "2")
    }
    assert len(keys) == 1


def test_an_argument_without_a_stable_form_is_refused() -> None:
    with pytest.raises(TypeError, match="object"):
        key(thing=object())


def test_fingerprint_is_stable_and_follows_what_shapes_results() -> None:
    search = SearchSettings()
    engines = {"bing": EngineSettings(weight=1.0), "tavily": EngineSettings(max_size=6)}
    fp = config_fingerprint(sorted(engines), engines, search)
    assert len(fp) == 16
    assert fp == config_fingerprint(sorted(engines), dict(reversed(engines.items())), search)
    assert fp != config_fingerprint(sorted(engines), engines, SearchSettings(rrf_k=30))
    changed = {**engines, "bing": EngineSettings(weight=2.0)}
    assert fp != config_fingerprint(sorted(engines), changed, search)
    assert fp != config_fingerprint(["bing"], {"bing": engines["bing"]}, search)


def test_fingerprint_leaves_secrets_out() -> None:
    plain = config_fingerprint({"tavily": EngineSettings()})
    keyed = config_fingerprint({"tavily": EngineSettings(api_keys=["tvly-secret"])})
    assert plain == keyed  # a rotated key keeps the cache, and never feeds the hash
    assert config_fingerprint({"token": "a", "k": 1}) == config_fingerprint({"token": "b", "k": 1})


def test_fingerprint_takes_dataclasses_and_scalars() -> None:
    @dataclass
    class Weights:
        bing: float
        brave: float

    assert config_fingerprint(Weights(1.0, 2.0), 60) == config_fingerprint(Weights(1.0, 2.0), 60)
    assert config_fingerprint(Weights(1.0, 2.0), 60) != config_fingerprint(Weights(2.0, 1.0), 60)


@given(
    st.builds(
        Query,
        text=st.text(max_size=20),
        max_results=st.integers(1, 50),
        time_range=st.sampled_from([None, "day", "week", "month", "year"]),
        language=st.none() | st.text(max_size=5),
        page=st.integers(1, 10),
        year_from=st.none() | st.integers(1900, 2100),
        year_to=st.none() | st.integers(1900, 2100),
    )
)
def test_a_searchs_key_takes_every_field_of_its_query_but_the_text(query: Query) -> None:
    expected = {name: value for name, value in asdict(query).items() if name != "text"}
    assert _query_args(query) == expected


def test_keys_stay_the_same_from_one_version_to_the_next() -> None:
    # A changed key empties every cache on upgrade: only a change of what is stored may do that.
    fingerprint = config_fingerprint([1.5, -0.0], {"a": None, "b": {3, 1}, "c": "x"})
    arguments = {"max_results": 10, "engines": ["b", "a"], "x": None, "t": (1, 2.0)}
    assert fingerprint == "3b3ce16b89ea9a9c"
    assert cache_key("web_search", "Rust  ASYNC", arguments, fingerprint) == (
        "5506504d606a929d4b3a130278b0c9219941d42b94de0639dc576f1cc78e48ff"
    )


@pytest.mark.parametrize(
    "secret",
    [
        "api_key",
        "api_keys",
        "auth_tokens",
        "password",
        "proxy",
        "reader_api_key",
        "redis_url",
        "token",
    ],
)
def test_every_secret_field_is_left_out_of_the_fingerprint(secret: str) -> None:
    assert config_fingerprint({secret: "one", "k": 1}) == config_fingerprint(
        {secret: "two", "k": 1}
    )


def test_the_reader_key_is_left_out_of_the_page_cache_fingerprint() -> None:
    from websearch_mcp.config import FetchSettings

    one = config_fingerprint(FetchSettings(reader_api_key="jina-key-one"))
    assert one == config_fingerprint(FetchSettings(reader_api_key="jina-key-two"))


def test_an_engines_proxy_password_is_left_out_of_the_search_fingerprint() -> None:
    from websearch_mcp.config import Settings
    from websearch_mcp.search.fan_out import Orchestrator

    def fingerprint(password: str) -> str:
        proxy = f"http://user:{password}@127.0.0.1:3128"
        settings = Settings.model_validate({"engines": {"bing": {"proxy": proxy}}})
        return config_fingerprint(Orchestrator(settings, environ={}).configuration())

    # Rotating the password keeps the cache; whether the engine goes through a proxy counts.
    assert fingerprint("hunter2-one") == fingerprint("hunter2-two")
    assert fingerprint("hunter2-one") != config_fingerprint(
        Orchestrator(Settings(), environ={}).configuration()
    )


def test_a_base_url_counts_in_the_search_fingerprint_without_its_password() -> None:
    from websearch_mcp.config import Settings
    from websearch_mcp.search.fan_out import Orchestrator

    def fingerprint(base_url: str) -> str:
        settings = Settings.model_validate({"engines": {"searxng": {"base_url": base_url}}})
        return config_fingerprint(Orchestrator(settings, environ={}).configuration())

    # A SearXNG behind basic authentication: its password rotates, the instance stays.
    one = fingerprint("https://me:hunter2-one@searx.example")
    assert one == fingerprint("https://me:hunter2-two@searx.example")
    assert one == fingerprint("https://searx.example")
    assert one != fingerprint("https://other-searx.example")


def test_the_reader_base_url_counts_in_the_page_fingerprint_without_its_password() -> None:
    from websearch_mcp.config import FetchSettings

    def fingerprint(reader_base_url: str) -> str:
        return config_fingerprint(FetchSettings(reader_base_url=reader_base_url))

    one = fingerprint("https://me:hunter2-one@reader.example")
    assert one == fingerprint("https://me:hunter2-two@reader.example")
    assert one == fingerprint("https://reader.example")
    assert one != fingerprint("https://other-reader.example")


def test_a_password_holding_an_at_sign_is_left_out_of_a_base_urls_fingerprint() -> None:
    # The host follows the last `@` of the authority, as URL parsers read it.
    plain = config_fingerprint({"base_url": "https://searx.example/search"})
    assert config_fingerprint({"base_url": "https://me:p@ss@searx.example/search"}) == plain
