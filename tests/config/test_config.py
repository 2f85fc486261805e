"""Configuration: YAML validation, readable errors, environment overrides, example file, CLI."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from testing.shared import REPO
from websearch_mcp.cli import main
from websearch_mcp.config.loader import CONFIG_TEXT_ENV, read_config_file
from websearch_mcp.config.settings import Settings
from websearch_mcp.errors import ConfigError
from websearch_mcp.search.configuration import load_config, parse_config

EXAMPLE = REPO / "config" / "websearch-mcp.example.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conf.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_serve_keyless_engines_on_loopback() -> None:
    settings = parse_config(None, "built-in defaults", environ={})
    assert (settings.server.host, settings.server.port) == ("127.0.0.1", 8338)
    assert settings.search.rrf_k == 60
    assert settings.cache.ttl_seconds == 6 * 3600


def test_example_file_is_valid_and_complete(tmp_path: Path) -> None:
    settings = load_config(EXAMPLE)
    assert settings.engines["tavily"].max_size == 6
    assert settings.engines["tavily"].min_score == 0.5
    assert settings.search.mmr.lambda_ == 0.95
    text = EXAMPLE.read_text(encoding="utf-8")
    for section in ("server", "search", "cache", "proxy", "fetch", "academic", "engines", "llm"):
        assert f"\n{section}:" in text


def test_unknown_key_names_key_file_and_allowed(tmp_path: Path) -> None:
    path = write(tmp_path, "search:\n  max_resluts: 5\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert "search.max_resluts: unknown key" in message
    assert str(path) in message
    assert "max_results" in message  # the allowed keys are listed
    with pytest.raises(
        ConfigError, match=r"search\.mmr\.lamda: unknown key \(allowed: enabled, lambda\)"
    ):
        parse_config({"search": {"mmr": {"lamda": 0.5}}}, "test", environ={})


def test_unknown_engine_key_lists_engine_options(tmp_path: Path) -> None:
    path = write(tmp_path, "engines:\n  tavily:\n    wieght: 2\n")
    with pytest.raises(
        ConfigError, match=r"engines\.tavily\.wieght: unknown key \(allowed: .*weight"
    ):
        load_config(path)


def test_unknown_engine_name_is_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "engines:\n  altavista: {}\n")
    with pytest.raises(ConfigError, match=r"engines\.altavista: unknown engine \(allowed: .*bing"):
        load_config(path)


def test_bad_value_names_allowed_values(tmp_path: Path) -> None:
    path = write(tmp_path, "search:\n  strategy: fastest\n")
    with pytest.raises(ConfigError, match=r"search\.strategy: .*'hybrid', 'sequential' or 'pool'"):
        load_config(path)


def test_secret_values_are_not_echoed_in_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "engines:\n  tavily:\n    api_keys: {a: tvly-SECRET-123}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "tvly-SECRET-123" not in str(err.value)


SECRET = "tvly-SECRET-123"


@pytest.mark.parametrize(
    "text",
    [
        f"engines:\n  tavily:\n    api_keys: [{SECRET}\n",  # an unclosed list
        f"server:\n  auth_tokens: [{SECRET}] x\n",  # something after the list
        f'llm:\n  api_key: "{SECRET}\n',  # an unclosed quote
    ],
)
def test_a_yaml_error_says_where_without_quoting_the_line(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=r"(?s)invalid YAML.*line \d+, column \d+") as err:
        load_config(path)
    assert SECRET not in str(err.value)
    assert main(["check-config", str(path)]) == 2
    assert SECRET not in capsys.readouterr().err


def test_a_value_in_place_of_a_section_is_not_echoed() -> None:
    with pytest.raises(ConfigError, match=r"engines\.tavily: .*dictionary") as err:
        parse_config({"engines": {"tavily": SECRET}}, "test", environ={})
    assert SECRET not in str(err.value)
    # Nor a block written one level too deep, where a plain value is expected.
    misplaced = {"search": {"strategy": {"tavily": {"api_keys": [SECRET]}}}}
    with pytest.raises(ConfigError, match=r"search\.strategy: ") as err:
        parse_config(misplaced, "test", environ={})
    assert SECRET not in str(err.value)


@pytest.mark.parametrize(
    "data",
    [
        {"engines": {"searxng": {"base_url": "htps://me:pw-SECRET-1@searx.example"}}},
        {"llm": {"base_url": "ftp://me:pw-SECRET-1@llm.example/v1"}},
        {"fetch": {"reader_base_url": "me:pw-SECRET-1@reader.example"}},
    ],
)
def test_a_bad_base_url_is_not_echoed(data: dict) -> None:
    # A base URL may carry a password (a SearXNG behind basic authentication).
    with pytest.raises(ConfigError, match=r"base_url: .*must start with http:// or https") as err:
        parse_config(data, "test", environ={})
    assert "pw-SECRET-1" not in str(err.value)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"llm": {"api_key": ["sk-one"]}}, "llm.api_key"),
        ({"llm": {"api_key": {"key": "sk-one"}}}, "llm.api_key"),
        ({"llm": {"api_key": True}}, "llm.api_key"),  # YAML's `yes`, taken as the key "True"
        ({"fetch": {"reader_api_key": ["jina-one"]}}, "fetch.reader_api_key"),
        ({"server": {"auth_tokens": [["token-one"]]}}, "server.auth_tokens"),
    ],
)
def test_a_secret_that_is_not_text_is_refused_unseen(data: dict, where: str) -> None:
    # Taken as its Python text, a list would have been sent as the key "['sk-one']".
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")) as err:
        parse_config(data, "test", environ={})
    assert "-one" not in str(err.value)


def test_a_numeric_secret_is_its_text() -> None:
    settings = parse_config({"llm": {"api_key": 12345}}, "test", environ={})
    assert settings.llm.api_key == "12345"


def test_a_numeric_engine_key_is_its_text(tmp_path: Path) -> None:
    # A bare all-digit key is a number in YAML: it is taken as text, as every secret is.
    settings = load_config(write(tmp_path, "engines:\n  tavily: {api_keys: [987654321]}\n"))
    assert settings.engines["tavily"].api_keys == ["987654321"]


def test_a_number_in_the_file_is_read_as_written(tmp_path: Path) -> None:
    # YAML 1.1 reads 0777 as octal, 0x1F as hex, 1_000 without its underscore and 12:30 in base
    # 60: a key or token so written was sent as another number's text.
    path = write(
        tmp_path,
        "server:\n  port: 9000\n  auth_tokens: [01234567]\n"
        "search: {deadline_seconds: 2.5}\n"
        "engines:\n  tavily: {api_keys: [0777, 0x1F, 1_000, 12:30], weight: 2}\n",
    )
    settings = load_config(path)
    assert settings.server.auth_tokens == ["01234567"]
    assert settings.engines["tavily"].api_keys == ["0777", "0x1F", "1_000", "12:30"]
    assert (settings.server.port, settings.search.deadline_seconds) == (9000, 2.5)
    assert settings.engines["tavily"].weight == 2.0
    # A number setting reads the number written, as from the environment.
    bad = write(tmp_path, "search: {deadline_seconds: 1:30}\n")
    with pytest.raises(ConfigError, match=r"search\.deadline_seconds: .*number.*'1:30'"):
        load_config(bad)


def test_a_decimal_in_the_file_is_read_as_written(tmp_path: Path) -> None:
    # YAML 1.1 reads 1.50 as 1.5 and 1_0.5 as 10.5: a key so written was sent as another text.
    settings = load_config(write(tmp_path, "engines:\n  tavily: {api_keys: [1.50, 1_0.5]}\n"))
    assert settings.engines["tavily"].api_keys == ["1.50", "1_0.5"]


def test_a_date_that_is_none_is_invalid_yaml_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "search:\n  strategy: 2026-13-01\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"invalid YAML in {path}: month must be in 1..12")


def test_a_long_value_is_cut_in_an_error() -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"search": {"strategy": "x" * 5000}}, "test", environ={})
    assert str(err.value).endswith(f" (got '{'x' * 76}...)")
    # A value of up to 80 characters, quotes included, is shown whole.
    with pytest.raises(ConfigError) as err:
        parse_config({"search": {"strategy": "y" * 78}}, "test", environ={})
    assert str(err.value).endswith(f" (got '{'y' * 78}')")


def test_a_key_written_twice_in_one_mapping_is_refused(tmp_path: Path) -> None:
    # PyYAML keeps the last: the first `engines` block, keys and all, was silently dropped.
    path = write(
        tmp_path,
        "engines:\n  tavily: {api_keys: [k1]}\nsearch:\n  max_results: 5\n"
        "engines:\n  bing: {weight: 2}\n",
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(f"invalid YAML in {path}: duplicate key 'engines' (first at line 1)")
    assert "line 5, column 1" in message
    with pytest.raises(ConfigError, match=r"duplicate key 'weight' \(first at line 2\)"):
        load_config(write(tmp_path, "engines:\n  bing: {weight: 2,\n    weight: 3}\n"))
    # A merge key's keys may still be written over: that is what merging is for.
    merged = write(tmp_path, "engines:\n  bing: {<<: {weight: 2, max_size: 3}, weight: 3}\n")
    bing = load_config(merged).engines["bing"]
    assert (bing.weight, bing.max_size) == (3.0, 3)


def test_aliases_min_score_max_size(tmp_path: Path) -> None:
    settings = load_config(write(tmp_path, "engines:\n  tavily: {minScore: 0.3, maxSize: 4}\n"))
    assert settings.engines["tavily"].min_score == 0.3
    assert settings.engines["tavily"].max_size == 4


def test_environment_overrides_and_keys() -> None:
    env = {
        "WEBSEARCH_MCP_SERVER__PORT": "9001",
        "WEBSEARCH_MCP_SEARCH__MMR__LAMBDA": "0.5",
        "WEBSEARCH_MCP_ENGINES__BING__WEIGHT": "2",
        "TAVILY_API_KEYS": "k1, k2",
    }
    settings = parse_config({"server": {"port": 8000}}, "test", environ=env)
    assert settings.server.port == 9001
    assert settings.search.mmr.lambda_ == 0.5
    assert settings.engines["bing"].weight == 2.0
    assert settings.engines["tavily"].api_keys == ["k1", "k2"]


def test_secret_variables_win_over_the_file_and_an_empty_one_sets_nothing() -> None:
    # `.env` leaves a key empty (`BRAVE_API_KEYS=`): the file's keys stay. A key or token
    # variable that is set replaces the file's, without a stray newline.
    file = {
        "engines": {"brave": {"api_keys": ["file-brave"]}, "tavily": {"api_keys": ["file-tav"]}},
        "server": {"auth_tokens": ["file-token"]},
        "llm": {"api_key": "file-llm"},
    }
    env = {
        "BRAVE_API_KEYS": "",
        "TAVILY_API_KEYS": "env-tav",
        "WEBSEARCH_MCP_TOKENS": "env-token",
        "LLM_API_KEY": "env-llm\n",
    }
    settings = parse_config(file, "test", environ=env)
    assert settings.engines["brave"].api_keys == ["file-brave"]
    assert settings.engines["tavily"].api_keys == ["env-tav"]
    assert settings.server.auth_tokens == ["env-token"]
    assert settings.llm.api_key == "env-llm"


@pytest.mark.parametrize("section_first", [True, False])
def test_a_section_variable_and_one_inside_it_combine_in_either_order(section_first: bool) -> None:
    # The environment's order is not the operator's to choose: a key set inside a section that
    # another variable sets whole was dropped without a word when the section came later.
    def ordered(*pairs: tuple[str, str]) -> dict[str, str]:
        return dict(pairs if section_first else pairs[::-1])

    section = ("WEBSEARCH_MCP_SEARCH", "{strategy: pool}")
    env = ordered(section, ("WEBSEARCH_MCP_SEARCH__MAX_RESULTS", "5"))
    settings = parse_config({}, "test", environ=env)
    assert (settings.search.strategy, settings.search.max_results) == ("pool", 5)
    with pytest.raises(ConfigError) as err:
        parse_config({}, "t", environ=ordered(section, ("WEBSEARCH_MCP_SEARCH__MAX_RESULTS", "99")))
    assert str(err.value).endswith("(got '99'); from WEBSEARCH_MCP_SEARCH__MAX_RESULTS")
    # A plain value where another variable writes inside it is refused, never silently kept.
    env = ordered(("WEBSEARCH_MCP_SERVER__PORT", "9000"), ("WEBSEARCH_MCP_SERVER__PORT__X", "1"))
    with pytest.raises(ConfigError, match="SERVER__PORT__X: conflicts with another variable"):
        parse_config({}, "test", environ=env)


def test_two_variables_naming_one_setting_in_different_case_are_refused() -> None:
    # Names are read case-blind; which of the two would win depends on the environment's order.
    env = {"WEBSEARCH_MCP_SERVER__PORT": "9000", "WEBSEARCH_MCP_server__port": "9001"}
    with pytest.raises(ConfigError, match=r"both set server\.port") as err:
        parse_config({}, "test", environ=env)
    assert "WEBSEARCH_MCP_SERVER__PORT" in str(err.value)
    assert "WEBSEARCH_MCP_server__port" in str(err.value)


def test_an_engine_proxy_of_true_is_refused() -> None:
    # `true` names no proxy: a URL, or false for a direct connection whatever else says.
    env = {"WEBSEARCH_MCP_ENGINES__BRAVE__PROXY": "true"}
    with pytest.raises(ConfigError, match=r"engines\.brave\.proxy: .*must be a proxy URL or false"):
        parse_config({}, "test", environ=env)


def test_a_base_url_is_kept_without_its_trailing_slash() -> None:
    # Paths are appended to it (`{base_url}/search`): a slash left on doubles theirs.
    data = {
        "engines": {"searxng": {"base_url": "http://127.0.0.1:8888/searx/"}},
        "fetch": {"reader_base_url": "https://reader.example/"},
    }
    settings = parse_config(data, "test", environ={})
    assert settings.engines["searxng"].base_url == "http://127.0.0.1:8888/searx"
    assert settings.fetch.reader_base_url == "https://reader.example"


def test_every_list_takes_a_comma_list_from_the_environment() -> None:
    env = {
        "WEBSEARCH_MCP_SEARCH__BLOCK_DOMAINS": "a.com, b.com",
        "WEBSEARCH_MCP_SEARCH__POOL__PROVIDERS": "tavily,brave",
        "TAVILY_API_KEYS": "k1",
        "BRAVE_API_KEYS": "k2",
        "WEBSEARCH_MCP_SEARCH__RANKING__PENALIZED_DOMAINS": "shop.example",
        "WEBSEARCH_MCP_FETCH__ALLOW_NETWORKS": "10.0.0.0/8,192.168.0.0/16",
        "WEBSEARCH_MCP_FETCH__ALLOWED_PORTS": "80, 8080",
        "WEBSEARCH_MCP_ACADEMIC__VENUES": "NeurIPS,ICML",
    }
    settings = parse_config({}, "test", environ=env)
    assert settings.search.block_domains == ["a.com", "b.com"]
    assert settings.search.pool.providers == ["tavily", "brave"]
    assert settings.search.ranking.penalized_domains == ["shop.example"]
    assert settings.fetch.allow_networks == ["10.0.0.0/8", "192.168.0.0/16"]
    assert settings.fetch.allowed_ports == [80, 8080]
    assert settings.academic.venues == ["NeurIPS", "ICML"]
    with pytest.raises(ConfigError, match=r"fetch\.allowed_ports\.1: .*less than or equal"):
        parse_config({}, "test", environ={"WEBSEARCH_MCP_FETCH__ALLOWED_PORTS": "80,70000"})


def test_a_variable_that_reads_as_a_number_is_taken_as_written() -> None:
    # A one-item list is a number in YAML: one port, one all-digit token or key. Each is taken
    # as written, a leading zero included, and a number setting still reads as a number.
    env = {
        "WEBSEARCH_MCP_FETCH__ALLOWED_PORTS": "8443",
        "WEBSEARCH_MCP_SERVER__AUTH_TOKENS": "0123456789012345678",
        "WEBSEARCH_MCP_ENGINES__TAVILY__API_KEYS": "987654321",
        "WEBSEARCH_MCP_LLM__API_KEY": "0777",
        "WEBSEARCH_MCP_SERVER__PORT": "9001",
        "WEBSEARCH_MCP_SEARCH__MMR__LAMBDA": "0.5",
    }
    settings = parse_config({}, "test", environ=env)
    assert settings.fetch.allowed_ports == [8443]
    assert settings.server.auth_tokens == ["0123456789012345678"]
    assert settings.engines["tavily"].api_keys == ["987654321"]
    assert settings.llm.api_key == "0777"
    assert settings.server.port == 9001
    assert settings.search.mmr.lambda_ == 0.5


def test_a_variable_that_reads_as_a_decimal_is_its_text_without_surrounding_space() -> None:
    settings = parse_config({}, "test", environ={"WEBSEARCH_MCP_LLM__API_KEY": "1.50"})
    assert settings.llm.api_key == "1.50"
    # As any other value read from the environment, a stray newline is not part of the key.
    settings = parse_config({}, "test", environ={"WEBSEARCH_MCP_LLM__API_KEY": " 0777\n"})
    assert settings.llm.api_key == "0777"
    # So is it around a key YAML cannot read at all.
    settings = parse_config({}, "test", environ={"WEBSEARCH_MCP_LLM__API_KEY": " @k: v: w\n"})
    assert settings.llm.api_key == "@k: v: w"


def test_a_variable_of_plain_text_is_taken_whole() -> None:
    # YAML would read "::" (every IPv6 address) as a mapping and cut a value at " #"; quotes,
    # `[...]`, booleans and null keep their YAML meaning.
    env = {
        "WEBSEARCH_MCP_SERVER__HOST": "::",
        "WEBSEARCH_MCP_LLM__API_KEY": "sk-abc #def",
        "WEBSEARCH_MCP_LLM__MODEL": "'local: small'",
        "WEBSEARCH_MCP_SEARCH__BLOCK_DOMAINS": "[a.com, b.com]",
        "WEBSEARCH_MCP_SEARCH__MMR__ENABLED": "false",
        "WEBSEARCH_MCP_ENGINES__SEARXNG__BASE_URL": "null",
        "WEBSEARCH_MCP_ENGINES__BRAVE__PROXY": "false",
        "WEBSEARCH_MCP_ENGINES__SEARXNG__INDEX": '"google: web"',
        "WEBSEARCH_MCP_FETCH__READER_API_KEY": "- k",
        "WEBSEARCH_MCP_SERVER__ALLOWED_HOSTS": "",
    }
    settings = parse_config({"server": {"allowed_hosts": ["a.example"]}}, "test", environ=env)
    assert settings.server.host == "::"
    assert settings.llm.api_key == "sk-abc #def"
    assert settings.llm.model == "local: small"
    assert settings.search.block_domains == ["a.com", "b.com"]
    assert settings.search.mmr.enabled is False
    assert settings.engine("searxng").base_url is None
    assert settings.engines["brave"].proxy is False  # a direct connection, not a URL "false"
    assert settings.engines["searxng"].index == "google: web"
    assert settings.fetch.reader_api_key == "- k"
    assert settings.server.allowed_hosts == []  # an empty variable empties the file's list


@pytest.mark.parametrize("value", ["0", "65", "many", "1.5", "²", "true"])
def test_a_bad_worker_count_is_one_line_saying_what_is_allowed(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({}, "test", environ={"WEBSEARCH_MCP_SERVER__WORKERS": value})
    lines = str(err.value).splitlines()
    (line,) = [line for line in lines if "server.workers" in line]
    assert line.startswith("  server.workers: Value error, must be a number from 1 to 64 or auto")


def test_worker_counts_at_the_limits_and_auto_are_taken() -> None:
    for value, workers in (("1", 1), ("64", 64), ("auto", "auto")):
        env = {"WEBSEARCH_MCP_SERVER__WORKERS": value}
        assert parse_config({}, "test", environ=env).server.workers == workers


@pytest.mark.parametrize(
    ("tokens", "problem"),
    [(["tok-good-1", None], "token 2 is null (a bare '-' item)"), (["  "], "token 1 is empty")],
)
def test_a_null_or_blank_token_is_refused_saying_which(tokens: list, problem: str) -> None:
    # Either would match an empty credential: authentication off without anyone asking.
    with pytest.raises(
        ConfigError, match=rf"server\.auth_tokens: Value error, {re.escape(problem)}"
    ):
        parse_config({"server": {"auth_tokens": tokens}}, "test", environ={})


@pytest.mark.parametrize("commas", [",", " , ,"])
@pytest.mark.parametrize(
    ("variable", "key"),
    [
        ("WEBSEARCH_MCP_TOKENS", "server.auth_tokens"),
        ("TAVILY_API_KEYS", "engines.tavily.api_keys"),
        ("WEBSEARCH_MCP_SEARCH__BLOCK_DOMAINS", "search.block_domains"),
        ("WEBSEARCH_MCP_FETCH__ALLOWED_PORTS", "fetch.allowed_ports"),
    ],
)
def test_a_list_of_commas_alone_is_refused_not_read_as_none(
    commas: str, variable: str, key: str
) -> None:
    # Read as no item, tokens left a loopback server open to every local process, and keys
    # silently replaced the file's keys with none.
    file = {"engines": {"tavily": {"api_keys": ["tvly-file"]}}}
    with pytest.raises(ConfigError) as err:
        parse_config(file, "test", environ={variable: commas})
    assert f"{key}: Value error, holds commas but nothing between them" in str(err.value)
    assert f"; from {variable}" in str(err.value)
    section, _, name = key.rpartition(".")
    data: dict[str, Any] = {}
    node = data
    for part in section.split("."):
        node = node.setdefault(part, {})
    node[name] = commas
    with pytest.raises(ConfigError, match="holds commas but nothing between them"):
        parse_config(data, "test", environ={})


@pytest.mark.parametrize(
    "key",
    [
        "keys.cooldown_seconds",
        "keys.refused_cooldown_seconds",
        "breaker.captcha_seconds",
        "breaker.denied_seconds",
        "breaker.error_step_seconds",
        "breaker.error_max_seconds",
    ],
)
def test_a_rest_without_end_is_refused_at_load(key: str, tmp_path: Path) -> None:
    """A key or an engine resting for ever was taken, and every search that then had to say
    for how long it rests failed: `inf`, or a number too large to be finite, is refused."""
    variable = "WEBSEARCH_MCP_SEARCH__" + key.upper().replace(".", "__")
    with pytest.raises(ConfigError, match=rf"search\.{key}: Input should be a finite number"):
        parse_config({}, "test", environ={variable: "inf"})
    section, name = key.split(".")
    for endless in ("1e999", ".inf", ".Inf"):  # YAML's own spelling, too, for the same reason
        path = write(tmp_path, f"search:\n  {section}:\n    {name}: {endless}\n")
        with pytest.raises(ConfigError, match=rf"search\.{key}: Input should be a finite number"):
            load_config(path)


@pytest.mark.parametrize("key", ["keys.refused_cooldown_seconds", "breaker.captcha_seconds"])
def test_a_rest_longer_than_a_century_is_refused_at_load(key: str) -> None:
    """A finite rest as long as 1e306 s was taken: with the Redis backend, cooling a key or
    opening the breaker for it failed the whole search (its expiry in milliseconds is no
    integer), and 1e17 s could not be stored in Redis, pausing every shared cooldown."""
    variable = "WEBSEARCH_MCP_SEARCH__" + key.upper().replace(".", "__")
    for value in ("1e306", "1e17", str(100 * 365 * 86_400 + 1)):
        with pytest.raises(ConfigError, match=rf"search\.{key}: Input should be less than or"):
            parse_config({}, "test", environ={variable: value})
    with pytest.raises(ConfigError, match=rf"search\.{key}: Input should be greater than or"):
        parse_config({}, "test", environ={variable: "-1"})
    century = parse_config({}, "test", environ={variable: str(100 * 365 * 86_400)})
    section, name = key.split(".")
    assert getattr(getattr(century.search, section), name) == 3_153_600_000


def test_a_cache_path_naming_no_file_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty cache.path read as the working directory, and a directory named there was
    taken too: SQLite opens neither, so the service ran without a cache (every call bypassed,
    /readyz failing) instead of saying which key is wrong."""
    with pytest.raises(ConfigError, match=r"cache\.path: Value error, must name the SQLite file"):
        load_config(write(tmp_path, "cache:\n  path: ''\n"))
    env = {"WEBSEARCH_MCP_CACHE__PATH": ""}
    with pytest.raises(ConfigError, match=r"cache\.path: .*; from WEBSEARCH_MCP_CACHE__PATH"):
        parse_config({}, "test", environ=env)
    with pytest.raises(ConfigError, match=r"cache\.path: Value error, must name the SQLite file"):
        parse_config({"cache": {"path": "  "}}, "test", environ={})
    with pytest.raises(ConfigError, match=r"cache\.path: Value error, .* is a directory"):
        parse_config({"cache": {"path": str(tmp_path)}}, "test", environ={})
    monkeypatch.setenv("HOME", str(tmp_path))  # "~" is read as the home directory it names
    with pytest.raises(ConfigError, match=r"cache\.path: Value error, ~ is a directory"):
        parse_config({"cache": {"path": "~"}}, "test", environ={})
    # Only the SQLite backend reads the path; a file in that directory is what it takes.
    redis = {"backend": "redis", "redis_url": "redis://127.0.0.1:6379/0", "path": str(tmp_path)}
    assert parse_config({"cache": redis}, "test", environ={}).cache.backend == "redis"
    file = tmp_path / "cache.sqlite3"
    assert parse_config({"cache": {"path": str(file)}}, "test", environ={}).cache.path == file
    socket = {"backend": "redis", "redis_url": "unix:///run/redis/redis.sock"}
    assert (
        parse_config({"cache": socket}, "test", environ={}).cache.redis_url == socket["redis_url"]
    )


