"""Relevance benchmark on Cranfield 1400: is the fused list better than any single engine?

    python -m bench.relevance [--ablate] [--queries N] [--half 1|2] [--shared PATH]
                              [--set KEY=VALUE ...]

Four retrieval models (`bench.cranfield`) play Tavily, Brave, SearXNG and DuckDuckGo behind the
fake engine server, each in that engine's wire format with its top 20 (Tavily and SearXNG with
the score each reports, `bench.harness.wire_score`). The real service runs under uvicorn with
only those four engines, and every judged query goes through `web_search` over MCP with
max_results 10 (`bench.harness`). One table from one run: nDCG@10, MRR@10 and Recall@10 of each
engine, of plain RRF (k = 60) and CombSUM (of min-max normalised model scores, and of ranks) of
the same lists computed by `ranx`, and of the service; then the time of the pipeline's `rank()`
on the same lists in-process and the end-to-end latency of `web_search`.

`--ablate` reruns the service with one ranking signal switched off at a time and reports each
signal's effect. `--set` overrides a `search` setting for every run (dotted keys below
`search`, values as YAML: `--set ranking.alignment_weight=0.5 --set rrf_k=10`).
Needs the `bench` extra (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ranx
import yaml
from scipy.stats import ttest_rel

from bench.cranfield import SHARED_ENV, Collection, default_eval_dir, load
from bench.harness import (
    ENGINE_MODELS,
    MAX_RESULTS,
    Answer,
    CranfieldEngines,
    ask_all,
    doc_id,
    fake_engine_server,
    service,
    service_settings,
)
from tests.fake_engines import render
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import Hit, HttpResponse, Query
from websearch_mcp.ranking.pipeline import rank

METRICS = ("ndcg@10", "mrr@10", "recall@10")
MODEL_LABELS = {
    "bm25": "BM25 (title + text)",
    "tfidf": "TF-IDF cosine",
    "ql_dirichlet": "query likelihood, Dirichlet",
    "bm25_title": "BM25 (titles only)",
}
#: One signal off at a time: the `search` settings that switch it off.
ABLATIONS: dict[str, dict[str, Any]] = {
    "lexical alignment": {"ranking": {"alignment_weight": 0}},
    "rare terms": {"ranking": {"rare_term_weight": 0}},
    "phrase contiguity": {"ranking": {"phrase_weight": 0}},
    "domain quality": {"ranking": {"domain_penalty": 0}},
    "consensus": {"ranking": {"consensus_weight": 0}},
    "rank position": {"ranking": {"position_weight": 0}},
    "engine scores": {"ranking": {"engine_score_weight": 0}},
    "authority": {"ranking": {"authority_weight": 0}},
    "freshness": {"ranking": {"freshness_weight": 0}},
    "MMR": {"mmr": {"enabled": False}},
    "threshold": {"relevance_threshold": 0},
}
#: Not ablations of one signal but reference points for the same table.
WHAT_IF: dict[str, dict[str, Any]] = {
    "every signal off (normalised RRF only)": {
        "ranking": {
            "alignment_weight": 0,
            "rare_term_weight": 0,
            "phrase_weight": 0,
            "domain_penalty": 0,
            "consensus_weight": 0,
            "position_weight": 0,
            "engine_score_weight": 0,
            "authority_weight": 0,
            "freshness_weight": 0,
        },
        "mmr": {"enabled": False},
        "relevance_threshold": 0,
    },
    "first defaults (alignment 1.0, phrase 0.2, MMR lambda 0.85, no rank position)": {
        "ranking": {"alignment_weight": 1.0, "phrase_weight": 0.2, "position_weight": 0},
        "mmr": {"lambda": 0.85},
    },
    "rank position at weight 4": {"ranking": {"position_weight": 4}},
    "engine scores on (weight 0.5)": {"ranking": {"engine_score_weight": 0.5}},
    "engine scores on (weight 0.5), rank position off": {
        "ranking": {"engine_score_weight": 0.5, "position_weight": 0}
    },
    "rrf_k = 10 instead of 60": {"rrf_k": 10},
}
ABLATION_CONCURRENCY = 2  # clients side by side in ablation runs (latency is not measured)
TIMING_REPEATS = 3


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """`["ranking.alignment_weight=0.5", "rrf_k=10"]` -> nested `search` overrides."""
    tree: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--set expects KEY=VALUE, got {item!r}")
        *path, leaf = key.strip().split(".")
        node = tree
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(raw)
    return tree


# --- runs and metrics ---------------------------------------------------------------------------


def ranked_run(ranked: Mapping[str, Sequence[str]], name: str) -> ranx.Run:
    """A ranx run from ordered document ids (scores descending by position)."""
    return ranx.Run.from_dict(
        {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()},
        name=name,
    )


def engine_runs(engines: CranfieldEngines, queries: Mapping[str, str]) -> list[ranx.Run]:
    """Each engine's top 20 with its model's scores (ties nudged so ranx keeps list order)."""
    runs = []
    for engine in ENGINE_MODELS:
        scored = {
            q: {d: s - i * 1e-9 for i, (d, s) in enumerate(engines.ranked(engine, text))}
            for q, text in queries.items()
        }
        runs.append(ranx.Run.from_dict(scored, name=engine))
    return runs


def evaluate(qrels: ranx.Qrels, run: ranx.Run) -> dict[str, list[float]]:
    """Per-query scores of every metric."""
    scores = ranx.evaluate(qrels, run, list(METRICS), return_mean=False, make_comparable=True)
    return {m: [float(x) for x in scores[m]] for m in METRICS}


def means(per_query: Mapping[str, Sequence[float]]) -> dict[str, float]:
    return {m: statistics.fmean(v) for m, v in per_query.items()}


# --- the pipeline in-process, for its timing ------------------------------------------------------


def parsed_lists(
    engines: CranfieldEngines, queries: Mapping[str, str]
) -> dict[str, dict[str, list[Hit]]]:
    """What the service gets from each engine: the rendered answer through the engine's parser."""
    out: dict[str, dict[str, list[Hit]]] = {}
    for qid, text in queries.items():
        query = Query(text, MAX_RESULTS)
        lists = {}
        for name in ENGINE_MODELS:
            body, content_type = render(name, engines.results(name, text), text)
            response = HttpResponse(200, {"content-type": content_type}, body)
            lists[name] = ENGINES[name]().parse(response, query)
        out[qid] = lists
    return out


