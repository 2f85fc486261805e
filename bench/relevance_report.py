"""What `bench.relevance` prints and draws: a table per cell and coverage draw, a summary per
regime with the goals, the plot (both with each cell as the mean of its draws).

Every margin is printed with its paired standard error over the cell's queries (the standard
deviation of the per-query differences over the square root of their number; for an average
over collections, the root of the sum of the collections' squared errors over their number):
with 30 to 225 judged queries a collection, a margin smaller than about twice its error is not
told apart from a different sample of queries.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy.stats import ttest_rel

from bench.loadgen import percentile

METRICS = ("ndcg@10", "mrr@10", "recall@10")
SERVICE = "websearch-mcp (web_search over MCP)"
RRF = "plain RRF k=60 (ranx)"
COMBSUM = "CombSUM, min-max (ranx)"


@dataclass
class Measured:
    """One cell's figures (collection x line-up x coverage): the table's rows (label -> mean
    per metric), per-query scores of the service and of ranx's fusions (for the paired tests),
    and timings."""

    collection: str
    lineup: str
    coverage: float
    seeds: dict[str, int]  # engine -> the seed of its model's share or noise
    rows: list[tuple[str, dict[str, float]]]
    engines: dict[str, dict[str, float]]
    engine_queries: dict[str, list[float]]  # engine -> its nDCG@10 per query
    service: dict[str, list[float]]
    references: dict[str, dict[str, list[float]]]
    fusion_seconds: list[float]
    latencies: list[float]
    same: int
    queries: int
    draws: int = 1  # coverage draws averaged into these figures (`pool_draws`)

    def mean(self, label: str) -> dict[str, float]:
        return dict(self.rows)[label]

    def ndcg(self, label: str) -> float:
        return dict(self.rows)[label]["ndcg@10"]

    def best_engine(self) -> tuple[str, dict[str, float]]:
        return max(self.engines.items(), key=lambda item: item[1]["ndcg@10"])

    def best_rank_only(self) -> tuple[str, float]:
        """The rank-only ranx fusion with the best nDCG@10 in this cell."""
        found = [(label, v["ndcg@10"]) for label, v in self.rows if "ranks only" in label]
        return max(found, key=lambda item: item[1])

    def errors(self) -> list[float]:
        """The paired standard errors of the service's margins over the best engine, plain RRF,
        the best rank-only fusion and CombSUM (nDCG@10), in that order."""
        service = self.service["ndcg@10"]
        others = (
            self.engine_queries[self.best_engine()[0]],
            self.references[RRF]["ndcg@10"],
            self.references[self.best_rank_only()[0]]["ndcg@10"],
            self.references[COMBSUM]["ndcg@10"],
        )
        return [paired_error(service, other) for other in others]


def paired_error(first: Sequence[float], second: Sequence[float]) -> float:
    """The standard error of the mean of the per-query differences first - second."""
    differences = [a - b for a, b in zip(first, second, strict=True)]
    if len(differences) < 2:
        return 0.0
    return statistics.stdev(differences) / math.sqrt(len(differences))


def combined_error(errors: Sequence[float]) -> float:
    """The standard error of a mean of independent margins, each with its own error."""
    return math.sqrt(sum(e * e for e in errors)) / len(errors) if errors else 0.0


def pool_draws(measured: Sequence[Measured]) -> list[Measured]:
    """One `Measured` per cell: a cell measured with several coverage draws becomes their mean,
    taken per query, so its margins' errors stay errors over the cell's queries, and its best
    engine is the engine best on average over the draws."""
    groups: dict[tuple[str, str, float], list[Measured]] = {}
    for m in measured:
        groups.setdefault((m.collection, m.lineup, m.coverage), []).append(m)
    return [draws[0] if len(draws) == 1 else _mean_of(draws) for draws in groups.values()]


def _per_query(values: Sequence[Sequence[float]]) -> list[float]:
    return [statistics.fmean(draws) for draws in zip(*values, strict=True)]


def _per_metric(values: Sequence[Mapping[str, float]]) -> dict[str, float]:
    return {metric: statistics.fmean(v[metric] for v in values) for metric in values[0]}


def _mean_of(draws: Sequence[Measured]) -> Measured:
    first = draws[0]
    references = {
        label: {metric: _per_query([m.references[label][metric] for m in draws]) for metric in by}
        for label, by in first.references.items()
    }
    return Measured(
        collection=first.collection,
        lineup=first.lineup,
        coverage=first.coverage,
        seeds={},
        rows=[(label, _per_metric([m.mean(label) for m in draws])) for label, _ in first.rows],
        engines={e: _per_metric([m.engines[e] for m in draws]) for e in first.engines},
        engine_queries={
            e: _per_query([m.engine_queries[e] for m in draws]) for e in first.engine_queries
        },
        service={k: _per_query([m.service[k] for m in draws]) for k in first.service},
        references=references,
        fusion_seconds=[s for m in draws for s in m.fusion_seconds],
        latencies=[s for m in draws for s in m.latencies],
        same=sum(m.same for m in draws),
        queries=sum(m.queries for m in draws),
        draws=len(draws),
    )


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def _row(label: str, values: Mapping[str, float]) -> str:
    return f"| {label} | " + " | ".join(f"{values[m]:.4f}" for m in METRICS) + " |"


def _margins(m: Measured) -> str:
    service = m.mean(SERVICE)["ndcg@10"]
    best, values = m.best_engine()
    rrf = m.mean(RRF)["ndcg@10"]
    return (
        f"coverage {m.coverage:g}: service nDCG@10 {service:.4f}, "
        f"{service - values['ndcg@10']:+.4f} over the best engine ({best}), "
        f"{service - rrf:+.4f} over plain RRF"
    )


def print_measured(m: Measured) -> None:
    """The table of one cell, its timings and paired tests."""
    seeds = ", ".join(f"{e} {s}" for e, s in m.seeds.items()) or "none (every engine sees all)"
    print(f"\n## {m.collection}, {m.lineup}, coverage {m.coverage:g} (seeds: {seeds})\n")
    print("| run | nDCG@10 | MRR@10 | Recall@10 |\n|---|---:|---:|---:|")
    print("\n".join(_row(label, values) for label, values in m.rows))
    seconds = m.fusion_seconds
    print(
        f"\nfusion, rank() in-process on the same lists: median "
        f"{statistics.median(seconds) * 1000:.2f} ms, p95 {percentile(seconds, 0.95) * 1000:.2f}"
        f" ms per query; web_search over MCP (one client): median "
        f"{statistics.median(m.latencies) * 1000:.1f} ms"
    )
    print(f"in-process rank() gives the service's list for {m.same}/{m.queries} queries")
    for name in (RRF, COMBSUM):
        reference = m.references[name]["ndcg@10"]
        if m.service["ndcg@10"] != reference:
            test = ttest_rel(m.service["ndcg@10"], reference)
            print(f"service vs {name}, nDCG@10: paired t-test p = {test.pvalue:.3f}")
    print(_margins(m))


def _summary_row(label: str, cells: Sequence[Measured]) -> tuple[str, list[float], list[float]]:
    """The row's means (service, best engine, RRF, CombSUM, best rank-only) and the standard
    errors of the service's margins (over the best engine, RRF, best rank-only, CombSUM)."""
    figures = [
        statistics.fmean(m.ndcg(SERVICE) for m in cells),
        statistics.fmean(m.best_engine()[1]["ndcg@10"] for m in cells),
        statistics.fmean(m.ndcg(RRF) for m in cells),
        statistics.fmean(m.ndcg(COMBSUM) for m in cells),
        statistics.fmean(m.best_rank_only()[1] for m in cells),
    ]
    per_cell = [m.errors() for m in cells]
    errors = [combined_error([e[i] for e in per_cell]) for i in range(4)]
    return label, figures, errors