def test_the_default_cache_is_in_the_xdg_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    path = parse_config({}, "test", environ={}).cache.path
    assert path == tmp_path / "websearch-mcp" / "cache.sqlite3"


def test_environment_unknown_key_is_reported() -> None:
    with pytest.raises(ConfigError, match=r"server\.prot: unknown key"):
        parse_config({}, "test", environ={"WEBSEARCH_MCP_SERVER__PROT": "1"})


def test_a_bad_value_from_the_environment_names_its_variable() -> None:
    # The file does not hold these values: the message sends the reader to the variable.
    env = {
        "WEBSEARCH_MCP_SERVER__PORT": "abc",
        "WEBSEARCH_MCP_SERVER__ALLOWED_HOST": "search.example.com",
        "WEBSEARCH_MCP_FETCH__ALLOWED_PORTS": "80,70000",
        "TAVILY_API_KEYS": "tvly-secret",
        "WEBSEARCH_MCP_ENGINES__TAVILY__WEIGHT": "heavy",
    }
    with pytest.raises(ConfigError) as err:
        parse_config({"server": {"port": 9000}, "search": {"rrf_k": 0}}, "conf.yaml", environ=env)
    lines = {line.split(":")[0].strip(): line for line in str(err.value).splitlines()[1:]}
    assert lines["server.port"].endswith("(got 'abc'); from WEBSEARCH_MCP_SERVER__PORT")
    assert lines["server.allowed_host"].endswith("; from WEBSEARCH_MCP_SERVER__ALLOWED_HOST")
    assert lines["fetch.allowed_ports.1"].endswith("; from WEBSEARCH_MCP_FETCH__ALLOWED_PORTS")
    assert lines["engines.tavily.weight"].endswith("; from WEBSEARCH_MCP_ENGINES__TAVILY__WEIGHT")
    assert "; from" not in lines["search.rrf_k"]  # the file's own mistake
    assert "tvly-secret" not in str(err.value)


