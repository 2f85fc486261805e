"""The whole configuration: one field per section of the file."""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote, quote_plus, unquote, urlsplit

from pydantic import Field

from websearch_mcp.config.academic import AcademicSettings
from websearch_mcp.config.cache import CacheSettings
from websearch_mcp.config.engines import EngineSettings
from websearch_mcp.config.llm import LLMSettings
from websearch_mcp.config.network import FetchSettings, ProxySettings
from websearch_mcp.config.search import SearchSettings
from websearch_mcp.config.server import ServerSettings
from websearch_mcp.config.types import Section

#: Parts of a combined credential shorter than this are not redacted on their own (they would
#: match ordinary words); the whole entry still is.
MIN_SECRET_PART = 8


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

    def secrets(self) -> tuple[str, ...]:
        """Every secret held here in every form it is sent in, longest first: bearer tokens,
        API keys (and each half of a combined `<cx>:<key>` entry), passwords inside URLs (proxies,
        Redis, base URLs), each also percent-encoded as it appears in a request URL."""
        found: list[str] = [*self.server.auth_tokens]
        for engine in self.engines.values():
            for key in engine.api_keys:
                found.append(key)
                parts = [*key.split(":"), *key.rpartition(":")[::2]]
                found.extend(part for part in parts if len(part) >= MIN_SECRET_PART)
        for value in (self.llm.api_key, self.fetch.reader_api_key):
            if value:
                found.append(value)
        # A base URL may hold a password as well (a SearXNG or a model behind basic auth).
        urls = [self.cache.redis_url, self.proxy.url, self.llm.base_url, self.fetch.reader_base_url]
        for engine in self.engines.values():
            urls += [engine.base_url, engine.proxy if isinstance(engine.proxy, str) else None]
        for url in urls:
            password = urlsplit(url).password if url else None
            if password:
                found.extend((password, unquote(password)))
        forms = {form for secret in found if secret for form in _encodings(secret)}
        return tuple(sorted(forms, key=len, reverse=True))


def _encodings(secret: str) -> set[str]:
    """`secret` as written, as URL encoders write it (query strings, form bodies), and as the
    HTTP client's debug lines print it in bytes (a SOCKS login: `b'p\\xc3\\xa4ss'`)."""
    as_bytes = repr(secret.encode())[2:-1]
    return {
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        quote(secret, "~"),
        as_bytes,
    }