def print_summary(measured: Sequence[Measured]) -> None:
    """Per regime (line-up x coverage): the service against the best engine, plain RRF,
    CombSUM and the best rank-only fusion, per collection and on average; the goals; and
    what the weak engine costs the service."""
    regimes: dict[tuple[str, float], list[Measured]] = {}
    for m in measured:
        regimes.setdefault((m.lineup, m.coverage), []).append(m)
    missed: list[str] = []
    for (lineup, coverage), cells in regimes.items():
        draws = f", the mean of {cells[0].draws} coverage draws" if cells[0].draws > 1 else ""
        print(f"\n## summary: {lineup}, coverage {coverage:g} (nDCG@10{draws})\n")
        print(
            "| collection | service | best engine | plain RRF k=60 | CombSUM | best rank-only "
            "| - best engine (s.e.) | - RRF (s.e.) | - best rank-only (s.e.) | - CombSUM (s.e.) |"
        )
        print("|---|" + "---:|" * 9)
        rows = [_summary_row(m.collection, [m]) for m in cells]
        rows.append(_summary_row("**average**", cells))
        for label, (service, best, rrf, combsum, rank_only), errors in rows:
            margins = (service - best, service - rrf, service - rank_only, service - combsum)
            shown = " | ".join(f"{d:+.4f} ({e:.4f})" for d, e in zip(margins, errors, strict=True))
            print(
                f"| {label} | {service:.4f} | {best:.4f} | {rrf:.4f} | {combsum:.4f} | "
                f"{rank_only:.4f} | {shown} |"
            )
        for m in cells:
            name, value = m.best_rank_only()
            print(f"- {m.collection}: best rank-only {name} {value:.4f}")
        missed += _goals(lineup, coverage, rows)
    missed += _weak_cost(measured)
    print("\ngoals missed:" if missed else "\ngoals: every one measured is met")
    for line in missed:
        print(f"- {line}")