@pytest.mark.parametrize(
    ("variable", "value", "line"),
    [
        ("WEBSEARCH_MCP_SERVR__PORT", "5", "servr: unknown key"),
        ("WEBSEARCH_MCP_ENGINES__NOSUCH__WEIGHT", "1", "engines.nosuch: unknown engine"),
        ("WEBSEARCH_MCP_SEARCH__POOL__PROVIDERS", "bing", "search.pool.providers: bing: only"),
        ("WEBSEARCH_MCP_SEARCH__SEQUENTIAL__ORDER", "nosuch", "search.sequential.order: Value"),
        ("GOOGLE_CSE_API_KEYS", "017576:omuauf:k,lone", "engines.google_cse.api_keys.1: google"),
    ],
)
def test_every_kind_of_mistake_names_the_variable_that_made_it(
    variable: str, value: str, line: str
) -> None:
    # The file is fine: without the variable's name the reader looks for the mistake there.
    with pytest.raises(ConfigError) as err:
        parse_config({"server": {"port": 9000}}, "conf.yaml", environ={variable: value})
    (shown,) = [text for text in str(err.value).splitlines() if line in text]
    assert shown.endswith(f"; from {variable}")


def test_a_mistake_of_the_file_names_no_variable_though_one_sets_a_key_beside_it() -> None:
    file = {"engines": {"nosuch": {"weight": 1}}, "search": {"pool": {"providers": ["bing"]}}}
    env = {"WEBSEARCH_MCP_ENGINES__TAVILY__WEIGHT": "2", "WEBSEARCH_MCP_SEARCH__MAX_RESULTS": "5"}
    with pytest.raises(ConfigError) as err:
        parse_config(file, "conf.yaml", environ=env)
    assert "engines.nosuch: unknown engine" in str(err.value)
    assert "; from" not in str(err.value)
    with pytest.raises(ConfigError) as err:
        parse_config(
            {"servr": {"port": 1}}, "conf.yaml", environ={"WEBSEARCH_MCP_SERVER__PORT": "1"}
        )
    assert "servr: unknown key" in str(err.value) and "; from" not in str(err.value)


