"""`bench.relevance --seed S1 S2 ...`: a cell measured with several coverage draws counts once, as
the mean of its draws, in the summary and goals (`pool_draws`) and in `--ablate` / `--loco`
(`scores`)."""

from __future__ import annotations

import statistics

import pytest

from bench.relevance_report import COMBSUM, RRF, SERVICE, Measured, pool_draws
from bench.relevance_select import Cell, cell_ndcg, distinct, scores
from testing.judged_harness import doc_url
from websearch_mcp.models import Hit


def measured(collection: str, coverage: float, a: list[float], b: list[float]) -> Measured:
    """A cell with two engines (`a`, `b`: their nDCG@10 per query); the service and ranx's
    fusions score the mean of the two on each query."""
    fused = [(x + y) / 2 for x, y in zip(a, b, strict=True)]
    per_query = {"ndcg@10": fused, "mrr@10": fused, "recall@10": fused}

    def means(values: list[float]) -> dict[str, float]:
        return dict.fromkeys(("ndcg@10", "mrr@10", "recall@10"), statistics.fmean(values))

    engines = {"a": means(a), "b": means(b)}
    rows = [("a", engines["a"]), ("b", engines["b"]), (SERVICE, means(fused))]
    rows += [(RRF, means(fused)), (COMBSUM, means(fused)), ("RRF k=1 (ranks only)", means(fused))]
    return Measured(
        collection=collection, lineup="lexical", coverage=coverage, seeds={}, rows=rows,
        engines=engines, engine_queries={"a": a, "b": b}, service=per_query,
        references={RRF: per_query, COMBSUM: per_query, "RRF k=1 (ranks only)": per_query},
        fusion_seconds=[0.001], latencies=[0.01], same=len(a), queries=len(a),
    )  # fmt: skip


def test_draws_of_one_cell_pool_into_their_per_query_mean() -> None:
    first = measured("med", 0.6, a=[0.9, 0.9], b=[0.5, 0.5])
    second = measured("med", 0.6, a=[0.1, 0.1], b=[0.6, 0.8])
    alone = measured("med", 1.0, a=[0.4, 0.2], b=[0.3, 0.1])

    pooled = pool_draws([alone, first, second])

    assert [(m.coverage, m.draws) for m in pooled] == [(1.0, 1), (0.6, 2)]
    assert pooled[0] is alone
    cell = pooled[1]
    assert cell.engine_queries["b"] == pytest.approx([0.55, 0.65])
    assert cell.service["ndcg@10"] == pytest.approx([(0.7 + 0.35) / 2, (0.7 + 0.45) / 2])
    assert cell.ndcg(SERVICE) == pytest.approx(0.55)
    # The best engine on average over the draws (b, 0.6), not the mean of each draw's best (0.75).
    assert cell.best_engine()[0] == "b"
    assert cell.best_engine()[1]["ndcg@10"] == pytest.approx(0.6)
    assert cell.queries == 4
    # Margins' errors stay errors over the cell's two queries.
    assert cell.errors()[0] == pytest.approx(statistics.stdev([-0.025, -0.075]) / 2**0.5)


def judged_cell(coverage: float, relevant: str) -> Cell:
    """One query, two engines returning documents 1-3 in opposite orders; `relevant` judged."""
    ids = ["1", "2", "3"]
    lists = {
        "q": {
            engine: [Hit(f"doc {d}", doc_url(d), f"about {d}", rank, engine)
                     for rank, d in enumerate(order, 1)]
            for engine, order in (("tavily", ids), ("brave", ids[::-1]))
        }
    }  # fmt: skip
    return Cell("toy", "lexical", coverage, {"q": "doc"}, {"q": {relevant: 1}}, lists)


def test_scores_count_each_cell_once_as_the_mean_of_its_draws() -> None:
    cells = [judged_cell(1.0, "1"), judged_cell(0.6, "1"), judged_cell(0.6, "3")]

    values = scores(cells, {})

    assert [c.label for c in distinct(cells)] == ["toy lexical 1", "toy lexical 0.6"]
    assert distinct(cells)[1] is cells[1]
    assert values[0] == pytest.approx(cell_ndcg(cells[0], {}))
    assert values[1] == pytest.approx((cell_ndcg(cells[1], {}) + cell_ndcg(cells[2], {})) / 2)
    # The two draws judge different documents, so the mean is not either draw's figure alone.
    assert cell_ndcg(cells[1], {}) != pytest.approx(cell_ndcg(cells[2], {}))
