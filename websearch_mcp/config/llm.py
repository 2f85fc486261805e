"""The `llm` section: the optional model that summarises `web_search` results."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from websearch_mcp.config.types import HTTP_SCHEMES, SecretText, Section, starts_with


class LLMSettings(Section):
    """An OpenAI-compatible chat completions API for optional summaries of `web_search`.

    Summaries exist only when both `base_url` (e.g. `https://api.openai.com/v1`; requests go to
    `{base_url}/chat/completions`) and `model` are set. The key may come from `LLM_API_KEY`.
    """

    base_url: Annotated[
        str | None,
        starts_with(HTTP_SCHEMES, strip=True, hint=" (e.g. https://api.openai.com/v1)"),
    ] = None
    api_key: SecretText = None
    model: str | None = None
    timeout_seconds: float = Field(
        10.0, gt=0, le=300, description="the whole summary (streaming, then plain) at most this"
    )
    max_input_chars: int = Field(
        12_000, ge=4_000, le=500_000, description="the prompt, results included, at most this"
    )
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    max_tokens: int = Field(
        600,
        ge=16,
        le=32_768,
        description="the summary's length in tokens (as max_completion_tokens to a model that"
        " refuses max_tokens)",
    )

    @field_validator("base_url")
    @classmethod
    def _the_apis_base(cls, url: str | None) -> str | None:
        if url and url.rstrip("/").endswith("/chat/completions"):
            raise ValueError(
                "the API's base, without /chat/completions, which is added to it"
                " (e.g. https://api.openai.com/v1)"
            )
        return url

    @property
    def enabled(self) -> bool:
        """Whether summaries are offered: both `base_url` and `model` are set."""
        return bool(self.base_url and self.model)

    def half_set(self) -> str | None:
        """Why summaries are off though one of the two they need is set (an empty variable may
        unset the other on purpose), or None."""
        if bool(self.base_url) == bool(self.model):
            return None
        given, missing = ("base_url", "model") if self.base_url else ("model", "base_url")
        return f"summaries are off: llm.{given} is set, llm.{missing} is not"
