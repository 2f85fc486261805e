"""Small pure helpers for engines of either kind: API error bodies and nested HTML blocks."""

from __future__ import annotations

import json
import re
from typing import Any

from selectolax.lexbor import LexborNode

from websearch_mcp.engines.base import clean_text, parse_retry_after
from websearch_mcp.errors import EngineAuthError, EngineError, EngineRateLimited
from websearch_mcp.models import HttpResponse

_QUOTA_RE = re.compile(
    r"quota|credit|rate.?limit|too many requests|exhausted|run out of|limit exceeded"
    r"|insufficient balance|daily limit",
    re.IGNORECASE,
)
_AUTH_RE = re.compile(
    r"api.?key|unauthori[sz]ed|forbidden|authenticat|permission denied", re.IGNORECASE
)
# Key-like tokens (long runs mixing letters and digits) that an API may echo in its message.
_TOKEN_RE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{12,}")


def error_message(response: HttpResponse, *keys: str) -> str | None:
    """The API's own explanation in a JSON error body: the first of `keys` that is set."""
    try:
        data = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    for key in keys:
        value = data.get(key)
        if value:
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return None


def api_error(message: Any, response: HttpResponse) -> EngineError:
    """The typed error for an API's own error text: quota words or 429 mean rate-limited, key
    words or 401/403 mean the key was refused, anything else is a plain engine error. Key-like
    tokens in the text are masked: some APIs quote the key they refused."""
    text = _TOKEN_RE.sub("***", clean_text(str(message), 200)) or f"HTTP {response.status}"
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if response.status == 429 or _QUOTA_RE.search(text):
        return EngineRateLimited(text, retry_after=retry_after)
    if response.status in (401, 403) or _AUTH_RE.search(text):
        return EngineAuthError(text, retry_after=retry_after)
    return EngineError(text, retry_after=retry_after)


def outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """HTML result blocks that nest (`div.result` holding a `div.c-container`): the outer ones,
    each once (a selector group returns a node once per selector it matches)."""
    ids = {node.mem_id for node in nodes}
    kept: dict[int, LexborNode] = {}
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in ids:
            parent = parent.parent
        if parent is None:
            kept.setdefault(node.mem_id, node)
    return list(kept.values())
