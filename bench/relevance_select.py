"""What `bench.relevance --ablate` and `--loco` compute: the pipeline's `rank()` in-process on the
lists the service parsed, in every cell (collection x line-up x coverage; a cell measured with
several coverage draws counts as their mean), with one setting changed at a time.

`--ablate` switches one signal off at a time: a signal stays on by default only if it adds at
least `KEEP_GAIN` nDCG@10 averaged over the cells and costs no cell more than `KEEP_COST`.
`--loco` chooses among `CANDIDATES` by leave-one-collection-out: for each collection, the setting
with the best mean nDCG@10 over the other collections' cells, then its figure on the collection
left out; a setting counts only where it wins there.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from testing.judged import ndcg
from testing.judged_harness import MAX_RESULTS, doc_id, engine_families, service_settings
from websearch_mcp.config.loader import deep_merge
from websearch_mcp.models import Hit, Query
from websearch_mcp.ranking.pipeline import rank

KEEP_GAIN = 0.003
KEEP_COST = 0.01
CRANFIELD_LIMIT = 0.005  # how far the Cranfield figures of the lexical line-up may fall
UNUSED_URL = "http://127.0.0.1:9"  # the `search` settings do not depend on the engines' address

#: The ranking signals a weight of 0 switches off: name -> its `search.ranking` key.
RANKING_SIGNALS = {
    "lexical alignment": "alignment_weight",
    "rare terms": "rare_term_weight",
    "phrase contiguity": "phrase_weight",
    "domain quality": "domain_penalty",
    "consensus": "consensus_weight",
    "rank position": "position_weight",
    "coverage credit": "coverage_weight",
    "engine scores": "engine_score_weight",
    "authority": "authority_weight",
    "freshness": "freshness_weight",
    "neighbours": "neighbour_weight",
    "engine agreement": "agreement_weight",
}
#: One signal off at a time: the `search` settings that switch it off.
ABLATIONS: dict[str, dict[str, Any]] = {
    **{name: {"ranking": {key: 0}} for name, key in RANKING_SIGNALS.items()},
    "MMR": {"mmr": {"enabled": False}},
    "threshold": {"relevance_threshold": 0},
}
#: Settings `--loco` chooses among (the defaults are always one of them): the agreement, and the
#: position scale's steepness and weight around the defaults; the previous defaults too.
CANDIDATES: dict[str, dict[str, Any]] = {
    "previous defaults": {
        "ranking": {
            "agreement_weight": 0, "position_k": 5, "position_weight": 20,
            "alignment_weight": 0.05, "rare_term_weight": 0.3,
        },
        "mmr": {"enabled": True},
    },
    **{
        f"agreement {a:g}, position_k {k:g}, weight {w:g}": {
            "ranking": {"agreement_weight": a, "position_k": k, "position_weight": w}
        }
        for a in (0.0, 0.5, 0.9, 1.0)
        for k in (2.0, 3.0, 5.0)
        for w in (10.0, 20.0)
    },
    "coverage credit 0.25": {"ranking": {"coverage_weight": 0.25}},
    "coverage credit 1": {"ranking": {"coverage_weight": 1}},
    "neighbours 0.2": {"ranking": {"neighbour_weight": 0.2}},
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Cell:
    """One collection x line-up x coverage: its queries, judgments and the parsed lists."""

    collection: str
    lineup: str
    coverage: float
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    lists: dict[str, dict[str, list[Hit]]]

    @property
    def label(self) -> str:
        return f"{self.collection} {self.lineup} {self.coverage:g}"


def fused(
    lists: Mapping[str, Mapping[str, list[Hit]]],
    queries: Mapping[str, str],
    search: Any,
    lineup: str,
) -> dict[str, list[str]]:
    """The document ids `rank()` returns in-process for each query, as the service calls it."""
    now = datetime.now(UTC)
    families = engine_families(lineup)
    weights = dict.fromkeys(families, 1.0)
    out = {}
    for qid, text in queries.items():
        results = rank(
            lists[qid], Query(text, MAX_RESULTS), search, weights=weights, families=families,
            now=now,
        )  # fmt: skip
        out[qid] = [d for d in (doc_id(r.url) for r in results) if d is not None]
    return out


def search_settings(overrides: Mapping[str, Any]) -> Any:
    return service_settings(UNUSED_URL, overrides).search


def cell_ndcg(cell: Cell, overrides: Mapping[str, Any]) -> float:
    """Mean nDCG@10 of the service's `rank()` with these `search` overrides in one cell."""
    ranked = fused(cell.lists, cell.queries, search_settings(overrides), cell.lineup)
    return statistics.fmean(ndcg(ranked[q], cell.qrels.get(q, {})) for q in cell.queries)


def distinct(cells: Sequence[Cell]) -> list[Cell]:
    """Each cell once (the first of its coverage draws), in the order of `scores`."""
    first: dict[str, Cell] = {}
    for cell in cells:
        first.setdefault(cell.label, cell)
    return list(first.values())


