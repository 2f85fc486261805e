"""The whole configuration: one field per section of the file."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Literal
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit

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

    def secrets(self, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """Every secret held here in every form it is sent in, longest first: bearer tokens,
        API keys (and each half of a combined `<cx>:<key>` entry), passwords inside URLs (proxies,
        those of the standard variables of `environ` (default: the process's) included, Redis,
        base URLs), each also percent-encoded as it appears in a request URL."""
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
        env = os.environ if environ is None else environ
        urls += [_with_scheme(env.get(name)) for name in _PROXY_VARIABLES]
        for url in urls:
            for secret in _url_secrets(url) if url else ():
                found.extend((secret, unquote(secret)))
        forms = {form for secret in found if secret for form in _encodings(secret)}
        return tuple(sorted(forms, key=len, reverse=True))


#: The standard proxy variables the service's requests go through when `proxy.url` is unset.
_PROXY_VARIABLES = tuple(
    name for base in ("http_proxy", "https_proxy", "all_proxy") for name in (base, base.upper())
)


def _with_scheme(value: str | None) -> str | None:
    # `user:pass@proxy.corp:3128` in a variable means an HTTP proxy, as the requests read it.
    return f"http://{value}" if value and "://" not in value else value


#: Words in the name of a query parameter that holds a credential (`?password=`, which redis-py
#: reads, `?token=`, `?api_key=`, `?access_token=`, `?jwt=`, `?session_id=` of a SearXNG or a
#: model behind a gateway); not inside the search words `author` and `keyword`, nor `sid`
#: inside another word (`side`, `inside`).
_SECRET_PARAMETER = re.compile(
    r"pass|token|key(?!words?(?![a-z]))|secret|auth(?!ors?(?![a-z]))|sig|jwt|credential"
    r"|session|sessid|access_?code|(?<![a-z])sid(?![a-z])"
)
#: A password's name, whose value is a secret at any length: not "pass" inside another word
#: (`bypass_cache=1`, `passthrough=true`).
#: Its last word: a number or a form's brackets may follow (`password1`, `user[password]`).
_PASSWORD = re.compile(r"(?:passw(?:or)?d|(?<![a-z])(?:pass|pwd))[^a-z]*$")


def _url_secrets(url: str) -> list[str]:
    """The credentials in `url`: the password after its user name, and the values of its query
    parameters named as credentials (a password of any length; another value from
    `MIN_SECRET_PART` characters: `?key=1` names no secret to mask in every log line)."""
    try:
        parts = urlsplit(url)
        found = [parts.password] if parts.password else []
    except ValueError:  # a variable no URL parser reads is no proxy the requests use either
        return []
    # A fragment is never sent, but is logged with the URL: `#token=` as `?token=`.
    for pair in f"{parts.query}&{parts.fragment}".split("&"):
        name, _, raw = pair.partition("=")
        lowered, value = unquote_plus(name).lower(), unquote_plus(raw)
        password = bool(_PASSWORD.search(lowered))
        if not value or not (password or _SECRET_PARAMETER.search(lowered)):
            continue
        if password or len(value) >= MIN_SECRET_PART:
            # As the URL writes it too: a `+` is sent as it is, not as the space a form reads.
            found.extend({value, raw})
    return found


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