def test_without_a_file_the_mistakes_are_said_to_be_the_environments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WEBSEARCH_MCP_CONFIG", raising=False)
    monkeypatch.setenv("WEBSEARCH_MCP_SERVER__PORT", "abc")
    with pytest.raises(ConfigError) as err:
        load_config()
    assert str(err.value).startswith("invalid configuration in the environment (no file):")


def test_only_a_variable_that_set_a_value_is_named_as_its_origin() -> None:
    # A key variable left unset, or a token variable of blanks (ignored), set nothing: the
    # mistakes are the file's. A variable setting a whole section is named for it.
    file = {"engines": {"tavily": {"api_keys": {"a": 1}}}, "server": {"auth_tokens": ["t", ""]}}
    env = {"WEBSEARCH_MCP_TOKENS": "  ", "WEBSEARCH_MCP_SEARCH": "fast"}
    with pytest.raises(ConfigError) as err:
        parse_config(file, "conf.yaml", environ=env)
    lines = {line.split(":")[0].strip(): line for line in str(err.value).splitlines()[1:]}
    assert "; from" not in lines["engines.tavily.api_keys"]
    assert "; from" not in lines["server.auth_tokens"]
    assert lines["search"].endswith("; from WEBSEARCH_MCP_SEARCH")


@pytest.mark.parametrize(
    ("variable", "read"),
    [
        ("WEBSEARCH_MCP_TOKENS", lambda s: s.server.auth_tokens),
        ("TAVILY_API_KEYS", lambda s: s.engines["tavily"].api_keys),
    ],
)
def test_a_secrets_variable_takes_a_list_in_brackets(variable: str, read: Any) -> None:
    # As the docs say of every list of secrets: `[]` empties it (not a token `[]`), and
    # `[a, b]` is the two, not `[a` and `b]`.
    file = {
        "server": {"auth_tokens": ["tok-from-the-file-0123456789"]},
        "engines": {"tavily": {"api_keys": ["tvly-from-the-file"]}},
    }
    assert read(parse_config(file, "f.yaml", environ={variable: "[]"})) == []
    both = parse_config(file, "f.yaml", environ={variable: "[first-0123456789, second-0123456789]"})
    assert read(both) == ["first-0123456789", "second-0123456789"]
    for unreadable in ("[a-0123456789,,b-0123456789]", "[a-0123456789, b #c]"):
        with pytest.raises(
            ConfigError, match=f"a list in brackets that YAML cannot read.*{variable}"
        ):
            parse_config(file, "f.yaml", environ={variable: unreadable})
    assert read(parse_config(file, "f.yaml", environ={variable: "a-0123456789,b-0123456789"})) == [
        "a-0123456789",
        "b-0123456789",
    ]