def _goals(
    lineup: str, coverage: float, rows: Sequence[tuple[str, list[float], list[float]]]
) -> list[str]:
    """The goals for one regime's rows (the last is the average); the ones missed, each with
    its margin's standard error."""
    missed = []
    where = f"{lineup}, coverage {coverage:g}"
    for label, (service, _, rrf, _, rank_only), errors in rows[:-1]:
        if service < rrf + 0.005:
            missed.append(
                f"{label}, {where}: {service - rrf:+.4f} (s.e. {errors[1]:.4f}) over plain RRF"
                " (goal +0.005)"
            )
        if service < rank_only - 0.015:
            missed.append(
                f"{label}, {where}: {service - rank_only:+.4f} (s.e. {errors[2]:.4f}) against the"
                " best rank-only fusion (goal -0.015)"
            )
    _, (service, best, _, combsum, _), errors = rows[-1]
    goal = 0.03 if coverage < 1 else -0.01
    if service < best + goal:
        missed.append(
            f"average, {where}: {service - best:+.4f} (s.e. {errors[0]:.4f}) over the best"
            f" engine ({goal:+})"
        )
    if service < combsum:
        missed.append(
            f"average, {where}: {service - combsum:+.4f} (s.e. {errors[3]:.4f}) against CombSUM"
            " (goal 0)"
        )
    return missed


def _weak_cost(measured: Sequence[Measured]) -> list[str]:
    """The service's nDCG@10 with the weak engine added to the mixed line-up, minus without."""
    mixed = {(m.collection, m.coverage): m for m in measured if m.lineup == "mixed"}
    pairs = [(m, mixed[(m.collection, m.coverage)]) for m in measured if m.lineup == "mixed+weak"
             if (m.collection, m.coverage) in mixed]  # fmt: skip
    missed: list[str] = []
    if not pairs:
        return missed
    print("\n## the weak engine added to mixed: the service's nDCG@10 change (goal >= -0.005)\n")
    print("| collection | coverage | mixed | mixed+weak | change (s.e.) |")
    print("|---|---:|---:|---:|---:|")
    for weak, plain in pairs:
        before, after = plain.ndcg(SERVICE), weak.ndcg(SERVICE)
        error = paired_error(weak.service["ndcg@10"], plain.service["ndcg@10"])
        print(
            f"| {weak.collection} | {weak.coverage:g} | {before:.4f} | {after:.4f} | "
            f"{after - before:+.4f} ({error:.4f}) |"
        )
        if after - before < -0.005:
            missed.append(
                f"{weak.collection}, coverage {weak.coverage:g}: the weak engine costs"
                f" {before - after:.4f} (s.e. {error:.4f}; goal at most 0.005)"
            )
    return missed


def plot(measured: Sequence[Measured], path: Path) -> None:
    """nDCG@10 against coverage, a panel per collection and line-up: each engine, plain RRF,
    CombSUM, the best rank-only fusion and the service."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write the file only
    import matplotlib.pyplot as plt

    collections = list(dict.fromkeys(m.collection for m in measured))
    lineups = list(dict.fromkeys(m.lineup for m in measured))
    fig, axes = plt.subplots(
        len(lineups), len(collections), figsize=(3.2 * len(collections), 2.8 * len(lineups)),
        dpi=110, squeeze=False, sharex=True,
    )  # fmt: skip
    for row, lineup in enumerate(lineups):
        for column, name in enumerate(collections):
            cells = sorted(
                (m for m in measured if m.lineup == lineup and m.collection == name),
                key=lambda m: m.coverage,
            )
            if cells:
                _panel(axes[row][column], cells, f"{name}, {lineup}")
    handles, labels = axes[-1][0].get_legend_handles_labels()  # the widest line-up, last
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=7)
    fig.supxlabel("coverage: share of the documents each engine indexes", y=0.06, fontsize=9)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def _panel(ax: Any, cells: Sequence[Measured], title: str) -> None:
    x = [m.coverage for m in cells]
    shades = ("0.3", "0.4", "0.5", "0.6", "0.7", "0.8")  # the single engines in greys
    for engine, shade in zip(cells[0].engines, shades, strict=False):
        ax.plot(x, [m.engines[engine]["ndcg@10"] for m in cells], "--", marker=".",
                color=shade, linewidth=1, label=f"{engine} alone")  # fmt: skip
    lines = (
        ("plain RRF k=60", "tab:orange", [m.ndcg(RRF) for m in cells]),
        ("CombSUM (sees scores)", "tab:green", [m.ndcg(COMBSUM) for m in cells]),
        ("best rank-only fusion", "tab:purple", [m.best_rank_only()[1] for m in cells]),
        ("websearch-mcp", "tab:blue", [m.ndcg(SERVICE) for m in cells]),
    )
    for label, colour, values in lines:
        ax.plot(x, values, marker="o", linewidth=1.8, color=colour, label=label)
    ax.set_title(title, fontsize=8)
    ax.set_xticks(x)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
