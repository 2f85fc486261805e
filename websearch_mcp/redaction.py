"""Secrets (tokens, API keys, passwords) kept out of every text that leaves the process.

`Settings.secrets()` lists every configured secret in every form it is sent in; `redact` and
`Redactor` replace them with `***` in a text, `RedactingFilter` in a logger's records; engines
mask `KEY_LIKE` tokens in an API's own error text (which may quote a key not configured here).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

#: What a secret is replaced with.
MASK = "***"
#: Secrets shorter than this are masked only where they stand alone, not inside a longer word:
#: masked everywhere, a one-letter key would turn "HTTP Request" into "HTTP Reques***".
MIN_ANYWHERE = 8
#: A key-like token: 12 or more word characters or dashes, with at least one digit and one letter.
KEY_LIKE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{12,}")


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret replaced, so error texts can never carry a key."""
    for secret in secrets:
        if len(secret) >= MIN_ANYWHERE:
            text = text.replace(secret, MASK)
        elif secret and secret in text:
            # Where a short secret is sent (a header, `key=ab&`, a URL's `:pw@`) it stands alone;
            # ASCII word characters only, so that a short query inside CJK text still goes.
            text = re.sub(rf"(?<!\w){re.escape(secret)}(?!\w)", MASK, text, flags=re.ASCII)
    return text


#: What an API's error may print in place of a key's middle: `sk-pr***wxyz`, `sk-...wxyz`.
_ELIDED = re.compile(r"([\w-]*)(\*{3,}|\.{3}|…)([\w-]*)")


def without_key_parts(text: str, keys: Iterable[str]) -> str:
    """`text` with what it quotes of a key in part replaced by `***`: its start and end around
    an elision (`sk-...wxyz` of a configured key; three or more `*` inside a word elide a key,
    whichever it is: `sk-pr***wxyz`). Keys shorter than `MIN_ANYWHERE` are left to `redact`:
    their parts are any word's."""
    keys = [key for key in keys if len(key) >= MIN_ANYWHERE]

    def elided(match: re.Match[str]) -> str:
        head, mark, tail = match.groups()
        if mark.startswith("*") and head and tail:
            return MASK
        shown = len(head) + len(tail)
        if shown and any(
            shown < len(key) and key.startswith(head) and key.endswith(tail) for key in keys
        ):
            return MASK
        return match[0]

    return _ELIDED.sub(elided, text)


def without_query(text: str, query: str, mask: str, also: Iterable[str] = ()) -> str:
    """`text` with a user's query replaced by `mask`, in every form an API's error may quote it
    in (as typed, URL-encoded, JSON-escaped with or without `\\u` escapes, and the forms
    `also` names), and where a text cut short (`…`) ends in its start: errors are logged and
    kept, queries are not."""
    query = query.strip()
    if not query:
        return text
    forms = {
        query,
        quote(query, safe=""),
        quote_plus(query),
        json.dumps(query)[1:-1],
        json.dumps(query, ensure_ascii=False)[1:-1],
        *also,
    }
    forms.discard("")
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, mask)
    if text.endswith("…"):
        body = text[:-1]
        for form in forms:
            for size in range(min(len(form), len(body)), 2, -1):
                if body.endswith(form[:size]):
                    return body[:-size] + mask + "…"
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


class Redactor:
    """Replaces each known secret with `***` (longest first, so none is left half-shown)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)
