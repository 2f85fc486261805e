"""The settings checked against the registered engines: which names exist, where each may be
named, and where each engine's keys come from in the environment.

The configuration package knows no engine; `search.configuration` asks here once the file is
valid. Each problem is one line of the configuration error's message: the key, and what is wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from websearch_mcp.engines.registry import ENGINES

if TYPE_CHECKING:
    from websearch_mcp.config import Settings

POOL = "search.pool.providers"
SEQUENTIAL = "search.sequential.order"


def key_variables() -> dict[str, str]:
    """The environment variable holding each engine's comma-separated keys."""
    return {name: engine.key_env or f"{name.upper()}_API_KEYS" for name, engine in ENGINES.items()}


Problem = tuple[str, str]  # the dotted key, and what is wrong with it


def engine_problems(settings: Settings) -> list[Problem]:
    """What is wrong with the engines `settings` names, in the order the fixes are needed:
    unknown names in the strategies' lists, then unknown engine blocks, then engines the
    strategies name but could never ask there, then keys of the wrong form. Empty when nothing
    is."""
    return (
        _unknown_in_lists(settings)
        or _unknown_blocks(settings)
        or _strategy_problems(settings)
        or _key_problems(settings)
    )


def _allowed() -> str:
    return ", ".join(sorted(ENGINES))


def _lists(settings: Settings) -> tuple[tuple[str, list[str], str], ...]:
    """Each strategy's list of engine names: its key, the names, and what belongs there."""
    return (
        (POOL, settings.search.pool.providers, "keyed web providers"),
        (SEQUENTIAL, settings.search.sequential.order, "web engines"),
    )


def _unknown_in_lists(settings: Settings) -> list[Problem]:
    # Worded as the validation errors of the other keys are.
    problems = []
    for key, names, _ in _lists(settings):
        unknown = [name for name in names if name not in ENGINES]
        if unknown:
            problems.append(
                (
                    key,
                    f"Value error, unknown engine {unknown[0]!r} (allowed: {_allowed()})"
                    f" (got {names!r})",
                )
            )
    return problems


def _unknown_blocks(settings: Settings) -> list[Problem]:
    unknown = sorted(set(settings.engines) - set(ENGINES))
    return [(f"engines.{unknown[0]}", f"unknown engine (allowed: {_allowed()})")] if unknown else []


def _strategy_problems(settings: Settings) -> list[Problem]:
    """Engines named by the strategies' settings that could never be asked there: of the
    other kind (academic; keyless for the pool's keyed providers), disabled, or keyless."""
    problems = []
    for key, names, allowed in _lists(settings):
        pool = key == POOL
        wrong = [
            n for n in names if ENGINES[n].kind != "web" or (pool and not ENGINES[n].needs_key)
        ]
        if wrong:
            problems.append((key, f"{', '.join(wrong)}: only {allowed} belong here"))
        off = []
        for name in names:
            conf = settings.engine(name)
            if not (ENGINES[name].default_enabled if conf.enabled is None else conf.enabled):
                off.append(f"{name} is disabled (engines.{name}.enabled)")
            elif pool and name not in wrong and not conf.api_keys:
                off.append(f"{name} has no API key (engines.{name}.api_keys)")
        if off:
            problems.append((key, "; ".join(off)))
    return problems


def _key_problems(settings: Settings) -> list[Problem]:
    """Keys an engine could never use as written: by position in the list, never quoted."""
    problems = []
    for name, conf in sorted(settings.engines.items()):
        for index, entry in enumerate(conf.api_keys):
            problem = ENGINES[name].key_problem(entry)
            if problem:
                problems.append((f"engines.{name}.api_keys.{index}", problem))
    return problems
