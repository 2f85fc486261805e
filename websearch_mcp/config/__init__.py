"""The YAML configuration as pydantic models, environment overrides and readable errors.

Every key is optional. Unknown keys and bad values are rejected with a message that names the
key, the file and what is allowed. One module per section of the file; `types.py` holds the
validator types they share and `loader.py` reads the file and the environment. The engines
the settings name are checked against the registry outside this package
(`search.configuration`), which knows the engines.
"""

from websearch_mcp.config.academic import AcademicSettings
from websearch_mcp.config.cache import CacheSettings
from websearch_mcp.config.engines import EngineSettings
from websearch_mcp.config.llm import LLMSettings
from websearch_mcp.config.loader import CONFIG_ENV, ENV_PREFIX
from websearch_mcp.config.network import FetchSettings, ProxySettings
from websearch_mcp.config.news import NewsSettings
from websearch_mcp.config.ranking import MMRSettings, RankingSettings
from websearch_mcp.config.search import (
    BreakerSettings,
    KeySettings,
    PoolSettings,
    RetrySettings,
    SearchSettings,
    SequentialSettings,
)
from websearch_mcp.config.server import ServerSettings
from websearch_mcp.config.settings import Settings

__all__ = [
    "CONFIG_ENV",
    "ENV_PREFIX",
    "AcademicSettings",
    "BreakerSettings",
    "CacheSettings",
    "EngineSettings",
    "FetchSettings",
    "KeySettings",
    "LLMSettings",
    "MMRSettings",
    "NewsSettings",
    "PoolSettings",
    "ProxySettings",
    "RankingSettings",
    "RetrySettings",
    "SearchSettings",
    "SequentialSettings",
    "ServerSettings",
    "Settings",
]
