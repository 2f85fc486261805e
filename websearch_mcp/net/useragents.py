"""Browser User-Agent strings for engines scraped as HTML pages, taken in turn.

Pages made for browsers answer a library's User-Agent with a block sooner; rotating through
current desktop browsers spreads requests over several plausible clients. API engines keep the
service's own User-Agent.
"""

from __future__ import annotations

import itertools

BROWSER_USER_AGENTS: tuple[str, ...] = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
)


class UserAgentRotation:
    """The next browser User-Agent on each call (thread- and coroutine-safe)."""

    def __init__(self, agents: tuple[str, ...] = BROWSER_USER_AGENTS) -> None:
        self._agents = agents
        self._cursor = itertools.count()

    def next(self) -> str:
        return self._agents[next(self._cursor) % len(self._agents)]
