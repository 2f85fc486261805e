"""What `bench.relevance` prints and draws: a table per coverage, the margins, the plot."""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import ttest_rel

from bench.loadgen import percentile

METRICS = ("ndcg@10", "mrr@10", "recall@10")
SERVICE = "websearch-mcp (web_search over MCP)"
RRF = "plain RRF k=60 (ranx)"
COMBSUM = "CombSUM, min-max (ranx)"


@dataclass
class Measured:
    """One coverage's figures: the table's rows (label -> mean per metric), per-query scores
    of the service and of ranx's fusions (for the paired tests), ablations and timings."""

    coverage: float
    seeds: dict[str, int]  # engine -> the seed of its model's share (empty at coverage 1)
    rows: list[tuple[str, dict[str, float]]]
    engines: dict[str, dict[str, float]]
    service: dict[str, list[float]]
    references: dict[str, dict[str, list[float]]]
    ablations: dict[str, dict[str, float]]
    fusion_seconds: list[float]
    latencies: list[float]
    same: int
    queries: int

    def mean(self, label: str) -> dict[str, float]:
        return dict(self.rows)[label]

    def best_engine(self) -> tuple[str, dict[str, float]]:
        return max(self.engines.items(), key=lambda item: item[1]["ndcg@10"])


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
    """The table of one coverage, its timings, paired tests and ablations."""
    seeds = ", ".join(f"{e} {s}" for e, s in m.seeds.items()) or "none (every engine sees all)"
    print(f"\n## coverage {m.coverage:g} (seeds: {seeds})\n")
    print("| run | nDCG@10 | MRR@10 | Recall@10 |\n|---|---:|---:|---:|")
    print("\n".join(_row(label, values) for label, values in m.rows))
    seconds = m.fusion_seconds
    print(
        f"\nfusion, rank() in-process on the same lists: median "
        f"{statistics.median(seconds) * 1000:.2f} ms, p95 {percentile(seconds, 0.95) * 1000:.2f}"
        f" ms per query"
    )
    print(
        f"end to end, web_search over MCP (one client, fake engines on 127.0.0.1): median "
        f"{statistics.median(m.latencies) * 1000:.1f} ms, "
        f"p95 {percentile(m.latencies, 0.95) * 1000:.1f} ms per query"
    )
    print(f"in-process rank() gives the service's list for {m.same}/{m.queries} queries")
    for name in (RRF, COMBSUM):
        for metric in ("ndcg@10", "mrr@10"):
            reference = m.references[name][metric]
            if m.service[metric] == reference:
                print(f"service vs {name}, {metric}: the same for every query")
                continue
            test = ttest_rel(m.service[metric], reference)
            print(f"service vs {name}, {metric}: paired t-test p = {test.pvalue:.3f}")
    print(_margins(m))
    if m.ablations:
        base = m.mean(SERVICE)
        print(
            "\n| variant (in-process rank()) | nDCG@10 | delta | MRR@10 | delta | Recall@10 "
            "| delta |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, values in m.ablations.items():
            cells = " | ".join(f"{values[x]:.4f} | {values[x] - base[x]:+.4f}" for x in METRICS)
            print(f"| {label} | {cells} |")


def print_sweep(measured: Sequence[Measured]) -> None:
    """nDCG@10 of every run at every coverage, and the service's margins."""
    print("\n## nDCG@10 by coverage\n")
    print("| run | " + " | ".join(f"{m.coverage:g}" for m in measured) + " |")
    print("|---|" + "---:|" * len(measured))
    for label, _ in measured[0].rows:
        print(
            f"| {label} | " + " | ".join(f"{m.mean(label)['ndcg@10']:.4f}" for m in measured) + " |"
        )
    print()
    for m in measured:
        print(_margins(m))
    if measured[0].ablations:
        print("\n## what each variant changes, nDCG@10 delta by coverage\n")
        print("| variant | " + " | ".join(f"{m.coverage:g}" for m in measured) + " |")
        print("|---|" + "---:|" * len(measured))
        for label in measured[0].ablations:
            deltas = [m.ablations[label]["ndcg@10"] - m.mean(SERVICE)["ndcg@10"] for m in measured]
            print(f"| {label} | " + " | ".join(f"{d:+.4f}" for d in deltas) + " |")


def plot(measured: Sequence[Measured], path: Path) -> None:
    """nDCG@10 against coverage: each engine, plain RRF, CombSUM and the service."""
    import matplotlib

    matplotlib.use("Agg")  # no display: write the file only
    import matplotlib.pyplot as plt

    ordered = sorted(measured, key=lambda m: m.coverage)
    x = [m.coverage for m in ordered]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    shades = ("0.35", "0.5", "0.65", "0.8")  # the single engines in greys, fusions in colour
    for engine, shade in zip(ordered[0].engines, shades, strict=False):
        ax.plot(x, [m.engines[engine]["ndcg@10"] for m in ordered], "--", marker=".",
                color=shade, linewidth=1, label=f"{engine} alone")  # fmt: skip
    for label, name, style in ((RRF, "plain RRF k=60", "tab:orange"),
                               (COMBSUM, "CombSUM min-max (sees scores)", "tab:green"),
                               (SERVICE, "websearch-mcp", "tab:blue")):  # fmt: skip
        ax.plot(x, [m.mean(label)["ndcg@10"] for m in ordered], marker="o", linewidth=2,
                color=style, label=name)  # fmt: skip
    ax.set_xlabel("coverage: share of the documents each engine indexes")
    ax.set_ylabel("nDCG@10")
    ax.set_xticks(x)
    ax.set_title("Cranfield 1400: fusion when engines see different parts of the collection")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