def time_fusion(
    lists: Mapping[str, Mapping[str, list[Hit]]],
    queries: Mapping[str, str],
    search: Any,
) -> tuple[list[float], dict[str, list[str]]]:
    """Per query, the median of `TIMING_REPEATS` calls of `rank()` in seconds (after one
    warm-up pass), and the document ids it returned."""
    now = datetime.now(UTC)
    weights = dict.fromkeys(ENGINE_MODELS, 1.0)
    ranked: dict[str, list[str]] = {}
    for qid, text in queries.items():  # warm-up: first-use caches, as in a running service
        rank(lists[qid], Query(text, MAX_RESULTS), search, weights=weights, now=now)
    seconds = []
    for qid, text in queries.items():
        query = Query(text, MAX_RESULTS)
        samples = []
        for _ in range(TIMING_REPEATS):
            started = time.perf_counter()
            results = rank(lists[qid], query, search, weights=weights, now=now)
            samples.append(time.perf_counter() - started)
        seconds.append(statistics.median(samples))
        ranked[qid] = [d for d in (doc_id(r.url) for r in results) if d is not None]
    return seconds, ranked


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (`share` in (0, 1])."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


# --- the service --------------------------------------------------------------------------------


def run_service(
    engines_url: str,
    queries: Mapping[str, str],
    search: Mapping[str, Any],
    concurrency: int = 1,
) -> dict[str, Answer]:
    """Start the service with these `search` settings and ask it every query over MCP."""
    with service(engines_url, search) as mcp_url:
        return asyncio.run(ask_all(mcp_url, queries, concurrency=concurrency))


# --- output -------------------------------------------------------------------------------------


def _row(label: str, values: Mapping[str, float]) -> str:
    return f"| {label} | " + " | ".join(f"{values[m]:.4f}" for m in METRICS) + " |"


