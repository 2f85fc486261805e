"""The YAML configuration as pydantic models, environment overrides and readable errors.

Every key is optional. Unknown keys and bad values are rejected with a message that names the
key, the file and what is allowed. Any setting can also come from the environment as
`WEBSEARCH_MCP_<SECTION>__<KEY>` (nested keys joined by `__`), and engine keys from
`<ENGINE>_API_KEYS=k1,k2`.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from websearch_mcp.errors import ConfigError

ENV_PREFIX = "WEBSEARCH_MCP_"
CONFIG_ENV = "WEBSEARCH_MCP_CONFIG"


def default_data_dir() -> Path:
    """The user's data directory for the cache (XDG on Unix)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "websearch-mcp"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(8338, ge=1, le=65535)
    auth_tokens: list[str] = Field(default_factory=list, repr=False)
    allow_anonymous: bool = False
    allowed_origins: list[str] = Field(default_factory=list)
    allowed_hosts: list[str] = Field(default_factory=list)
    max_body_bytes: int = Field(1_048_576, ge=1024)
    max_concurrent_requests: int = Field(64, ge=1)


class MMRSettings(_Section):
    enabled: bool = True
    lambda_: float = Field(0.7, ge=0.0, le=1.0, alias="lambda")


class RankingSettings(_Section):
    """Weights and lists of the ranking signals (DESIGN section 4).

    The final score is the normalised RRF score times one bounded factor per signal. A signal
    s in [0, 1] with weight w gives the factor (1 + w * s) / (1 + w): 1 when s = 1, 1 / (1 + w)
    when s = 0, and exactly 1 for every result when w = 0, so each signal is switched off by a
    weight of 0 and RRF stays the backbone. Domain lists match a host and its subdomains.
    """

    alignment_weight: float = Field(
        0.5, ge=0.0, le=5.0, description="share of the query's content words in the result"
    )
    rare_term_weight: float = Field(
        0.3, ge=0.0, le=5.0, description="share of rare/compound query terms (pgvector, pg18)"
    )
    phrase_weight: float = Field(
        0.2, ge=0.0, le=5.0, description="share of adjacent query word pairs adjacent in the result"
    )
    domain_penalty: float = Field(
        0.5, ge=0.0, le=1.0, description="a penalised site's score is multiplied by 1 - this"
    )
    consensus_weight: float = Field(
        0.1, ge=0.0, le=5.0, description="share of the other answering engines that agree"
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
    penalized_domains: list[str] = Field(
        default=[
            "amazon.com", "amazon.co.uk", "amazon.de", "amazon.co.jp", "amazon.in", "ebay.com",
            "ebay.co.uk", "ebay.de", "aliexpress.com", "alibaba.com", "walmart.com", "etsy.com",
            "temu.com", "shein.com", "bestbuy.com", "target.com", "flipkart.com", "rakuten.com",
            "rakuten.co.jp", "mercari.com", "wish.com", "newegg.com", "taobao.com", "tmall.com",
            "jd.com", "pinduoduo.com", "1688.com", "made-in-china.com", "dhgate.com",
            "pinterest.com", "shopee.com", "lazada.com", "apple.com", "samsung.com",
        ],
        description="e-commerce and brand sites, penalised unless the query names them",
    )  # fmt: skip
    dictionary_domains: list[str] = Field(
        default=[
            "merriam-webster.com", "dictionary.com", "thefreedictionary.com", "wiktionary.org",
            "collinsdictionary.com", "dictionary.cambridge.org", "oxfordlearnersdictionaries.com",
            "urbandictionary.com", "vocabulary.com", "yourdictionary.com", "wordreference.com",
            "macmillandictionary.com", "definitions.net", "acronymfinder.com",
            "abbreviations.com", "dict.youdao.com", "iciba.com", "zdic.net", "dict.cn",
            "hjdict.com", "linguee.com",
        ],
        description="dictionaries, penalised for error-code queries (ENOENT, 0x80070005)",
    )  # fmt: skip
    authority_domains: list[str] = Field(
        default=[
            "docs.python.org", "python.org", "postgresql.org", "sqlite.org", "mysql.com",
            "developer.mozilla.org", "w3.org", "whatwg.org", "ietf.org", "rfc-editor.org",
            "readthedocs.io", "readthedocs.org", "docs.rs", "doc.rust-lang.org",
            "rust-lang.org", "pkg.go.dev", "go.dev", "nodejs.org", "typescriptlang.org",
            "react.dev", "kernel.org", "man7.org", "gnu.org", "apache.org", "docker.com",
            "kubernetes.io", "learn.microsoft.com", "developer.apple.com", "developer.android.com",
            "cloud.google.com", "developers.google.com", "docs.aws.amazon.com", "aws.amazon.com",
            "docs.github.com", "github.com", "gitlab.com", "stackoverflow.com", "pypi.org",
            "npmjs.com", "crates.io", "wikipedia.org", "arxiv.org", "nih.gov", "nature.com",
            "science.org", "acm.org", "ieee.org", "who.int", "europa.eu",
        ],
        description="official documentation and reference sites; they also lift a penalty",
    )  # fmt: skip
    low_quality_tlds: list[str] = Field(
        default=[
            "xyz", "top", "click", "loan", "work", "gq", "tk", "ml", "cf", "ga", "buzz", "icu",
            "cyou", "rest", "monster", "bid", "win", "review", "country", "stream", "download",
            "racing", "men", "date", "faith", "cricket", "party", "trade", "accountant", "zip",
            "mov", "sbs", "cfd", "bond", "lol", "quest",
        ],
        description="public suffixes of sites penalised as low quality",
    )  # fmt: skip
    offtopic_words: list[str] = Field(
        default=[
            "casino", "casinos", "gambling", "betting", "bet365", "slots", "poker", "lottery",
            "porn", "porno", "xxx", "sex", "escort", "escorts", "viagra", "cialis", "payday",
            "keygen", "crack", "cracked", "warez", "replica", "博彩", "赌博", "赌场", "彩票",
            "色情", "成人", "贷款", "代孕", "发票", "六合彩", "娱乐城",
        ],
        description="whole words that mark a hit off-topic, unless the query uses them",
    )  # fmt: skip


class SearchSettings(_Section):
    strategy: Literal["hybrid", "sequential", "pool"] = "hybrid"
    max_results: int = Field(10, ge=1, le=50)
    deadline_seconds: float = Field(8.0, gt=0, le=120)
    relevance_threshold: float = Field(0.15, ge=0.0, le=1.0)
    rrf_k: int = Field(60, ge=1, le=1000)
    mmr: MMRSettings = Field(default_factory=MMRSettings)
    block_domains: list[str] = Field(default_factory=list)
    ranking: RankingSettings = Field(default_factory=RankingSettings)


class CacheSettings(_Section):
    backend: Literal["sqlite", "redis", "none"] = "sqlite"
    path: Path = Field(default_factory=lambda: default_data_dir() / "cache.sqlite3")
    redis_url: str | None = Field(None, repr=False)
    ttl_seconds: int = Field(21_600, ge=1)
    max_age_seconds: int = Field(86_400, ge=1)
    partial_ttl_seconds: int = Field(600, ge=1)
    cleanup_interval_seconds: int = Field(1_800, ge=1)
    max_entries: int = Field(100_000, ge=1)


class ProxySettings(_Section):
    url: str | None = Field(None, repr=False)
    no_proxy: list[str] = Field(default_factory=list)


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
    relevance_threshold: float = Field(0.1, ge=0.0, le=1.0)
    venues: list[str] = Field(default_factory=list)


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
    base_url: str | None = None
    api_key: str | None = Field(None, repr=False)
    model: str | None = None


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
        if not name.startswith(ENV_PREFIX) or name == CONFIG_ENV:
            continue
        path = [part.lower() for part in name[len(ENV_PREFIX) :].split("__") if part]
        if not path:
            continue
        try:
            value = yaml.safe_load(raw) if raw.strip() else raw
        except yaml.YAMLError:
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
    return any(str(p) in {"api_keys", "api_key", "auth_tokens", "redis_url", "url"} for p in loc)


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
    return settings


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
    except yaml.YAMLError as err:
        raise ConfigError(f"invalid YAML in {file}: {err}") from None
    return parse_config(data, str(file))
