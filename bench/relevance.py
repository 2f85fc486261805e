"""Relevance benchmark on Cranfield 1400: is the fused list better than any single engine?

    python -m bench.relevance [--coverage F | --sweep] [--seed S] [--ablate] [--queries N]
                              [--half 1|2] [--plot PNG] [--shared PATH] [--set KEY=VALUE ...]

Four retrieval models (`testing.cranfield`) play Tavily, Brave, SearXNG and DuckDuckGo behind the
fake engine server, each in that engine's wire format with its top 20 (Tavily and SearXNG with
the score each reports, `testing.cranfield_harness.wire_score`). The real service runs under
uvicorn with only those four engines, and every judged query goes through `web_search` over MCP
with max_results 10 (`testing.cranfield_harness`). One table from one run: nDCG@10, MRR@10 and
Recall@10 of each engine, of plain RRF (k = 60) and CombSUM (of min-max normalised model scores,
and of ranks) of the same lists computed by `ranx`, and of the service; then the time of the
pipeline's `rank()` on the same lists in-process and the end-to-end latency of `web_search`.

`--coverage F` gives each model its own random share F of the documents to index (one seed
per model, `--seed S` gives S, S + 1, ...; printed), as engines crawling different parts of the
web; `--sweep` runs coverage 1.0, 0.8 and 0.6 in one go, with the service's margins over the
best engine and over plain RRF for each, and `--plot` draws nDCG@10 against coverage.
`--ablate` switches one ranking signal off at a time and reports each signal's effect: computed
with the pipeline's `rank()` in-process on the lists the service parsed (the run checks that
in-process `rank()` returns the service's own list with the defaults). `--set` overrides a
`search` setting for every run (dotted keys below `search`, values as YAML:
`--set ranking.alignment_weight=0.5 --set rrf_k=10`).
Needs the `bench` extra (`pip install -e ".[bench]"`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ranx
import yaml

from bench.relevance_report import METRICS, Measured, machine, plot, print_measured, print_sweep
from testing.cranfield import Collection, coverage_seeds, default_eval_dir, load
from testing.cranfield_harness import (
    ENGINE_MODELS,
    MAX_RESULTS,
    Answer,
    CranfieldEngines,
    ask_all,
    doc_id,
    engine_families,
    fake_engine_server,
    service,
    service_settings,
)
from testing.shared import SHARED_ENV
from testing.wire_formats import render
from websearch_mcp.config.loader import deep_merge
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import Hit, HttpResponse, Query
from websearch_mcp.ranking.pipeline import rank

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
    "coverage credit": {"ranking": {"coverage_weight": 0}},
    "engine scores": {"ranking": {"engine_score_weight": 0}},
    "authority": {"ranking": {"authority_weight": 0}},
    "freshness": {"ranking": {"freshness_weight": 0}},
    "neighbours": {"ranking": {"neighbour_weight": 0}},
    "MMR": {"mmr": {"enabled": False}},
    "threshold": {"relevance_threshold": 0},
}
_EVERY_SIGNAL_OFF: dict[str, Any] = {
    "ranking": dict.fromkeys(
        (
            "alignment_weight", "rare_term_weight", "phrase_weight", "domain_penalty",
            "consensus_weight", "position_weight", "coverage_weight", "engine_score_weight",
            "authority_weight", "freshness_weight", "neighbour_weight",
        ),
        0,
    ),
    "mmr": {"enabled": False},
    "relevance_threshold": 0,
}  # fmt: skip
#: Not ablations of one signal but reference points for the same table.
WHAT_IF: dict[str, dict[str, Any]] = {
    "every signal off (normalised RRF only)": _EVERY_SIGNAL_OFF,
    "rank position and coverage credit only": deep_merge(
        _EVERY_SIGNAL_OFF, {"ranking": {"position_weight": 20, "coverage_weight": 0.5}}
    ),
    "earlier weights (gentle position, k = 20, at weight 1; no coverage credit; consensus 0.1)": {
        "ranking": {
            "position_weight": 1,
            "position_k": 20,
            "coverage_weight": 0,
            "consensus_weight": 0.1,
        }
    },
    "position_k = 1 (steeper)": {"ranking": {"position_k": 1}},
    "position_k = 20 (flatter)": {"ranking": {"position_k": 20}},
    "rank position at weight 5": {"ranking": {"position_weight": 5}},
    "coverage credit at weight 1": {"ranking": {"coverage_weight": 1}},
    "consensus at 0.1 (counting votes)": {"ranking": {"consensus_weight": 0.1}},
    "engine scores on (weight 0.5)": {"ranking": {"engine_score_weight": 0.5}},
    "rrf_k = 10 instead of 60": {"rrf_k": 10},
    "neighbours at weight 0.2": {"ranking": {"neighbour_weight": 0.2}},
}
SWEEP = (1.0, 0.8, 0.6)
WEIGHTS = dict.fromkeys(ENGINE_MODELS, 1.0)
FAMILIES = engine_families()
TIMING_REPEATS = 3


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
            lists[name] = ENGINES[name]().hits(response, query)
        out[qid] = lists
    return out


def fused(
    lists: Mapping[str, Mapping[str, list[Hit]]], queries: Mapping[str, str], search: Any
) -> dict[str, list[str]]:
    """The document ids `rank()` returns in-process for each query, as the service calls it."""
    now = datetime.now(UTC)
    out = {}
    for qid, text in queries.items():
        results = rank(
            lists[qid],
            Query(text, MAX_RESULTS),
            search,
            weights=WEIGHTS,
            families=FAMILIES,
            now=now,
        )
        out[qid] = [d for d in (doc_id(r.url) for r in results) if d is not None]
    return out


def time_fusion(
    lists: Mapping[str, Mapping[str, list[Hit]]], queries: Mapping[str, str], search: Any
) -> list[float]:
    """Per query, the median of `TIMING_REPEATS` calls of `rank()` in seconds (after one
    warm-up pass, `fused`: first-use caches, as in a running service)."""
    now = datetime.now(UTC)
    seconds = []
    for qid, text in queries.items():
        query = Query(text, MAX_RESULTS)
        samples = []
        for _ in range(TIMING_REPEATS):
            started = time.perf_counter()
            rank(lists[qid], query, search, weights=WEIGHTS, families=FAMILIES, now=now)
            samples.append(time.perf_counter() - started)
        seconds.append(statistics.median(samples))
    return seconds


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


def measure(
    collection: Collection,
    queries: Mapping[str, str],
    coverage: float,
    seed: int,
    overrides: Mapping[str, Any],
    ablate: bool,
) -> Measured:
    """Every figure of one table: the engines (each indexing its share `coverage` of the
    documents), ranx's fusions of their lists, the service over MCP, and with `ablate` the
    variants, computed in-process on the lists the service parsed."""
    seeds = coverage_seeds(seed) if coverage < 1 else {}
    qrels = ranx.Qrels.from_dict({q: collection.qrels[q] for q in queries})
    engines = CranfieldEngines(collection, coverage=coverage, seeds=seeds or None)
    runs = engine_runs(engines, queries)
    references = {
        "plain RRF k=60 (ranx)": evaluate(
            qrels, ranx.fuse(runs, norm=None, method="rrf", params={"k": 60})
        ),
        "CombSUM, min-max (ranx)": evaluate(qrels, ranx.fuse(runs, norm="min-max", method="sum")),
        "CombSUM of ranks, not scores (ranx)": evaluate(
            qrels, ranx.fuse(runs, norm="rank", method="sum")
        ),
    }
    with fake_engine_server(engines) as engines_url:
        search = service_settings(engines_url, overrides).search
        lists = parsed_lists(engines, queries)
        in_process = fused(lists, queries, search)
        fusion_seconds = time_fusion(lists, queries, search)
        answers = run_service(engines_url, queries, overrides)
        ablations: dict[str, dict[str, float]] = {}
        for label, change in ({**ABLATIONS, **WHAT_IF} if ablate else {}).items():
            changed = service_settings(engines_url, deep_merge(overrides, change)).search
            label += " (already off)" if changed == search else ""
            ranked = fused(lists, queries, changed)
            ablations[label] = means(evaluate(qrels, ranked_run(ranked, label)))
    service_scores = evaluate(qrels, ranked_run({q: a.docs for q, a in answers.items()}, "s"))
    engine_means = {
        engine: means(evaluate(qrels, run)) for engine, run in zip(ENGINE_MODELS, runs, strict=True)
    }
    rows = [(f"{e}: {MODEL_LABELS[ENGINE_MODELS[e]]}", v) for e, v in engine_means.items()]
    rows += [(label, means(scores)) for label, scores in references.items()]
    rows.append(("websearch-mcp (web_search over MCP)", means(service_scores)))
    return Measured(
        coverage=coverage,
        seeds={e: seeds[m] for e, m in ENGINE_MODELS.items()} if seeds else {},
        rows=rows,
        engines=engine_means,
        service=service_scores,
        references=references,
        ablations=ablations,
        fusion_seconds=fusion_seconds,
        latencies=[a.seconds for a in answers.values()],
        same=sum(1 for q in queries if in_process[q] == answers[q].docs),
        queries=len(queries),
    )


def chosen_queries(collection: Collection, first: int, half: int) -> dict[str, str]:
    """The first `first` queries (all for 0), then the first or second half of them."""
    chosen = list(collection.queries.items())[: first or None]
    if half:
        middle = len(chosen) // 2
        chosen = chosen[:middle] if half == 1 else chosen[middle:]
    return dict(chosen)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
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
        "--coverage",
        type=float,
        default=1.0,
        help="the share of the documents each engine indexes, in (0, 1] (default 1)",
    )
    parser.add_argument("--sweep", action="store_true", help=f"coverage {SWEEP} in one run")
    parser.add_argument("--seed", type=int, default=1, help="first per-model seed (default 1)")
    parser.add_argument("--plot", type=Path, default=None, help="write nDCG@10 by coverage here")
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
    if not 0 < args.coverage <= 1:
        parser.error(f"--coverage must be in (0, 1], got {args.coverage}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    # Warnings only: configured first, so the MCP server's INFO-level default does not apply.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    eval_dir = args.shared / "eval" if args.shared else default_eval_dir()
    if not (eval_dir / "cranfield").is_dir():
        print(f"no Cranfield collection in {eval_dir} (use --shared or ${SHARED_ENV})")
        return 2
    overrides = parse_overrides(args.set)
    collection = load(eval_dir)
    queries = chosen_queries(collection, args.queries, args.half)
    started = time.perf_counter()
    print(f"Cranfield 1400: {len(queries)} queries, engines' top 20, max_results {MAX_RESULTS}")
    print(f"machine: {machine()}")
    measured = []
    for coverage in SWEEP if args.sweep else (args.coverage,):
        measured.append(measure(collection, queries, coverage, args.seed, overrides, args.ablate))
        print_measured(measured[-1])
    if len(measured) > 1:
        print_sweep(measured)
    if args.plot:
        plot(measured, args.plot)
        print(f"\nplot: {args.plot}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