def test_a_secrets_own_variable_wins_over_its_prefixed_form() -> None:
    env = {
        "TAVILY_API_KEYS": "own-key-0123456789",
        "WEBSEARCH_MCP_ENGINES__TAVILY__API_KEYS": "prefixed-key-0123456789",
        "WEBSEARCH_MCP_TOKENS": "own-token-0123456789",
        "WEBSEARCH_MCP_SERVER__AUTH_TOKENS": "prefixed-token-0123456789",
        "LLM_API_KEY": "own-llm-key",
        "WEBSEARCH_MCP_LLM__API_KEY": "prefixed-llm-key",
    }
    settings = parse_config({}, "f.yaml", environ=env)
    assert settings.engines["tavily"].api_keys == ["own-key-0123456789"]
    assert settings.server.auth_tokens == ["own-token-0123456789"]
    assert settings.llm.api_key == "own-llm-key"
    # A mistake in it is the own variable's.
    with pytest.raises(ConfigError, match=r"engines\.tavily\.api_keys.*; from TAVILY_API_KEYS"):
        parse_config({}, "f.yaml", environ={**env, "TAVILY_API_KEYS": "'quoted-key-0123'"})
    # A section the prefixed form gets wrong is still refused, not covered by the keys.
    wrong = {"TAVILY_API_KEYS": "own-key-0123456789", "WEBSEARCH_MCP_ENGINES__TAVILY": "off"}
    with pytest.raises(ConfigError, match=r"engines\.tavily.*; from WEBSEARCH_MCP_ENGINES__TAVILY"):
        parse_config({}, "f.yaml", environ=wrong)
    wrong = {"WEBSEARCH_MCP_TOKENS": "own-token-0123456789", "WEBSEARCH_MCP_SERVER": "[]"}
    with pytest.raises(ConfigError, match=r"server.*; from WEBSEARCH_MCP_SERVER"):
        parse_config({}, "f.yaml", environ=wrong)


