"""The YAML configuration as pydantic models, environment overrides and readable errors.

Every key is optional. Unknown keys and bad values are rejected with a message that names the
key, the file and what is allowed. Any setting can also come from the environment as
`WEBSEARCH_MCP_<SECTION>__<KEY>` (nested keys joined by `__`), and engine keys from
`<ENGINE>_API_KEYS=k1,k2` (the summary model's from `LLM_API_KEY`).
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from websearch_mcp.errors import ConfigError

ENV_PREFIX = "WEBSEARCH_MCP_"
CONFIG_ENV = "WEBSEARCH_MCP_CONFIG"
#: Bearer tokens as `t1,t2`, the same as `server.auth_tokens`.
TOKENS_ENV = "WEBSEARCH_MCP_TOKENS"
#: The key of the summary model, the same as `llm.api_key`.
LLM_KEY_ENV = "LLM_API_KEY"


def default_data_dir() -> Path:
    """The user's data directory for the cache (XDG on Unix)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "websearch-mcp"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)


def _split_commas(value: Any) -> Any:
    """A comma-separated string (from the environment) as a list; anything else unchanged."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _texts(value: Any) -> Any:
    """Every item of a list as text. A numeric-looking token parses from YAML as a number: taking
    it as text means a validation error never echoes a token back."""
    if isinstance(value, list):
        return [item if isinstance(item, str) else str(item) for item in value]
    return value


class ServerSettings(_Section):
    """The HTTP server: where it listens, who may call it, how much, and how it logs."""

    host: str = "127.0.0.1"
    port: int = Field(8338, ge=1, le=65535)
    auth_tokens: list[str] = Field(default_factory=list, repr=False)
    allow_anonymous: bool = False
    allowed_origins: list[str] = Field(default_factory=list)
    allowed_hosts: list[str] = Field(default_factory=list)
    # Peers whose X-Forwarded-For is believed (reverse proxies), as addresses or CIDR ranges.
    trusted_proxies: list[str] = Field(default_factory=list)
    max_body_bytes: int = Field(1_048_576, ge=1024)
    max_concurrent_requests: int = Field(64, ge=1)
    max_concurrent_per_client: int = Field(8, ge=1)
    rate_limit_per_minute: int = Field(120, ge=0)  # per client; 0 turns the limit off
    rate_limit_burst: int = Field(20, ge=1)
    # Failed authentications per client address (token guessing); 0 turns the limit off.
    auth_failures_per_minute: int = Field(10, ge=0)
    auth_failure_burst: int = Field(20, ge=1)
    # Headers and body of a request must arrive within this, else 408 and the connection closes.
    read_timeout_seconds: float = Field(10.0, gt=0, le=300)
    # The per-client limits also on a server only this machine reaches (see security.py).
    limit_local_clients: bool = False
    # The tools' own limit is 500 characters; this may only lower it.
    max_query_chars: int = Field(500, ge=1, le=500)
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Processes serving one port (`auto`: one per core); they share the cache file, cooldowns,
    # breakers and metrics.
    workers: Annotated[int, Field(ge=1, le=64)] | Literal["auto"] = 1

    @field_validator("auth_tokens", mode="before")
    @classmethod
    def _check_tokens(cls, value: Any) -> Any:
        # An empty token would match an empty credential, and a bare `-` item is null: either
        # would switch authentication off without anyone asking for that.
        value = _split_commas(value)
        if isinstance(value, list):
            for number, item in enumerate(value, 1):
                if item is None or (isinstance(item, str) and not item.strip()):
                    kind = "null (a bare '-' item)" if item is None else "empty or blank"
                    raise ValueError(
                        f"token {number} is {kind}: every token must be a non-empty string;"
                        " remove the item, or leave the list empty for no tokens"
                    )
        return _texts(value)

    @field_validator("allowed_origins", "allowed_hosts", "trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return _texts(_split_commas(value))

    @field_validator("allowed_origins")
    @classmethod
    def _check_origins(cls, value: list[str]) -> list[str]:
        from websearch_mcp.security import parse_origin_pattern

        for item in value:
            parse_origin_pattern(item)
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _check_hosts(cls, value: list[str]) -> list[str]:
        from websearch_mcp.security import parse_host_pattern

        for item in value:
            parse_host_pattern(item)
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _check_proxies(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(
                    f"{item!r} is not an address or CIDR network such as 10.0.0.0/8"
                ) from None
        return value


class MMRSettings(_Section):
    """Maximal marginal relevance: pick `lambda * relevance - (1 - lambda) * similarity`, with
    the relevance min-max normalised over the candidates and token Jaccard similarity (words
    shared with the query left out). 0.95 still demotes near-copies; on Cranfield (BENCHMARKS.md)
    it costs 0.0006 nDCG@10 against MMR off, where 0.85 cost 0.005 and 0.7 cost 0.009."""

    enabled: bool = True
    lambda_: float = Field(0.95, ge=0.0, le=1.0, alias="lambda")


class RankingSettings(_Section):
    """Weights and lists of the ranking signals (DESIGN section 4).

    The final score is the normalised RRF score times one bounded factor per signal. A signal
    s in [0, 1] with weight w gives the factor (1 + w * s) / (1 + w): 1 when s = 1, 1 / (1 + w)
    when s = 0, and exactly 1 for every result when w = 0, so each signal is switched off by a
    weight of 0 and RRF stays the backbone. Domain lists match a host and its subdomains, and
    extend built-in lists (so an empty list keeps the built-in protection).
    """

    # Cranfield (BENCHMARKS.md): alignment 0.05 orders results with the same votes and ranks
    # by their words (+0.001 nDCG@10, +0.004 MRR@10 against 0); 1.0 overrides the engines
    # (-0.014 MRR@10 against 0.05); phrase 0.2 costs 0.012 MRR@10.
    alignment_weight: float = Field(
        0.05, ge=0.0, le=5.0, description="share of the query's content words in the result"
    )
    rare_term_weight: float = Field(
        0.3, ge=0.0, le=5.0, description="share of rare/compound query terms (pgvector, pg18)"
    )
    phrase_weight: float = Field(
        0.0, ge=0.0, le=5.0, description="share of adjacent query word pairs adjacent in the result"
    )
    domain_penalty: float = Field(
        0.5, ge=0.0, le=1.0, description="a penalised site's score is multiplied by 1 - this"
    )
    # Off: it repeats RRF's vote count, and where engines index different parts of the web,
    # counting votes is what misleads (Cranfield at 60% coverage: +0.003 nDCG@10 without it).
    consensus_weight: float = Field(
        0.0, ge=0.0, le=5.0, description="share of the other answering index families that agree"
    )
    # RRF at k = 60 is nearly a vote count. Times a heavily weighted mean of the steep
    # (k + 1) / (k + rank) it comes close to RRF with that small k, whose top ranks count.
    # Chosen on the first half of the Cranfield queries at coverage 1.0, 0.8 and 0.6
    # (BENCHMARKS.md), confirmed on the second.
    position_weight: float = Field(
        20.0,
        ge=0.0,
        le=100.0,
        description="how high the engines that returned the result ranked it",
    )
    position_k: float = Field(
        5.0, ge=0.0, le=100.0, description="steepness of the position scale (k + 1) / (k + rank)"
    )
    # Engines that likely do not index a result vote as the ones that returned it did on
    # average; at most 1 (a full vote each). Worth most when engines see different documents.
    coverage_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="credit for the engines that likely do not index a result"
    )
    # Off: on Cranfield the reported scores (Tavily's relevance, SearXNG's 1/position) cost
    # nDCG@10 and MRR@10 next to the position signal.
    engine_score_weight: float = Field(
        0.0, ge=0.0, le=5.0, description="the engines' own relevance scores in place of ranks"
    )
    authority_weight: float = Field(
        0.1, ge=0.0, le=5.0, description="official documentation or the query's own site"
    )
    freshness_weight: float = Field(
        0.3, ge=0.0, le=5.0, description="recency, only when the query or time_range asks for it"
    )
    freshness_half_life_days: float = Field(
        180.0, gt=0.0, le=36_500.0, description="age halving the freshness without a time_range"
    )
    freshness_undated: float = Field(
        0.5, ge=0.0, le=1.0, description="freshness of a result without a known date"
    )
    quality_phrase_bonus: float = Field(
        0.2, ge=0.0, le=1.0, description="engine list quality: bonus for contiguous query pairs"
    )
    quality_offtopic_penalty: float = Field(
        0.5, ge=0.0, le=1.0, description="engine list quality: a hit with an off-topic word"
    )
    # Lists extend the built-in ones in websearch_mcp/ranking/domain.py and quality.py.
    penalized_domains: list[str] = Field(
        default_factory=list, description="added to the built-in e-commerce and brand sites"
    )
    dictionary_domains: list[str] = Field(
        default_factory=list, description="added to the dictionaries penalised on error codes"
    )
    authority_domains: list[str] = Field(
        default_factory=list, description="added to the built-in official and reference sites"
    )
    low_quality_tlds: list[str] = Field(
        default_factory=list, description="added to the built-in low-quality suffixes"
    )
    offtopic_words: list[str] = Field(
        default_factory=list, description="added to the built-in off-topic words (list quality)"
    )


def _check_engine_names(names: list[str]) -> list[str]:
    from websearch_mcp.engines.registry import ENGINES

    for name in names:
        if name not in ENGINES:
            raise ValueError(f"unknown engine {name!r} (allowed: {', '.join(sorted(ENGINES))})")
    return names


class PoolSettings(_Section):
    """The `pool` strategy: one keyed provider per request, a keyless engine as last resort."""

    order: Literal["round_robin", "priority", "weighted"] = "round_robin"
    # `priority`: these first, in this order; the other keyed providers follow.
    providers: list[str] = Field(default_factory=list)

    _check_providers = field_validator("providers")(_check_engine_names)


class SequentialSettings(_Section):
    """The `sequential` strategy: engines one after another until a list is good enough."""

    # These first, in this order; the other chosen engines follow in the built-in order.
    order: list[str] = Field(default_factory=list)
    quality_stop: float = Field(0.8, ge=0.0, le=1.0)
    quality_accept: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices("quality_accept", "relevance_threshold"),
    )
    force_all: bool = False

    _check_order = field_validator("order")(_check_engine_names)


class KeySettings(_Section):
    """Key pools: how long a key that failed is left alone."""

    cooldown_seconds: float = Field(1800.0, ge=0.0)  # rate limit or quota without Retry-After
    refused_cooldown_seconds: float = Field(21_600.0, ge=0.0)  # 401/403: the key was refused


class RetrySettings(_Section):
    """Retries of 429/502/503 answers within the deadline (exponential backoff with jitter)."""

    retries: int = Field(2, ge=0, le=5)
    base_seconds: float = Field(0.25, gt=0.0, le=10.0)
    max_seconds: float = Field(2.0, gt=0.0, le=60.0)


class BreakerSettings(_Section):
    """Per-engine circuit breakers (DESIGN section 6)."""

    enabled: bool = True
    captcha_seconds: float = Field(3600.0, ge=0.0)
    denied_seconds: float = Field(180.0, ge=0.0)  # access denied or 429 without Retry-After
    error_step_seconds: float = Field(5.0, ge=0.0)  # grows per failure in a row
    error_max_seconds: float = Field(120.0, ge=0.0)


class SearchSettings(_Section):
    strategy: Literal["hybrid", "sequential", "pool"] = "hybrid"
    max_results: int = Field(10, ge=1, le=50)
    deadline_seconds: float = Field(8.0, gt=0, le=120)
    # On the final score (normalised RRF times the signal factors); the top two always stay.
    relevance_threshold: float = Field(0.05, ge=0.0, le=1.0)
    rrf_k: int = Field(60, ge=1, le=1000)
    mmr: MMRSettings = Field(default_factory=MMRSettings)
    block_domains: list[str] = Field(default_factory=list)
    # Multiplies the fusion weight of a list reported `irrelevant` (it seems to answer another
    # query), so that it stays below the lists that answer this one.
    irrelevant_weight: float = Field(0.05, ge=0.0, le=1.0)
    ranking: RankingSettings = Field(default_factory=RankingSettings)
    pool: PoolSettings = Field(default_factory=PoolSettings)
    sequential: SequentialSettings = Field(default_factory=SequentialSettings)
    keys: KeySettings = Field(default_factory=KeySettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)


class CacheSettings(_Section):
    """The result cache. An entry lives `ttl_seconds` after it was stored or last hit, never
    longer than `max_age_seconds` after it was stored; answers with missing engines live
    `partial_ttl_seconds`, fetched pages `page_ttl_seconds`. The URL may hold a password: it
    is never shown in messages."""

    backend: Literal["sqlite", "redis", "none"] = "sqlite"
    path: Path = Field(default_factory=lambda: default_data_dir() / "cache.sqlite3")
    redis_url: str | None = Field(None, repr=False)
    ttl_seconds: int = Field(21_600, ge=1)
    max_age_seconds: int = Field(86_400, ge=1)
    partial_ttl_seconds: int = Field(600, ge=1)
    # Pages change more often than search results settle; fetch_page entries live this long.
    page_ttl_seconds: int = Field(3_600, ge=1)
    cleanup_interval_seconds: int = Field(1_800, ge=1)
    max_entries: int = Field(100_000, ge=1)

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return value

    @model_validator(mode="after")
    def _redis_needs_url(self) -> CacheSettings:
        if self.backend == "redis" and not self.redis_url:
            raise ValueError("backend 'redis' needs redis_url (e.g. redis://127.0.0.1:6379/0)")
        return self


PROXY_SCHEMES = ("http://", "https://", "socks5://", "socks5h://")


def _check_proxy_url(value: Any) -> Any:
    if isinstance(value, str) and not value.startswith(PROXY_SCHEMES):
        raise ValueError(f"must start with {', '.join(PROXY_SCHEMES)}")
    return value


class ProxySettings(_Section):
    """The proxy for engine requests; HTTP(S)_PROXY / ALL_PROXY / NO_PROXY also count."""

    url: str | None = Field(None, repr=False)
    no_proxy: list[str] = Field(default_factory=list)

    _check_url = field_validator("url")(_check_proxy_url)
    _split_no_proxy = field_validator("no_proxy", mode="before")(_split_commas)


class FetchSettings(_Section):
    allow_networks: list[str] = Field(default_factory=list)
    max_bytes: int = Field(10_485_760, ge=1024)
    timeout_seconds: float = Field(15.0, gt=0, le=300)
    max_redirects: int = Field(5, ge=0, le=20)
    allowed_ports: list[Annotated[int, Field(ge=1, le=65535)]] = Field(
        default_factory=lambda: [80, 443], min_length=1
    )
    connect_timeout_seconds: float = Field(5.0, gt=0, le=120)
    read_timeout_seconds: float = Field(10.0, gt=0, le=300)
    reader_fallback: bool = False
    reader_base_url: str = "https://r.jina.ai"
    reader_api_key: str | None = Field(None, repr=False)
    # Extraction limits: every HTML and PDF is read in a worker process that is killed when it
    # runs past timeout_seconds or extract_memory_mib.
    max_text_chars: int = Field(2_000_000, ge=1000)
    max_html_nodes: int = Field(50_000, ge=100)
    max_pdf_pages: int = Field(500, ge=1)
    max_pdf_decoded_bytes: int = Field(4_194_304, ge=65536)
    extract_workers: int = Field(2, ge=1, le=32)
    extract_memory_mib: int = Field(768, ge=256)

    @field_validator("allow_networks")
    @classmethod
    def _check_networks(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not a CIDR network such as 10.0.0.0/8") from None
        return value

    @field_validator("reader_base_url")
    @classmethod
    def _check_reader_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("reader_api_key", mode="before")
    @classmethod
    def _key_as_text(cls, value: Any) -> Any:
        # A numeric-looking key parses from YAML as a number; taking it as text means a
        # validation error can never echo the key back.
        return value if value is None or isinstance(value, str) else str(value)


class AcademicSettings(_Section):
    """The ranking of `academic_search` (websearch_mcp/ranking/academic.py).

    As in the web ranking, the score is the normalised RRF score times one bounded factor
    (1 + w * s) / (1 + w) per signal s in [0, 1]; a weight of 0 switches a signal off. The
    threshold is lower than the web one: indexes cover different fields (dblp, PubMed), so a
    paper found by a single index out of many is normal, and its RRF share is small.
    """

    relevance_threshold: float = Field(
        0.04, ge=0.0, le=1.0, description="final score below which results go (top two stay)"
    )
    alignment_weight: float = Field(
        1.0, ge=0.0, le=5.0, description="share of the query's content words in the paper"
    )
    rare_term_weight: float = Field(
        0.3, ge=0.0, le=5.0, description="share of rare/compound query terms (bert, covid-19)"
    )
    phrase_weight: float = Field(
        0.2, ge=0.0, le=5.0, description="share of adjacent query word pairs adjacent in the paper"
    )
    citations_weight: float = Field(
        0.3, ge=0.0, le=5.0, description="citations, log-compressed: log(1 + c) / log(1 + sat)"
    )
    citations_saturation: int = Field(
        1000, ge=1, description="citation count at which the citation signal reaches 1"
    )
    citations_unknown: float = Field(
        0.25, ge=0.0, le=1.0, description="citation signal of a paper no index counted"
    )
    venue_weight: float = Field(
        0.2, ge=0.0, le=5.0, description="published in a top venue (built-in list + venues)"
    )
    open_access_weight: float = Field(
        0.1, ge=0.0, le=5.0, description="a full-text PDF link is known"
    )
    freshness_weight: float = Field(
        0.3, ge=0.0, le=5.0, description="recency, only when the query asks for it (latest, 2025)"
    )
    freshness_half_life_days: float = Field(
        730.0, gt=0.0, le=36_500.0, description="age halving the freshness signal"
    )
    freshness_undated: float = Field(
        0.5, ge=0.0, le=1.0, description="freshness of a paper without a known date"
    )
    venues: list[str] = Field(
        default_factory=list,
        description="added to the built-in top venues: acronyms (NeurIPS) match as a word, "
        "names of three or more words as a phrase, shorter names exactly",
    )


class EngineSettings(_Section):
    enabled: bool | None = None  # None: the engine's own default
    api_keys: list[str] = Field(default_factory=list, repr=False)
    weight: float = Field(1.0, ge=0.0, le=100.0)
    # None: keep every result the engine returns.
    max_size: int | None = Field(
        None, ge=1, le=100, validation_alias=AliasChoices("max_size", "maxSize")
    )
    min_score: float = Field(0.0, ge=0.0, validation_alias=AliasChoices("min_score", "minScore"))
    timeout_seconds: float | None = Field(None, gt=0, le=120)
    base_url: str | None = None
    # The upstream index the engine serves ("google", "bing"); None: the engine's declaration.
    index: str | None = Field(None, min_length=1, max_length=40)
    # Requests per second (None: the engine's own declaration, 0: no limit).
    rate_limit: float | None = Field(None, ge=0.0, le=1000.0)
    # A proxy URL for this engine only, or false for a direct connection whatever else says.
    proxy: str | Literal[False] | None = Field(None, repr=False)

    _check_proxy = field_validator("proxy")(_check_proxy_url)

    @field_validator("proxy", mode="before")
    @classmethod
    def _proxy_url_or_false(cls, value: Any) -> Any:
        if value is None or value is False or isinstance(value, str):
            return value
        raise ValueError("must be a proxy URL or false")

    @field_validator("api_keys", mode="before")
    @classmethod
    def _split_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [k.strip() for k in value.split(",") if k.strip()]
        return value

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if value else value


class LLMSettings(_Section):
    """An OpenAI-compatible chat completions API for optional summaries of `web_search`.

    Summaries exist only when both `base_url` (e.g. `https://api.openai.com/v1`; requests go to
    `{base_url}/chat/completions`) and `model` are set. The key may come from `LLM_API_KEY`.
    """

    base_url: str | None = None
    api_key: str | None = Field(None, repr=False)
    model: str | None = None
    timeout_seconds: float = Field(
        10.0, gt=0, le=300, description="the whole summary (streaming, then plain) at most this"
    )
    max_input_chars: int = Field(
        12_000, ge=4_000, le=500_000, description="the prompt, results included, at most this"
    )
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    max_tokens: int = Field(600, ge=16, le=32_768, description="the summary's length in tokens")

    @property
    def enabled(self) -> bool:
        """Whether summaries are offered: both `base_url` and `model` are set."""
        return bool(self.base_url and self.model)

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https:// (e.g. https://api.openai.com/v1)")
        return value.rstrip("/") if value else value

    @field_validator("api_key", mode="before")
    @classmethod
    def _key_as_text(cls, value: Any) -> Any:
        # As for the reader key: a numeric-looking key is taken as text, never echoed back.
        return value if value is None or isinstance(value, str) else str(value)


class Settings(_Section):
    """The whole configuration. `source` names the file it came from (for messages)."""

    server: ServerSettings = Field(default_factory=ServerSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    proxy: ProxySettings = Field(default_factory=ProxySettings)
    network: Literal["open", "restricted"] = "open"
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    academic: AcademicSettings = Field(default_factory=AcademicSettings)
    engines: dict[str, EngineSettings] = Field(default_factory=dict)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    def engine(self, name: str) -> EngineSettings:
        """The settings of one engine, defaults when the file says nothing of it."""
        return self.engines.get(name) or EngineSettings()


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    """Nested dict from `WEBSEARCH_MCP_<SECTION>__<KEY>=value` variables (values parsed as YAML)."""
    tree: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in (CONFIG_ENV, TOKENS_ENV):
            continue
        path = [part.lower() for part in name[len(ENV_PREFIX) :].split("__") if part]
        if not path:
            continue
        try:
            value = yaml.safe_load(raw) if raw.strip() else raw
        except (yaml.YAMLError, ValueError):  # ValueError: a number of thousands of digits
            value = raw
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"environment variable {name}: conflicts with another variable")
        node[path[-1]] = value
    return tree


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _allowed(loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed where the unknown key at `loc` stands (for the error message)."""
    model: type[BaseModel] = Settings
    parts = list(loc[:-1])
    while parts:
        part = parts.pop(0)
        if model is Settings and part == "engines":
            if not parts:
                return []
            parts.pop(0)  # the engine's name
            model = EngineSettings
            continue
        field = model.model_fields.get(str(part))
        ann = field.annotation if field else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _format_error(err: ValidationError, source: str) -> str:
    lines = [f"invalid configuration in {source}:"]
    for item in err.errors():
        loc = tuple(item["loc"])
        key = ".".join(str(p) for p in loc)
        if item["type"] == "extra_forbidden":
            allowed = _allowed(loc)
            hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
            lines.append(f"  {key}: unknown key{hint}")
        else:
            got = item.get("input")
            shown = "" if _is_secret(loc) or isinstance(got, dict) else f" (got {got!r})"
            lines.append(f"  {key}: {item['msg']}{shown}")
    return "\n".join(lines)


