"""The `engines` section: one block of settings per engine.

Which engine names exist, and which of them the strategies may name, is known in
websearch_mcp/engines/checks.py; the loader asks it after validation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BeforeValidator, Field

from websearch_mcp.config.types import (
    HttpUrl,
    Section,
    TextList,
    each,
    printable_secret,
    proxy_url,
)


def _proxy_url_or_false(value: Any) -> Any:
    if value is None or value is False or isinstance(value, str):
        return value
    raise ValueError("must be a proxy URL or false")


class EngineSettings(Section):
    enabled: bool | None = None  # None: the engine's own default
    api_keys: Annotated[TextList, each(printable_secret)] = Field(default_factory=list, repr=False)
    weight: float = Field(1.0, ge=0.0, le=100.0)
    # None: keep every result the engine returns.
    max_size: int | None = Field(
        None, ge=1, le=100, validation_alias=AliasChoices("max_size", "maxSize")
    )
    min_score: float = Field(0.0, ge=0.0, validation_alias=AliasChoices("min_score", "minScore"))
    timeout_seconds: float | None = Field(None, gt=0, le=120)
    base_url: HttpUrl | None = None
    # The upstream index the engine serves ("google", "bing"); None: the engine's declaration.
    index: str | None = Field(None, min_length=1, max_length=40)
    # Requests per second (None: the engine's own declaration, 0: no limit).
    rate_limit: float | None = Field(None, ge=0.0, le=1000.0)
    # A proxy URL for this engine only, or false for a direct connection whatever else says.
    # The URL is checked on the whole value, so that an error names the key, not a union branch.
    proxy: Annotated[
        str | Literal[False] | None, proxy_url, BeforeValidator(_proxy_url_or_false)
    ] = Field(None, repr=False)
