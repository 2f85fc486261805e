"""Every error the package raises on purpose, in one hierarchy under `WebsearchError`.

Their texts are meant for the caller: none carries a key, a token or a resolved address.
Engine errors carry the status they are reported under; fetch errors the `kind` that a page's
status is reported under (`web_search` with `read`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from websearch_mcp.redaction import redact

if TYPE_CHECKING:
    from websearch_mcp.models import EngineReport


class WebsearchError(Exception):
    """The root of the package's errors."""


class ConfigError(WebsearchError):
    """The configuration is invalid; the message names the key, the file and the allowed values."""


class ToolInputError(WebsearchError):
    """A tool argument is invalid; the message says what is wrong and what is allowed."""


# --- engines ----------------------------------------------------------------------------------


class EngineError(WebsearchError):
    """An engine did not give usable results. `status` is what the per-engine report says."""

    status = "error"

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class EngineBlocked(EngineError):
    """A CAPTCHA, an "unusual traffic" page, an empty 202 page or an access-denied answer."""

    status = "blocked"


class EngineCaptcha(EngineBlocked):
    """A challenge page (a CAPTCHA, an "unusual traffic" check), whatever its HTTP status: never
    retried, and the engine rests for `search.breaker.captcha_seconds`."""


class EngineRateLimited(EngineError):
    """HTTP 429 or a quota message; `retry_after` in seconds when the engine said."""

    status = "rate_limited"


class EngineAuthError(EngineError):
    """The key was refused (401/403 from a keyed API). The key itself is never in the text."""

    status = "error"


class EngineParseError(EngineError):
    """The body was not in the format this engine answers in."""

    status = "error"


class KeyRefused(EngineError):
    """A provider refused one key. Carries the key for the key pool; its text and repr never do.

    The text names the key by position ("key 2 of 3") and holds the cause's text, from which the
    key has been removed (an API may quote the key it refuses).
    """

    def __init__(self, provider: str, index: int, total: int, key: str, cause: EngineError) -> None:
        text = redact(str(cause), (key,))
        super().__init__(f"key {index + 1} of {total}: {text}", retry_after=cause.retry_after)
        self.status = cause.status
        self.provider = provider
        self.index = index
        self.refused = isinstance(cause, EngineAuthError)
        self._key = key

    @property
    def key(self) -> str:
        return self._key

    def __repr__(self) -> str:
        return f"KeyRefused({self.provider}, key {self.index + 1})"

    def __reduce__(self) -> tuple[type[EngineError], tuple[str]]:
        # Pickled (multiprocessing, some cache layers) as a plain error: the key stays behind.
        return EngineError, (str(self),)


class SearchFailed(WebsearchError):
    """No engine gave an answer; the message lists every engine's status."""

    def __init__(self, reports: list[EngineReport]) -> None:
        self.reports = reports
        detail = "; ".join(
            f"{r.name}: {r.status}" + (f" ({r.error})" if r.error else "") for r in reports
        )
        super().__init__(f"no engine answered: {detail}" if reports else "no engine is enabled")


# --- pages --------------------------------------------------------------------------------------


class FetchError(WebsearchError):
    """The page could not be fetched or read.

    `reader_may_help` tells whether fetching the same URL through the reader API could succeed
    (network failures, timeouts, HTTP errors) or not (a refused URL, an unsupported format).
    """

    reader_may_help = True
    kind = "error"

    def __init__(self, message: str, *, reader_may_help: bool | None = None) -> None:
        super().__init__(message)
        if reader_may_help is not None:
            self.reader_may_help = reader_may_help


class FetchRefused(FetchError):
    """The URL is not fetched by policy: scheme, port, credentials, redirects or address."""

    reader_may_help = False
    kind = "refused"


class FetchTimeout(FetchError):
    """The server did not answer, or stopped sending, in time."""

    kind = "timeout"


class FetchBlocked(FetchError):
    """The server turned the request away (HTTP 401, 403, 429, 451 ...)."""

    kind = "blocked"


class FetchUnsupported(FetchError):
    """The page is in a format the fetcher does not read."""

    reader_may_help = False
    kind = "unsupported"


# --- the summary model and the stores ------------------------------------------------------------


class SummaryError(WebsearchError):
    """Why one attempt gave no summary; the text is safe to show (it never holds a key)."""


class SummaryRefused(SummaryError):
    """The model's server refused the key or its rate (401, 429): another attempt at once
    would be refused the same way."""


class NameLookupError(WebsearchError, OSError):
    """A store's server name could not be looked up: not found, or no answer in time. An
    `OSError`, as a refused connection is, so that a store handles both alike."""


class RedisDown(WebsearchError, OSError):
    """A call refused without asking: a call on the same link failed for `cause` moments ago
    (at `since` by the link's clock; None for a link closed)."""

    def __init__(self, cause: str, since: float | None = None) -> None:
        super().__init__(f"not asked again yet after the last call's {cause}")
        self.cause = cause
        self.since = since
