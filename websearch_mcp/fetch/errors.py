"""Errors of the page fetcher. Their texts are meant for the caller: they say what went wrong
without naming resolved addresses, keys or other internals. `kind` sorts them for callers that
report a status rather than the text (`web_search` with `read`)."""

from __future__ import annotations

from websearch_mcp.errors import ToolInputError


class FetchError(ToolInputError):
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