def scores(cells: Sequence[Cell], overrides: Mapping[str, Any]) -> list[float]:
    """Mean nDCG@10 per cell of `distinct(cells)`: the mean over its coverage draws."""
    draws: dict[str, list[float]] = {}
    for cell in cells:
        draws.setdefault(cell.label, []).append(cell_ndcg(cell, overrides))
    return [statistics.fmean(values) for values in draws.values()]


def _regimes(cells: Sequence[Cell]) -> list[tuple[str, float]]:
    return list(dict.fromkeys((c.lineup, c.coverage) for c in cells))


def _by_regime(cells: Sequence[Cell], deltas: Sequence[float]) -> list[float]:
    out = []
    for regime in _regimes(cells):
        out.append(
            statistics.fmean(d for c, d in zip(cells, deltas, strict=True) if
                             (c.lineup, c.coverage) == regime)
        )  # fmt: skip
    return out


def print_ablations(cells: Sequence[Cell], overrides: Mapping[str, Any]) -> None:
    """Each signal off in every cell: its mean effect, its worst cell, and the verdict."""
    base = scores(cells, overrides)
    shown = distinct(cells)
    regimes = _regimes(shown)
    print(f"\n## one signal off at a time, nDCG@10 change over {len(shown)} cells\n")
    heads = " | ".join(f"{lineup} {coverage:g}" for lineup, coverage in regimes)
    print(f"| signal off | mean | worst cell | {heads} | verdict |")
    print("|---|---:|---|" + "---:|" * len(regimes) + "---|")
    for label, change in ABLATIONS.items():
        changed = deep_merge(overrides, change)
        if search_settings(changed) == search_settings(overrides):
            print(f"| {label} (already off) | | |" + " |" * len(regimes) + " |")
            continue
        deltas = [a - b for a, b in zip(scores(cells, changed), base, strict=True)]
        mean = statistics.fmean(deltas)
        worst = max(range(len(shown)), key=lambda i: deltas[i])  # where the signal helps least
        keep = -mean >= KEEP_GAIN and max(deltas) <= KEEP_COST
        verdict = "keep" if keep else "fails the rule"
        if not any(deltas):
            verdict = "no effect in any cell"
        per_regime = " | ".join(f"{d:+.4f}" for d in _by_regime(shown, deltas))
        print(
            f"| {label} | {mean:+.4f} | {shown[worst].label} {deltas[worst]:+.4f} | "
            f"{per_regime} | {verdict} |"
        )


def print_loco(cells: Sequence[Cell], overrides: Mapping[str, Any]) -> None:
    """Leave-one-collection-out over `CANDIDATES` and the defaults."""
    candidates = {"defaults": {}, **CANDIDATES}
    table = {
        label: scores(cells, deep_merge(overrides, change)) for label, change in candidates.items()
    }
    shown = distinct(cells)
    collections = list(dict.fromkeys(c.collection for c in shown))

    def mean_over(label: str, names: Sequence[str]) -> float:
        values = table[label]
        return statistics.fmean(v for c, v in zip(shown, values, strict=True)
                                if c.collection in names)  # fmt: skip

    print("\n## candidates: mean nDCG@10 change against the defaults, per collection\n")
    print("| setting | " + " | ".join(collections) + " | all |")
    print("|---|" + "---:|" * (len(collections) + 1))
    for label in CANDIDATES:
        deltas = [mean_over(label, [n]) - mean_over("defaults", [n]) for n in collections]
        every = mean_over(label, collections) - mean_over("defaults", collections)
        print(f"| {label} | " + " | ".join(f"{d:+.4f}" for d in deltas) + f" | {every:+.4f} |")
    if len(collections) < 2:
        print("\nleaving one collection out needs two collections or more")
        return
    print("\n## leave one collection out: chosen on the others, measured on the one left out\n")
    print("| left out | chosen | left out: chosen | defaults | change |\n|---|---|---:|---:|---:|")
    limited = _within_cranfield_limit(shown, table)
    for allowed in (list(candidates), limited) if len(limited) < len(candidates) else (limited,):
        if allowed is limited:
            print(f"| among the {len(allowed)} settings within {CRANFIELD_LIMIT} of the previous "
                  "defaults on Cranfield, lexical, coverage 1 | | | | |")  # fmt: skip
        for name in collections:
            if allowed is limited and name == "cranfield" and len(limited) < len(candidates):
                # The limit reads Cranfield's own figures: no choice left it out.
                print(f"| {name} | not left out: the limit reads it | | | |")
                continue
            rest = [n for n in collections if n != name]
            chosen = max(allowed, key=lambda label: mean_over(label, rest))
            held, default = mean_over(chosen, [name]), mean_over("defaults", [name])
            print(f"| {name} | {chosen} | {held:.4f} | {default:.4f} | {held - default:+.4f} |")


def _within_cranfield_limit(cells: Sequence[Cell], table: Mapping[str, list[float]]) -> list[str]:
    """The candidates whose Cranfield figure with the four lexical engines at coverage 1 is at
    most `CRANFIELD_LIMIT` below the previous defaults' (all of them without that cell)."""
    where = [i for i, c in enumerate(cells) if c.label == "cranfield lexical 1"]
    if not where:
        return list(table)
    before = table["previous defaults"][where[0]]
    return [label for label, v in table.items() if v[where[0]] >= before - CRANFIELD_LIMIT]
