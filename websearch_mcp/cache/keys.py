"""Cache keys: a normalised query, the tool's arguments and a config fingerprint, hashed.

A key is a SHA-256 hex digest, so neither the query nor any argument is ever readable in the
cache's keys. Arguments are canonicalised first (keys sorted, `None` values dropped, sets sorted,
pydantic models and dataclasses dumped), so equal requests give equal keys whatever their order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
from collections.abc import Mapping
from enum import Enum
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# Fields left out of a fingerprint: rotating a key must not empty the cache, and no secret feeds
# a hash that ends up in the cache's keys. Proxy URLs may hold a password (whether an engine is
# proxied is in the fingerprint on its own).
SECRET_FIELDS = frozenset(
    {
        "api_key",
        "api_keys",
        "auth_tokens",
        "password",
        "proxy",
        "reader_api_key",
        "redis_url",
        "token",
    }
)


#: URL fields whose address counts (another instance answers otherwise) but whose user
#: information, which may hold a password, does not.
URL_FIELDS = frozenset({"base_url", "reader_base_url"})


def _without_credentials(url: str) -> str:
    """`url` without `user:password@` in its authority."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


#: Words engines read as operators only in capitals: `a OR b` is not `a or b`.
OPERATORS = frozenset({"OR", "AND", "NOT"})


def normalise_query(text: str) -> str:
    """The query as the cache sees it: Unicode NFKC, case-folded but for `OPERATORS`,
    whitespace collapsed.

    `"  Ｒｕｓｔ\u3000ASYNC\tbook "` and `"rust async book"` are the same query.
    """
    words = unicodedata.normalize("NFKC", text).split()
    # Case folding can leave characters that NFKC would compose again (e.g. from U+0130).
    folded = [w if w in OPERATORS else unicodedata.normalize("NFKC", w.casefold()) for w in words]
    return " ".join(" ".join(folded).split())


def _plain(value: Any, *, drop_secrets: bool) -> Any:
    """`value` as plain JSON data with a stable order, or TypeError for what has none."""
    if value is None or isinstance(value, bool | int | str):
        return value
    # Lists and mappings before the slower checks: a call's arguments are made of them.
    if isinstance(value, list | tuple):
        return [_plain(item, drop_secrets=drop_secrets) for item in value]
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if item is None or (drop_secrets and name in SECRET_FIELDS):
                continue
            if drop_secrets and name in URL_FIELDS and isinstance(item, str):
                item = _without_credentials(item)
            out[name] = _plain(item, drop_secrets=drop_secrets)
        return dict(sorted(out.items()))
    if isinstance(value, float):
        # json renders floats exactly; -0.0 and 0.0 mean the same setting.
        return value + 0.0
    if isinstance(value, Enum):
        return _plain(value.value, drop_secrets=drop_secrets)
    if isinstance(value, PurePath):
        return str(value)
    if hasattr(value, "model_dump"):  # pydantic models (settings sections)
        return _plain(value.model_dump(mode="json", by_alias=False), drop_secrets=drop_secrets)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _plain(fields, drop_secrets=drop_secrets)
    if isinstance(value, set | frozenset):
        items = [_plain(item, drop_secrets=drop_secrets) for item in value]
        return sorted(items, key=_dumps)
    raise TypeError(f"cannot use a {type(value).__name__} in a cache key")


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(value: Any) -> str:
    return hashlib.sha256(_dumps(value).encode("utf-8")).hexdigest()


def config_fingerprint(*parts: Any) -> str:
    """A stable 16-hex-digit hash of whatever shapes the results (engine set, ranking settings).

    Parts may be pydantic models, dataclasses, mappings, sequences and scalars. Secret fields
    (`api_keys`, `api_key`, `auth_tokens`, ...) are left out, so rotating a key keeps the cache.
    """
    return _digest([_plain(part, drop_secrets=True) for part in parts])[:16]


def cache_key(tool: str, query: str, args: Mapping[str, Any], fingerprint: str) -> str:
    """The cache key of one tool call: a SHA-256 hex digest, never the query itself.

    The query is normalised with `normalise_query`; arguments whose value is `None` count as
    absent. Any difference in the other arguments or in the fingerprint gives another key.
    """
    payload = {
        "tool": tool,
        "query": normalise_query(query),
        "args": _plain(dict(args), drop_secrets=False),
        "fingerprint": fingerprint,
    }
    return _digest(payload)
