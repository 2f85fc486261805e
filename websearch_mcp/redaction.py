"""Secrets (tokens, API keys, passwords) kept out of every text that leaves the process.

`secrets_of(settings)` lists every configured secret in every form it is sent in; `redact` and
`Redactor` replace them with `***` in a text, `RedactingFilter` in a logger's records; engines
mask `KEY_LIKE` tokens in an API's own error text (which may quote a key not configured here).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus, unquote, urlsplit

if TYPE_CHECKING:
    from websearch_mcp.config import Settings

#: What a secret is replaced with.
MASK = "***"
#: A key-like token: 12 or more word characters or dashes, with at least one digit and one letter.
KEY_LIKE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{12,}")


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret replaced, so error texts can never carry a key."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


class RedactingFilter(logging.Filter):
    """Removes secrets from every record of the logger it is attached to (URLs with keys)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


#: Parts of a combined credential shorter than this are not redacted on their own (they would
#: match ordinary words); the whole entry still is.
MIN_SECRET_PART = 8


def secrets_of(settings: Settings) -> tuple[str, ...]:
    """Every secret in `settings` in every form it is sent in: bearer tokens, API keys (and each
    half of a combined `<cx>:<key>` entry), passwords inside URLs, each also percent-encoded as
    it appears in a request URL."""
    found: list[str] = [*settings.server.auth_tokens]
    for engine in settings.engines.values():
        for key in engine.api_keys:
            found.append(key)
            parts = [*key.split(":"), *key.rpartition(":")[::2]]
            found.extend(part for part in parts if len(part) >= MIN_SECRET_PART)
    for value in (settings.llm.api_key, settings.fetch.reader_api_key):
        if value:
            found.append(value)
    proxies = [e.proxy for e in settings.engines.values() if isinstance(e.proxy, str)]
    for url in (settings.cache.redis_url, settings.proxy.url, *proxies):
        password = urlsplit(url).password if url else None
        if password:
            found.extend((password, unquote(password)))
    forms = {form for secret in found if secret for form in _encodings(secret)}
    return tuple(sorted(forms, key=len, reverse=True))


def _encodings(secret: str) -> set[str]:
    """`secret` as written and as URL encoders write it (query strings, form bodies)."""
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), quote(secret, "~")}


class Redactor:
    """Replaces each known secret with `***` (longest first, so none is left half-shown)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)