def test_a_google_cse_key_without_its_engine_id_is_refused_at_load() -> None:
    # Sent as it is, the API would refuse it and the key would rest as refused for hours.
    env = {"GOOGLE_CSE_API_KEYS": "9bc67f2b2ef848ce2:AIza-good,AIza-lone-secret"}
    with pytest.raises(ConfigError) as err:
        parse_config(None, "built-in defaults", environ=env)
    message = str(err.value)
    assert "engines.google_cse.api_keys.1: google_cse keys must be configured as" in message
    assert "api_keys.0" not in message
    assert "AIza-lone-secret" not in message and "AIza-good" not in message
    good = parse_config(None, "d", environ={"GOOGLE_CSE_API_KEYS": "017576:omuauf:AIza-k"})
    assert good.engines["google_cse"].api_keys == ["017576:omuauf:AIza-k"]


def test_invalid_yaml_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(write(tmp_path, "search: [unclosed\n"))
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        load_config(tmp_path / "absent.yaml")
    with pytest.raises(ConfigError, match=r"conf\.yaml: the top level must be a mapping"):
        load_config(write(tmp_path, "- server\n- search\n"))


@pytest.mark.parametrize(
    ("key", "url", "problem"),
    [
        (("cache", "redis_url"), "redis://:pw-secret@127.0.0.1:99999/0", "its port is not 0-65535"),
        (("proxy", "url"), "http://user:pw-secret@proxy:pw/", "its port is not 0-65535"),
        (("llm", "base_url"), "http://u:pw-secret@[::1/v1", "its [IPv6] host is malformed"),
        (("engines", "searxng", "base_url"), "http://[pw-secret]", "its [IPv6] host is malformed"),
        (("engines", "brave", "proxy"), "socks5://u:pw-secret@proxy:pw", "its port is not 0-65535"),
        # Every request failed, or (`http://`) went out directly while counted as proxied.
        (("proxy", "url"), "http://u:pw-secret@:3128", "it names no host"),
        (("proxy", "url"), "http://", "it names no host"),
        (("engines", "brave", "proxy"), "socks5://:1080", "it names no host"),
        (("llm", "base_url"), "https:///v1", "it names no host"),
    ],
)
def test_a_url_whose_host_or_port_does_not_read_is_refused_without_showing_it(
    key: tuple[str, ...], url: str, problem: str
) -> None:
    # Found at the first search, it was a traceback (`search`) or a failure on every call.
    data: dict[str, Any] = {"cache": {"backend": "redis"}} if key[0] == "cache" else {}
    node = data
    for part in key[:-1]:
        node = node.setdefault(part, {})
    node[key[-1]] = url
    with pytest.raises(ConfigError) as err:
        parse_config(data, "conf.yaml", environ={})
    assert f"{'.'.join(key)}: Value error, is not a valid URL: {problem}" in str(err.value)
    assert "pw-secret" not in str(err.value)


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("HTTPS_PROXY", "http://user:pw-secret@proxy:99999", "is not a valid URL: its port"),
        ("http_proxy", "proxy:pw-secret", "is not a valid URL: its port"),
        ("ALL_PROXY", "socks4://user:pw-secret@proxy:1080", "must start with http://"),
        ("all_proxy", "http://[pw-secret", "is not a valid URL: its [IPv6] host"),
        ("HTTPS_PROXY", "http://:3128", "is not a valid URL: it names no host"),
    ],
)
def test_a_proxy_variable_that_does_not_read_is_refused_without_showing_it(
    variable: str, value: str, problem: str
) -> None:
    # Read at the first search, it failed every engine as "unexpected ValueError", or sent the
    # requests of a SOCKS4 proxy's clients as plain HTTP.
    with pytest.raises(ConfigError) as err:
        parse_config({}, "conf.yaml", environ={variable: value})
    assert f"{variable}: Value error, {problem}" in str(err.value)
    assert "pw-secret" not in str(err.value)


def test_proxy_variables_are_not_read_when_the_configuration_names_a_proxy() -> None:
    settings = parse_config(
        {"proxy": {"url": "http://proxy:3128"}}, "conf.yaml", environ={"HTTPS_PROXY": "ftp://x"}
    )
    assert settings.proxy.url == "http://proxy:3128"
    environ = {"https_proxy": "proxy.corp:3128", "HTTPS_PROXY": "socks4://ignored", "NO_PROXY": "*"}
    assert parse_config({}, "conf.yaml", environ=environ).proxy.url is None


