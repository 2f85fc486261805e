"""Fetching one page for `fetch_page`: address policy, guarded HTTP, HTML and PDF extraction."""

from websearch_mcp.errors import (
    FetchBlocked,
    FetchError,
    FetchRefused,
    FetchTimeout,
    FetchUnsupported,
)
from websearch_mcp.fetch.document import Document
from websearch_mcp.fetch.extract import ExtractLimits, extract
from websearch_mcp.fetch.page import (
    DEFAULT_MAX_CHARS,
    MAX_CHARS_LIMIT,
    fetch_document,
    fetch_page,
    validate_fetch_args,
)

__all__ = [
    "DEFAULT_MAX_CHARS",
    "MAX_CHARS_LIMIT",
    "Document",
    "ExtractLimits",
    "FetchBlocked",
    "FetchError",
    "FetchRefused",
    "FetchTimeout",
    "FetchUnsupported",
    "extract",
    "fetch_document",
    "fetch_page",
    "validate_fetch_args",
]