def _is_secret(loc: tuple[Any, ...]) -> bool:
    secret = {"api_keys", "api_key", "auth_tokens", "redis_url", "url", "proxy"}
    return any(str(p) in secret for p in loc)


def _env_keys(environ: dict[str, str]) -> dict[str, Any]:
    """`<ENGINE>_API_KEYS=k1,k2` for every registered engine that needs a key."""
    from websearch_mcp.engines.registry import ENGINES

    found: dict[str, Any] = {}
    for name, engine in ENGINES.items():
        var = engine.key_env or f"{name.upper()}_API_KEYS"
        if environ.get(var):
            found[name] = {"api_keys": environ[var]}
    return {"engines": found} if found else {}


def parse_config(data: Any, source: str, environ: dict[str, str] | None = None) -> Settings:
    """Validate a parsed YAML document plus environment overrides into `Settings`."""
    from websearch_mcp.engines.registry import ENGINES

    env = dict(os.environ if environ is None else environ)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"invalid configuration in {source}: the top level must be a mapping")
    merged = _merge(_merge(data, _env_keys(env)), _env_overrides(env))
    if env.get(TOKENS_ENV, "").strip():
        merged = _merge(merged, {"server": {"auth_tokens": env[TOKENS_ENV]}})
    if env.get(LLM_KEY_ENV, "").strip():
        merged = _merge(merged, {"llm": {"api_key": env[LLM_KEY_ENV].strip()}})
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as err:
        raise ConfigError(_format_error(err, source)) from None
    unknown = sorted(set(settings.engines) - set(ENGINES))
    if unknown:
        raise ConfigError(
            f"invalid configuration in {source}:\n  engines.{unknown[0]}: unknown engine"
            f" (allowed: {', '.join(sorted(ENGINES))})"
        )
    problems = _strategy_engine_problems(settings, ENGINES)
    if problems:
        raise ConfigError(f"invalid configuration in {source}:\n  " + "\n  ".join(problems))
    return settings