def test_check_config_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(EXAMPLE)]) == 0
    assert "configuration OK" in capsys.readouterr().out
    bad = write(tmp_path, "cache:\n  backend: memcached\n")
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "cache.backend" in err and "'sqlite', 'redis' or 'none'" in err


def test_check_config_names_the_file_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "search:\n  strategy: sequential\n")
    monkeypatch.setenv("WEBSEARCH_MCP_CONFIG", str(path))
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out
    assert f"configuration OK: {path}\n" in out
    assert "strategy: sequential" in out
    # A file named on the command line is the one read.
    other = tmp_path / "other.yaml"
    other.write_text("search:\n  strategy: pool\n", encoding="utf-8")
    assert main(["check-config", str(other)]) == 0
    out = capsys.readouterr().out
    assert f"configuration OK: {other}\n" in out
    assert "strategy: pool" in out and "engines configured" not in out
    # The engines the file names, but not those it turns off.
    other.write_text(
        "engines:\n  tavily: {api_keys: [k1]}\n  bing: {enabled: false}\n"
        "  duckduckgo: {enabled: true}\n",
        encoding="utf-8",
    )
    assert main(["check-config", str(other)]) == 0
    assert capsys.readouterr().out.endswith("\nengines configured: duckduckgo, tavily\n")
    # Summaries need a model and its API: one of the two alone is said to leave them off.
    other.write_text("llm:\n  base_url: http://127.0.0.1:9/v1\n", encoding="utf-8")
    assert main(["check-config", str(other)]) == 0
    assert capsys.readouterr().out.endswith(
        "summaries are off: llm.base_url is set, llm.model is not\n"
    )


def test_check_config_refuses_what_serve_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A valid file that `serve` still refuses: every address, no tokens.
    monkeypatch.delenv("WEBSEARCH_MCP_TOKENS", raising=False)
    path = write(tmp_path, "server:\n  host: 0.0.0.0\n")
    assert main(["check-config", str(path)]) == 2
    captured = capsys.readouterr()
    assert "configuration OK" not in captured.out
    assert "error: refusing to serve 0.0.0.0:8338 without authentication" in captured.err
    path = write(tmp_path, "server:\n  host: 0.0.0.0\n  allow_anonymous: true\n")
    assert main(["check-config", str(path)]) == 0
    assert "configuration OK" in capsys.readouterr().out


def test_strategy_engines_of_the_other_kind_or_disabled_stop_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(
        tmp_path,
        "search:\n"
        "  pool: {providers: [tavily, bing, arxiv, exa, brave]}\n"
        "  sequential: {order: [duckduckgo, crossref, google]}\n"
        "engines:\n"
        "  tavily: {api_keys: [k1]}\n"
        "  brave: {api_keys: [k2], enabled: false}\n",
    )
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "search.pool.providers: bing, arxiv: only keyed web providers belong here" in err
    assert (
        "search.pool.providers: exa has no API key (engines.exa.api_keys);"
        " brave is disabled (engines.brave.enabled)"
    ) in err
    assert "search.sequential.order: crossref: only web engines belong here" in err
    assert "search.sequential.order: crossref is disabled" not in err
    assert "search.sequential.order: google is disabled (engines.google.enabled)" in err
    settings = parse_config(
        {
            "search": {"pool": {"providers": ["tavily"]}, "sequential": {"order": ["google"]}},
            "engines": {"tavily": {"api_keys": ["k1"]}, "google": {"enabled": True}},
        },
        "test",
        environ={},
    )
    assert settings.search.pool.providers == ["tavily"]
    # Keys from the environment count.
    env = {"EXA_API_KEYS": "k3"}
    assert parse_config({"search": {"pool": {"providers": ["exa"]}}}, "test", environ=env)


def test_unknown_engines_in_strategy_lists_name_the_list_and_the_allowed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "search:\n  pool: {providers: [tavily, altavista]}\n  sequential: {order: [lycos]}\n"
        "engines:\n  hotbot: {}\n",
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    lines = str(err.value).splitlines()
    assert lines[0] == f"invalid configuration in {path}:"
    assert lines[1].startswith(
        "  search.pool.providers: Value error, unknown engine 'altavista' (allowed: arxiv, baidu,"
    )
    assert lines[1].endswith(" (got ['tavily', 'altavista'])")
    assert lines[2].startswith("  search.sequential.order: Value error, unknown engine 'lycos'")
    # The unknown engine block is reported once the lists name known engines.
    assert len(lines) == 3


def _documented_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted paths of every setting (nested sections walked; engines as `engines.*`)."""
    paths = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            paths += _documented_keys(ann, f"{prefix}{key}.")
        elif key == "engines" and not prefix:
            from websearch_mcp.config import EngineSettings

            paths += _documented_keys(EngineSettings, "engines.*.")
        else:
            paths.append(prefix + key)
    return paths


def test_example_file_documents_every_option() -> None:
    import yaml

    from websearch_mcp.config import Settings

    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    text = EXAMPLE.read_text(encoding="utf-8")
    missing = []
    for path in _documented_keys(Settings):
        parts = path.split(".")
        if parts[0] == "engines":
            if not any(parts[2] in (block or {}) for block in data["engines"].values()):
                missing.append(path)
            continue
        node = data
        for part in parts:
            if isinstance(node, dict) and part in node:
                node = node[part]
            else:
                # a commented-out default (`# path: ...`) documents it too
                if f"# {part}:" not in text:
                    missing.append(path)
                break
    assert missing == []


def test_example_file_shows_the_defaults() -> None:
    """Outside the per-engine examples, the example file's values are the built-in defaults."""
    example = load_config(EXAMPLE).model_dump(exclude={"engines"})
    defaults = parse_config({}, "defaults", environ={}).model_dump(exclude={"engines"})
    assert example == defaults


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WEBSEARCH_MCP_SERVER__AUTH_TOKENS", ""),
        ("WEBSEARCH_MCP_SERVER__AUTH_TOKENS", "  "),
        ("WEBSEARCH_MCP_ENGINES__TAVILY__API_KEYS", ""),
        ("TAVILY_API_KEYS", " "),
    ],
)
def test_an_empty_secrets_variable_sets_nothing_and_keeps_the_files_secrets(
    variable: str, value: str
) -> None:
    # Set empty, a token variable would have left a loopback server without authentication.
    file = {
        "server": {"auth_tokens": ["file-token-1"]},
        "engines": {"tavily": {"api_keys": ["tvly-file"]}},
    }
    settings = parse_config(file, "conf.yaml", environ={variable: value})
    assert settings.server.auth_tokens == ["file-token-1"]
    assert settings.engines["tavily"].api_keys == ["tvly-file"]
    cleared = parse_config(file, "conf.yaml", environ={"WEBSEARCH_MCP_SERVER__AUTH_TOKENS": "[]"})
    assert cleared.server.auth_tokens == []


