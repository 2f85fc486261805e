"""One configured engine: the pure engine object, its settings and its resilience state.

Built once per process from the configuration; the orchestrator keeps one per known engine and
the strategies and the engine call read them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from websearch_mcp.config import EngineSettings, Settings
from websearch_mcp.engines.base import Engine
from websearch_mcp.net.breaker import BreakerPolicy, CircuitBreaker
from websearch_mcp.net.cooldown import Clock, CooldownStore
from websearch_mcp.net.engine_http import EngineClient
from websearch_mcp.net.http import choose_proxy
from websearch_mcp.net.keypool import KeyPool
from websearch_mcp.net.ratelimit import TokenBucket

#: The pooled client for (proxy or None, engine name).
ClientFor = Callable[[str | None, str], EngineClient]


@dataclass(slots=True)
class EngineRun:
    """One configured engine: the pure engine object, its settings and its resilience state."""

    engine: Engine
    settings: EngineSettings
    base_url: str
    timeout: float
    enabled: bool
    proxy: str | None = None
    client: EngineClient | None = None
    breaker: CircuitBreaker | None = None
    bucket: TokenBucket | None = None
    pool: KeyPool | None = None

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def keys(self) -> list[str]:
        return self.settings.api_keys

    def __repr__(self) -> str:
        return f"EngineRun({self.name})"


def configure(
    engine_cls: type[Engine],
    settings: Settings,
    environ: Mapping[str, str],
    store: CooldownStore,
    clock: Clock,
    client_for: ClientFor,
) -> EngineRun:
    """The run of `engine_cls` as `settings` configure it; cooldowns (keys, breaker) in `store`.

    Only an enabled engine gets its client now; `environ` is where `HTTP(S)_PROXY` are read.
    """
    name = engine_cls.name
    conf = settings.engine(name)
    base_url = (conf.base_url or engine_cls.base_url).rstrip("/")
    proxy = choose_proxy(base_url, conf.proxy, settings.proxy.url, settings.proxy.no_proxy, environ)
    rate = engine_cls.rate_limit if conf.rate_limit is None else conf.rate_limit
    enabled = engine_cls.default_enabled if conf.enabled is None else conf.enabled
    return EngineRun(
        engine=engine_cls(),
        settings=conf,
        base_url=base_url,
        timeout=conf.timeout_seconds or engine_cls.default_timeout,
        enabled=enabled,
        proxy=proxy,
        client=client_for(proxy, name) if enabled else None,
        breaker=_breaker(name, settings, store, clock),
        bucket=TokenBucket(rate) if rate else None,
        pool=_key_pool(name, conf, settings, store, clock),
    )


def _breaker(
    name: str, settings: Settings, store: CooldownStore, clock: Clock
) -> CircuitBreaker | None:
    conf = settings.search.breaker
    if not conf.enabled:
        return None
    policy = BreakerPolicy(
        conf.captcha_seconds, conf.denied_seconds, conf.error_step_seconds, conf.error_max_seconds
    )
    return CircuitBreaker(name, store, policy, clock=clock)


def _key_pool(
    name: str, conf: EngineSettings, settings: Settings, store: CooldownStore, clock: Clock
) -> KeyPool | None:
    if not conf.api_keys:
        return None
    keys = settings.search.keys
    return KeyPool(
        name,
        conf.api_keys,
        store,
        clock=clock,
        cooldown_seconds=keys.cooldown_seconds,
        refused_seconds=keys.refused_cooldown_seconds,
    )
