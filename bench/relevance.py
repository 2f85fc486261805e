"""Relevance benchmark on the judged collections: is the fused list better than any engine?

    python -m bench.relevance [--collection NAME|all] [--engines LINEUP|all]
                              [--coverage F [F ...] | --sweep] [--seed S [S ...]] [--ablate]
                              [--loco]
                              [--queries N] [--half 1|2] [--plot PNG] [--shared PATH]
                              [--set KEY=VALUE ...]

Collections (`testing.judged.COLLECTIONS`, in `../shared/eval`): Cranfield, CACM, MED, NPL and
LISA; only judged queries. Line-ups (`testing.judged_harness.LINEUPS`): `lexical`, four
retrieval models playing Tavily, Brave, SearXNG and DuckDuckGo; `mixed`, with a semantic engine
(LSA, `testing.semantic`) as Exa; `mixed+weak`, with a weak engine (BM25 on each document's first
words, noisy) as Bing too. Each engine answers in its wire format with its top 20 behind the fake
engine server; the real service runs under uvicorn with only those engines, and every query goes
through `web_search` over MCP with max_results 10. Per cell (collection x line-up x coverage):
nDCG@10, MRR@10 and Recall@10 of each engine, of `ranx` fusions of the same lists (plain RRF
k = 60; CombSUM of min-max normalised model scores, which the service never sees; the rank-only
RRF k 1 / 10 / 60, RBC and Borda), and of the service; then a summary per regime (line-up x
coverage), the goals, and what the weak engine costs.

`--coverage F ...` gives each model its own random share F of the documents (one seed per model,
`--seed S` gives S, S + 1, ...; printed); `--sweep` is coverage 1.0 and 0.6. `--seed S1 S2 ...`
(far enough apart that no two draws share a model's seed) measures each cell below coverage 1
once per draw and counts it as their mean, per query, in the summary, the goals, `--ablate` and
`--loco` (at coverage 1 every model holds every document:
the first seed only, which also draws the weak engine's noise). `--ablate` switches
one ranking signal off at a time in every cell, `--loco` chooses among candidate settings with
leave-one-collection-out: both with the pipeline's `rank()` in-process on the lists the service
parsed (the run checks it returns the service's own lists). `--set` overrides a `search` setting
(dotted keys below `search`, values as YAML: `--set ranking.position_k=10 --set rrf_k=10`).
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

from bench.relevance_report import (
    METRICS,
    Measured,
    machine,
    plot,
    pool_draws,
    print_measured,
    print_summary,
)
from bench.relevance_select import Cell, fused, print_ablations, print_loco
from testing.judged import (
    COLLECTIONS,
    Collection,
    coverage_seeds,
    default_eval_dir,
    load_collection,
    shared_seed_error,
)
from testing.judged_harness import (
    LINEUPS,
    MAX_RESULTS,
    Answer,
    CollectionEngines,
    ask_all,
    engine_families,
    fake_engine_server,
    lineup_models,
    service,
    service_settings,
)
from testing.shared import SHARED_ENV
from testing.wire_formats import render
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.models import Hit, HttpResponse, Query
from websearch_mcp.ranking.pipeline import rank

MODEL_LABELS = {
    "bm25": "BM25 (title + text)",
    "tfidf": "TF-IDF cosine",
    "ql_dirichlet": "query likelihood, Dirichlet",
    "bm25_title": "BM25 (titles only)",
    "lsa": "LSA, 200 dimensions (semantic)",
    "weak": "BM25 on the first 12 words, noisy (weak)",
}
#: The fusions that read ranks only: the best of them is the bar for the service.
RANK_ONLY: dict[str, tuple[str, dict[str, float]]] = {
    "RRF k=1": ("rrf", {"k": 1}),
    "RRF k=10": ("rrf", {"k": 10}),
    "RRF k=60": ("rrf", {"k": 60}),
    "RBC phi=0.8": ("rbc", {"phi": 0.8}),
    "RBC phi=0.95": ("rbc", {"phi": 0.95}),
    "Borda": ("bordafuse", {}),
}
SWEEP = (1.0, 0.6)
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


def engine_runs(engines: CollectionEngines, queries: Mapping[str, str]) -> list[ranx.Run]:
    """Each engine's top 20 with its model's scores (ties nudged so ranx keeps list order)."""
    runs = []
    for engine in engines.models:
        scored = {
            q: {d: s - i * 1e-9 for i, (d, s) in enumerate(engines.ranked(engine, text))}
            for q, text in queries.items()
        }
        # ranx wants every query in a run: an engine with nothing for one returns nothing.
        runs.append(ranx.Run.from_dict({q: v or {"-": 0.0} for q, v in scored.items()}, engine))
    return runs


def evaluate(qrels: ranx.Qrels, run: ranx.Run) -> dict[str, list[float]]:
    """Per-query scores of every metric."""
    scores = ranx.evaluate(qrels, run, list(METRICS), return_mean=False, make_comparable=True)
    return {m: [float(x) for x in scores[m]] for m in METRICS}


def means(per_query: Mapping[str, Sequence[float]]) -> dict[str, float]:
    return {m: statistics.fmean(v) for m, v in per_query.items()}


def settled(run: ranx.Run) -> ranx.Run:
    """`run` with each query's results in score order, ties by document id in decreasing order,
    as trec_eval ranks them. ranx ranks ties in the order a run holds them, which its fusions
    leave as their sorting happens to (Borda's follows Python's string hashing): a figure could
    change from one run of the harness to the next."""
    return ranx.Run.from_dict(
        {
            query: dict(sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True))
            for query, docs in run.to_dict().items()
        }
    )


def references(qrels: ranx.Qrels, runs: list[ranx.Run]) -> dict[str, dict[str, list[float]]]:
    """ranx's fusions of the engines' lists: plain RRF, CombSUM of scores, the rank-only ones."""
    out = {
        "plain RRF k=60 (ranx)": ranx.fuse(runs, norm=None, method="rrf", params={"k": 60}),
        "CombSUM, min-max (ranx)": ranx.fuse(runs, norm="min-max", method="sum"),
    }
    for label, (method, params) in RANK_ONLY.items():
        out[f"{label} (ranx, ranks only)"] = ranx.fuse(
            runs, norm=None, method=method, params=params
        )
    return {label: evaluate(qrels, settled(run)) for label, run in out.items()}


# --- the pipeline in-process --------------------------------------------------------------------


def parsed_lists(
    engines: CollectionEngines, queries: Mapping[str, str]
) -> dict[str, dict[str, list[Hit]]]:
    """What the service gets from each engine: the rendered answer through the engine's parser."""
    out: dict[str, dict[str, list[Hit]]] = {}
    for qid, text in queries.items():
        query = Query(text, MAX_RESULTS)
        lists = {}
        for name in engines.models:
            body, content_type = render(name, engines.results(name, text), text)
            response = HttpResponse(200, {"content-type": content_type}, body)
            lists[name] = ENGINES[name]().hits(response, query)
        out[qid] = lists
    return out


