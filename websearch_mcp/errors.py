"""Typed errors. Engine errors carry the status they are reported under; none carries a key."""

from __future__ import annotations


class EngineError(Exception):
    """An engine did not give usable results. `status` is what the per-engine report says."""

    status = "error"

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class EngineBlocked(EngineError):
    """A CAPTCHA, an "unusual traffic" page, an empty 202 page or an access-denied answer."""

    status = "blocked"


class EngineRateLimited(EngineError):
    """HTTP 429 or a quota message; `retry_after` in seconds when the engine said."""

    status = "rate_limited"


class EngineAuthError(EngineError):
    """The key was refused (401/403 from a keyed API). The key itself is never in the text."""

    status = "error"


class EngineParseError(EngineError):
    """The body was not in the format this engine answers in."""

    status = "error"


class ToolInputError(ValueError):
    """A tool argument is invalid; the message says what is wrong and what is allowed."""


class ConfigError(ValueError):
    """The configuration is invalid; the message names the key, the file and the allowed values."""
