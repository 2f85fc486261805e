"""The `cache` section: where results and pages are kept and for how long."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from websearch_mcp.config.types import RedisUrl, Section, default_data_dir


def _named_file(value: Any) -> Any:
    # An empty path reads as ".", the working directory: SQLite cannot open it, and the service
    # would run without a cache, its /readyz failing, rather than say which key is wrong.
    if isinstance(value, str) and not value.strip():
        raise ValueError("must name the SQLite file; leave the key out for the default")
    return value


class CacheSettings(Section):
    """The result cache. An entry lives `ttl_seconds` after it was stored or last hit, never
    longer than `max_age_seconds` after it was stored; for answers with missing engines
    `partial_ttl_seconds` and fetched pages `page_ttl_seconds` take the place of `ttl_seconds`
    (sliding as it does), and news answers (and those of the past day, `time_range: day`) live
    at most `news_ttl_seconds` after they were made. The URL may hold a password: it
    is never shown in messages. `redis_timeout_seconds` bounds each call to Redis, its name
    lookup and connecting included: a search waits no longer for the cache or the shared
    cooldowns before going on without them."""

    backend: Literal["sqlite", "redis", "none"] = "sqlite"
    path: Annotated[Path, BeforeValidator(_named_file)] = Field(
        default_factory=lambda: default_data_dir() / "cache.sqlite3"
    )
    redis_url: RedisUrl = Field(None, repr=False)
    redis_timeout_seconds: float = Field(0.25, gt=0, le=10)
    # Keys `<prefix>:` (answers) and `<prefix>-cooldown:` (cooldowns, breakers): deployments
    # sharing one Redis database with prefixes of their own neither clean up nor rest each
    # other's.
    redis_prefix: str = Field("websearch-mcp", pattern=r"^[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*$")
    ttl_seconds: int = Field(21_600, ge=1)
    max_age_seconds: int = Field(86_400, ge=1)
    partial_ttl_seconds: int = Field(600, ge=1)
    # A news answer, or one of the past day, is stale within the hour: kept this long after it
    # was made, hits or not.
    news_ttl_seconds: int = Field(900, ge=1)
    # Pages change more often than search results settle; fetch_page entries live this long.
    page_ttl_seconds: int = Field(3_600, ge=1)
    cleanup_interval_seconds: int = Field(1_800, ge=1)
    max_entries: int = Field(100_000, ge=1)
    max_bytes: int = Field(1_073_741_824, ge=1_048_576)

    @field_validator("path")
    @classmethod
    def _not_a_directory(cls, path: Path, info: ValidationInfo) -> Path:
        if info.data.get("backend") == "sqlite" and path.expanduser().is_dir():
            raise ValueError(
                f"{path} is a directory: name the SQLite file in it ({path / 'cache.sqlite3'})"
            )
        return path

    @field_validator("redis_prefix")
    @classmethod
    def _not_a_cooldown_prefix(cls, prefix: str) -> str:
        if prefix.endswith("-cooldown") or len(prefix) > 64:
            raise ValueError("must not end in -cooldown (the cooldowns' keys) nor pass 64 chars")
        return prefix

    def redis_prefixes(self) -> tuple[str, str]:
        """The key prefixes of the answers and of the cooldowns in Redis."""
        return f"{self.redis_prefix}:", f"{self.redis_prefix}-cooldown:"

    @model_validator(mode="after")
    def _redis_needs_url(self) -> CacheSettings:
        if self.backend == "redis" and not self.redis_url:
            raise ValueError("backend 'redis' needs redis_url (e.g. redis://127.0.0.1:6379/0)")
        return self