def _machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.relevance", description=__doc__)
    parser.add_argument("--ablate", action="store_true", help="one ranking signal off at a time")
    parser.add_argument("--queries", type=int, default=0, help="only the first N queries")
    parser.add_argument(
        "--half",
        type=int,
        choices=(1, 2),
        default=0,
        help="only the first or the second half of the queries (a default must help in both)",
    )
    parser.add_argument(
        "--shared", type=Path, default=None, help=f"the shared/ folder (default: ${SHARED_ENV})"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a search setting for every run (ranking.alignment_weight=0.5)",
    )
    args = parser.parse_args(argv)
    # Warnings only: configured first, so the MCP server's INFO-level default does not apply.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    eval_dir = args.shared / "eval" if args.shared else default_eval_dir()
    if not (eval_dir / "cranfield").is_dir():
        print(f"no Cranfield collection in {eval_dir} (use --shared or ${SHARED_ENV})")
        return 2
    overrides = parse_overrides(args.set)

    collection: Collection = load(eval_dir)
    chosen = list(collection.queries.items())[: args.queries or None]
    if args.half:
        middle = len(chosen) // 2
        chosen = chosen[:middle] if args.half == 1 else chosen[middle:]
    queries = dict(chosen)
    qrels = ranx.Qrels.from_dict({q: collection.qrels[q] for q in queries})
    engines = CranfieldEngines(collection)
    started = time.perf_counter()

    runs = engine_runs(engines, queries)
    rrf = ranx.fuse(runs, norm=None, method="rrf", params={"k": 60})
    combsum = ranx.fuse(runs, norm="min-max", method="sum")
    combsum_ranks = ranx.fuse(runs, norm="rank", method="sum")
    with fake_engine_server(engines) as engines_url:
        search = service_settings(engines_url, overrides).search
        lists = parsed_lists(engines, queries)
        fusion_seconds, in_process = time_fusion(lists, queries, search)
        answers = run_service(engines_url, queries, overrides)
        service_scores = evaluate(qrels, ranked_run({q: a.docs for q, a in answers.items()}, "s"))
        ablations: dict[str, dict[str, float]] = {}
        if args.ablate:
            for label, change in {**ABLATIONS, **WHAT_IF}.items():
                changed = _merge(overrides, change)
                if service_settings(engines_url, changed).search == search:
                    label += " (already off)"
                answered = run_service(engines_url, queries, changed, ABLATION_CONCURRENCY)
                run = ranked_run({q: a.docs for q, a in answered.items()}, label)
                ablations[label] = means(evaluate(qrels, run))

    rrf_scores = evaluate(qrels, rrf)
    combsum_scores = evaluate(qrels, combsum)
    rows = [
        (f"{engine}: {MODEL_LABELS[ENGINE_MODELS[engine]]}", means(evaluate(qrels, run)))
        for engine, run in zip(ENGINE_MODELS, runs, strict=True)
    ]
    rows += [
        ("plain RRF k=60 (ranx)", means(rrf_scores)),
        ("CombSUM, min-max (ranx)", means(combsum_scores)),
        ("CombSUM of ranks, not scores (ranx)", means(evaluate(qrels, combsum_ranks))),
        ("websearch-mcp (web_search over MCP)", means(service_scores)),
    ]
    latencies = [a.seconds for a in answers.values()]
    same = sum(1 for q in queries if in_process[q] == answers[q].docs)

    print(f"Cranfield 1400: {len(queries)} queries, engines' top 20, max_results {MAX_RESULTS}")
    print(f"machine: {_machine()}\n")
    print("| run | nDCG@10 | MRR@10 | Recall@10 |\n|---|---:|---:|---:|")
    print("\n".join(_row(label, values) for label, values in rows))
    print(
        f"\nfusion, rank() in-process on the same lists: median "
        f"{statistics.median(fusion_seconds) * 1000:.2f} ms, "
        f"p95 {percentile(fusion_seconds, 0.95) * 1000:.2f} ms per query"
    )
    print(
        f"end to end, web_search over MCP (one client, fake engines on 127.0.0.1): median "
        f"{statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {percentile(latencies, 0.95) * 1000:.1f} ms per query"
    )
    print(f"in-process rank() gives the service's list for {same}/{len(queries)} queries")
    for name, reference in (("plain RRF", rrf_scores), ("CombSUM", combsum_scores)):
        for metric in ("ndcg@10", "mrr@10"):
            if service_scores[metric] == reference[metric]:
                print(f"service vs {name}, {metric}: the same for every query")
                continue
            test = ttest_rel(service_scores[metric], reference[metric])
            print(f"service vs {name}, {metric}: paired t-test p = {test.pvalue:.3f}")
    if ablations:
        base = means(service_scores)
        print("\n| variant | nDCG@10 | delta | MRR@10 | delta | Recall@10 | delta |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, values in ablations.items():
            cells = " | ".join(f"{values[m]:.4f} | {values[m] - base[m]:+.4f}" for m in METRICS)
            print(f"| {label} | {cells} |")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