def _strategy_engine_problems(settings: Settings, engines: dict[str, Any]) -> list[str]:
    """Engines named by the strategies' settings that could never be asked there: of the
    other kind (academic; keyless for the pool's keyed providers), disabled, or keyless."""
    problems = []
    lists = (
        ("search.pool.providers", settings.search.pool.providers, "keyed web providers"),
        ("search.sequential.order", settings.search.sequential.order, "web engines"),
    )
    for key, names, allowed in lists:
        pool = key == "search.pool.providers"
        wrong = [
            n for n in names if engines[n].kind != "web" or (pool and not engines[n].needs_key)
        ]
        if wrong:
            problems.append(f"{key}: {', '.join(wrong)}: only {allowed} belong here")
        off = []
        for name in names:
            conf = settings.engine(name)
            if not (engines[name].default_enabled if conf.enabled is None else conf.enabled):
                off.append(f"{name} is disabled")
            elif pool and name not in wrong and not conf.api_keys:
                off.append(f"{name} has no API key")
        if off:
            problems.append(f"{key}: {'; '.join(off)} (engines.<name>)")
    return problems


def load_config(path: str | os.PathLike[str] | None = None) -> Settings:
    """Load the YAML file at `path` (or `$WEBSEARCH_MCP_CONFIG`); built-in defaults without one."""
    chosen = path or os.environ.get(CONFIG_ENV)
    if not chosen:
        return parse_config({}, "built-in defaults")
    file = Path(chosen)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read configuration file {file}: {err.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError) as err:  # ValueError: a number of thousands of digits
        raise ConfigError(f"invalid YAML in {file}: {err}") from None
    return parse_config(data, str(file))