def time_fusion(
    lists: Mapping[str, Mapping[str, list[Hit]]],
    queries: Mapping[str, str],
    search: Any,
    lineup: str,
) -> list[float]:
    """Per query, the median of `TIMING_REPEATS` calls of `rank()` in seconds (after one
    warm-up pass, `fused`: first-use caches, as in a running service)."""
    now = datetime.now(UTC)
    families = engine_families(lineup)
    weights = dict.fromkeys(families, 1.0)
    seconds = []
    for qid, text in queries.items():
        query = Query(text, MAX_RESULTS)
        samples = []
        for _ in range(TIMING_REPEATS):
            started = time.perf_counter()
            rank(lists[qid], query, search, weights=weights, families=families, now=now)
            samples.append(time.perf_counter() - started)
        seconds.append(statistics.median(samples))
    return seconds


# --- one cell -----------------------------------------------------------------------------------


def run_service(
    engines_url: str, queries: Mapping[str, str], search: Mapping[str, Any], lineup: str
) -> dict[str, Answer]:
    """Start the service with these `search` settings and ask it every query over MCP."""
    with service(engines_url, search, lineup) as mcp_url:
        return asyncio.run(ask_all(mcp_url, queries))


def measure(
    name: str, collection: Collection, engines: CollectionEngines, queries: Mapping[str, str],
    coverage: float, seeds: Mapping[str, int], overrides: Mapping[str, Any],
) -> tuple[Measured, Cell]:  # fmt: skip
    """Every figure of one cell: the engines (each indexing its share `coverage`), ranx's
    fusions of their lists, the service over MCP; and the parsed lists for in-process runs."""
    qrels = ranx.Qrels.from_dict({q: collection.qrels[q] for q in queries})
    runs = engine_runs(engines, queries)
    refs = references(qrels, runs)
    lineup = engines.lineup
    with fake_engine_server(engines) as engines_url:
        search = service_settings(engines_url, overrides, lineup).search
        lists = parsed_lists(engines, queries)
        in_process = fused(lists, queries, search, lineup)
        fusion_seconds = time_fusion(lists, queries, search, lineup)
        answers = run_service(engines_url, queries, overrides, lineup)
    service_scores = evaluate(qrels, ranked_run({q: a.docs for q, a in answers.items()}, "s"))
    engine_scores = {run.name: evaluate(qrels, run) for run in runs}
    engine_means = {name: means(scores) for name, scores in engine_scores.items()}
    models = {e: m.name for e, m in engines.models.items()}
    rows = [(f"{e}: {MODEL_LABELS[models[e]]}", v) for e, v in engine_means.items()]
    rows += [(label, means(scores)) for label, scores in refs.items()]
    rows.append(("websearch-mcp (web_search over MCP)", means(service_scores)))
    measured = Measured(
        collection=name,
        lineup=lineup,
        coverage=coverage,
        # Below coverage 1 every model draws its share; the weak model's noise is drawn always.
        seeds={e: seeds[m] for e, m in models.items() if coverage < 1 or m == "weak"},
        rows=rows,
        engines=engine_means,
        engine_queries={name: scores["ndcg@10"] for name, scores in engine_scores.items()},
        service=service_scores,
        references=refs,
        fusion_seconds=fusion_seconds,
        latencies=[a.seconds for a in answers.values()],
        same=sum(1 for q in queries if in_process[q] == answers[q].docs),
        queries=len(queries),
    )
    cell = Cell(name, lineup, coverage, dict(queries), collection.qrels, lists)
    return measured, cell