def test_numbers_inside_a_variables_collection_are_kept_as_written() -> None:
    # As in the file: YAML 1.1 would read 0777, 1_000 and 0x1F as 511, 1000 and 31.
    env = {
        "WEBSEARCH_MCP_SERVER__AUTH_TOKENS": "[0777, 1_000, 0x1F]",
        "WEBSEARCH_MCP_ENGINES": "{tavily: {api_keys: [0777]}}",
        "WEBSEARCH_MCP_SEARCH": "{max_results: 7}",
    }
    settings = parse_config({}, "test", environ=env)
    assert settings.server.auth_tokens == ["0777", "1_000", "0x1F"]
    assert settings.engines["tavily"].api_keys == ["0777"]
    assert settings.search.max_results == 7


@pytest.mark.parametrize(
    "data",
    [
        {"engines": {"brave": {"api_keys": ["brave-key\n"]}}},
        {"engines": {"brave": {"api_keys": ["brave\u2026key"]}}},
        {"server": {"auth_tokens": ["token-1\n"]}},
    ],
)
def test_a_key_or_token_no_header_can_carry_is_refused_at_load(data: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="an HTTP header cannot carry") as caught:
        parse_config(data, "conf.yaml", environ={})
    assert "brave-key" not in str(caught.value) and "token-1" not in str(caught.value)


def test_a_mistake_in_the_file_is_not_blamed_on_a_variable_setting_other_keys_of_its_section() -> (
    None
):
    env = {"WEBSEARCH_MCP_SEARCH": "{strategy: pool}"}
    with pytest.raises(ConfigError) as caught:
        parse_config({"search": {"max_results": 99}}, "conf.yaml", environ=env)
    assert "search.max_results" in str(caught.value)
    assert "from WEBSEARCH_MCP_SEARCH" not in str(caught.value)
    # A key the variable's mapping set is still its.
    env = {"WEBSEARCH_MCP_SEARCH": "{max_results: 99}"}
    with pytest.raises(ConfigError, match=r"search\.max_results: .*; from WEBSEARCH_MCP_SEARCH"):
        parse_config({}, "conf.yaml", environ=env)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TAVILY_API_KEYS", '"tvly-key-1,tvly-key-2"'),
        ("WEBSEARCH_MCP_TOKENS", "'token-one'"),
        ("LLM_API_KEY", '"sk-model-key"'),
    ],
)
def test_a_key_or_token_kept_in_its_quotes_is_refused(variable: str, value: str) -> None:
    # `docker run --env-file` passes quotes through: every request would be refused.
    config = {"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    with pytest.raises(ConfigError, match="starts or ends with a quote") as caught:
        parse_config(config, "conf.yaml", environ={variable: value})
    assert value.strip("\"'").split(",")[0] not in str(caught.value)


@pytest.mark.parametrize(
    ("variable", "read"),
    [
        ("WEBSEARCH_MCP_LLM__BASE_URL", lambda s: s.llm.base_url),
        ("WEBSEARCH_MCP_PROXY__URL", lambda s: s.proxy.url),
        ("WEBSEARCH_MCP_CACHE__REDIS_URL", lambda s: s.cache.redis_url),
        (
            "WEBSEARCH_MCP_ENGINES__TAVILY__TIMEOUT_SECONDS",
            lambda s: s.engine("tavily").timeout_seconds,
        ),
        ("WEBSEARCH_MCP_ENGINES__TAVILY__MAX_SIZE", lambda s: s.engine("tavily").max_size),
    ],
)
def test_an_empty_variable_unsets_a_key_that_may_be_unset(
    variable: str, read: Callable[[Settings], object]
) -> None:
    # Blank in a .env file to switch summaries or the proxy off: the key is unset, not "".
    config = {
        "llm": {"base_url": "http://127.0.0.1:11434/v1", "model": "m"},
        "proxy": {"url": "http://127.0.0.1:3128"},
        "cache": {"backend": "none", "redis_url": "redis://127.0.0.1:6379/0"},
        "engines": {"tavily": {"timeout_seconds": 3, "max_size": 5}},
    }
    assert read(parse_config(config, "test", environ={variable: " "})) is None
    assert read(parse_config(config, "test", environ={})) is not None


def test_the_servers_configuration_text_stands_only_for_its_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker reads the server's file as the server read it at start; a file named outright
    # (`check-config other.yaml`) is read as it is.
    own, other = tmp_path / "own.yaml", tmp_path / "other.yaml"
    own.write_text("search: {deadline_seconds: 6}\n")
    other.write_text("search: {deadline_seconds: 7}\n")
    monkeypatch.setenv("WEBSEARCH_MCP_CONFIG", str(own))
    monkeypatch.setenv(CONFIG_TEXT_ENV, "search: {deadline_seconds: 5}\n")
    assert read_config_file()[0] == {"search": {"deadline_seconds": "5"}}  # numbers as written
    assert read_config_file(other)[0] == {"search": {"deadline_seconds": "7"}}


def test_a_redis_prefix_ending_as_the_cooldowns_do_is_refused() -> None:
    # Its answers' keys would be another deployment's cooldown keys (`<prefix>-cooldown:`).
    with pytest.raises(ConfigError, match=r"cache\.redis_prefix: .*-cooldown"):
        parse_config({"cache": {"redis_prefix": "shared-cooldown"}}, "test", environ={})
    parse_config({"cache": {"redis_prefix": "shared-cooldowns"}}, "test", environ={})


def test_the_redis_backend_without_its_url_is_refused_at_load() -> None:
    with pytest.raises(ConfigError, match="backend 'redis' needs redis_url"):
        parse_config({"cache": {"backend": "redis"}}, "test", environ={})
    with pytest.raises(ConfigError, match="needs redis_url"):
        parse_config(None, "test", environ={"WEBSEARCH_MCP_CACHE__BACKEND": "redis"})


@pytest.mark.parametrize(
    ("key", "refused", "taken"),
    [
        ("max_redirects", 21, 20),
        ("max_bytes", 1023, 1024),
        ("max_text_chars", 999, 1000),
        ("timeout_seconds", 0, 0.1),
    ],
)
def test_fetch_limits_refuse_values_past_their_bounds(
    key: str, refused: float, taken: float
) -> None:
    with pytest.raises(ConfigError, match=rf"fetch\.{key}"):
        parse_config({"fetch": {key: refused}}, "test", environ={})
    assert getattr(parse_config({"fetch": {key: taken}}, "test", environ={}).fetch, key) == taken
