"""The whole configuration: one field per section of the file."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from websearch_mcp.config.academic import AcademicSettings
from websearch_mcp.config.cache import CacheSettings
from websearch_mcp.config.engines import EngineSettings
from websearch_mcp.config.llm import LLMSettings
from websearch_mcp.config.network import FetchSettings, ProxySettings
from websearch_mcp.config.search import SearchSettings
from websearch_mcp.config.server import ServerSettings
from websearch_mcp.config.types import Section


class Settings(Section):
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