def chosen_queries(collection: Collection, first: int, half: int) -> dict[str, str]:
    """The first `first` queries (all for 0), then the first or second half of them."""
    chosen = list(collection.queries.items())[: first or None]
    if half:
        middle = len(chosen) // 2
        chosen = chosen[:middle] if half == 1 else chosen[middle:]
    return dict(chosen)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.relevance", description=__doc__)
    parser.add_argument(
        "--collection", choices=(*COLLECTIONS, "all"), default="cranfield", help="or all"
    )
    parser.add_argument("--engines", choices=(*LINEUPS, "all"), default="lexical", help="line-up")
    parser.add_argument("--ablate", action="store_true", help="one ranking signal off at a time")
    parser.add_argument("--loco", action="store_true", help="leave-one-collection-out choice")
    parser.add_argument("--queries", type=int, default=0, help="only the first N queries")
    parser.add_argument(
        "--half", type=int, choices=(1, 2), default=0, help="the first or second half of them"
    )
    parser.add_argument(
        "--coverage", type=float, nargs="+", default=[1.0],
        help="the share of the documents each engine indexes, in (0, 1] (default 1)",
    )  # fmt: skip
    parser.add_argument("--sweep", action="store_true", help=f"coverage {SWEEP}")
    parser.add_argument(
        "--seed", type=int, nargs="+", default=[1],
        help="first per-model seed, one per coverage draw (default 1)",
    )  # fmt: skip
    parser.add_argument("--plot", type=Path, default=None, help="write nDCG@10 by coverage here")
    parser.add_argument(
        "--shared", type=Path, default=None, help=f"the shared/ folder (default: ${SHARED_ENV})"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="override a search setting for every run (ranking.position_k=10)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not all(0 < c <= 1 for c in args.coverage):
        parser.error(f"--coverage must be in (0, 1], got {args.coverage}")
    if (shared := shared_seed_error(args.seed)) is not None:
        parser.error(shared)
    return args


def measure_all(args: argparse.Namespace, eval_dir: Path) -> tuple[list[Measured], list[Cell]]:
    """Every cell and coverage draw: per collection, coverage and draw the models are built
    once, for every line-up."""
    overrides = parse_overrides(args.set)
    names = COLLECTIONS if args.collection == "all" else (args.collection,)
    lineups = list(LINEUPS) if args.engines == "all" else [args.engines]
    widest = max(lineups, key=lambda lineup: len(LINEUPS[lineup]))
    measured, cells = [], []
    for name in names:
        collection = load_collection(name, eval_dir)
        queries = chosen_queries(collection, args.queries, args.half)
        print(f"\n# {name}: {len(collection.documents)} documents, {len(queries)} judged queries")
        for coverage in SWEEP if args.sweep else args.coverage:
            for seed in args.seed if coverage < 1 else args.seed[:1]:
                seeds = coverage_seeds(seed)
                built = lineup_models(collection, widest, coverage, seeds)
                for lineup in lineups:
                    engines = CollectionEngines(collection, built, lineup=lineup)
                    m, cell = measure(name, collection, engines, queries, coverage, seeds,
                                      overrides)  # fmt: skip
                    print_measured(m)
                    measured.append(m)
                    cells.append(cell)
    return measured, cells


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    # Warnings only: configured first, so the MCP server's INFO-level default does not apply.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    eval_dir = args.shared / "eval" if args.shared else Path(default_eval_dir())
    if not (eval_dir / "cranfield").is_dir():
        print(f"no collections in {eval_dir} (use --shared or ${SHARED_ENV})")
        return 2
    started = time.perf_counter()
    print(f"engines' top 20, max_results {MAX_RESULTS}; machine: {machine()}")
    measured, cells = measure_all(args, eval_dir)
    measured = pool_draws(measured)
    print_summary(measured)
    overrides = parse_overrides(args.set)
    if args.ablate:
        print_ablations(cells, overrides)
    if args.loco:
        print_loco(cells, overrides)
    if args.plot:
        plot(measured, args.plot)
        print(f"\nplot: {args.plot}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
