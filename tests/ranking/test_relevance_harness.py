"""The relevance harness: the Cranfield loader, the seeds of the draws and `--loco`."""

from __future__ import annotations

from pathlib import Path

import pytest

import bench.relevance_select as select
from bench.relevance_select import Cell
from testing.judged import load, shared_seed_error

CRAN_DOCS = """.I 1
.T
first title .
.A
someone
.B
somewhere
.W
first title .
the real abstract .
.W
more text of the record .
.I 2
.T
second title .
.A
other
.B
elsewhere
.W
second title .
start of the abstract .
.A
a line after a stray author marker .
"""


def test_cranfield_records_with_a_repeated_field_keep_all_their_text(tmp_path: Path) -> None:
    # cran.all.1400 has such records: 576 and 578 (a second `.W`), 240 (stray `.A`, `.B`).
    folder = tmp_path / "cranfield"
    folder.mkdir()
    (folder / "cran.all.1400").write_text(CRAN_DOCS, encoding="latin-1")
    (folder / "cran.qry").write_text(".I 001\n.W\nwhat .\n", encoding="latin-1")
    (folder / "cranqrel").write_text("1 1 2\n", encoding="latin-1")

    docs = load(tmp_path).documents

    assert "the real abstract." in docs["1"].text
    assert "more text of the record." in docs["1"].text
    assert "a line after a stray author marker." in docs["2"].text
    assert "start of the abstract." in docs["2"].text


def _loco_choice(monkeypatch, capsys, held_out_figure: float) -> list[str]:
    """The settings `print_loco` chooses for the Cranfield fold when candidate A scores
    `held_out_figure` on Cranfield (and is best on CACM)."""
    cells = [
        Cell("cranfield", "lexical", 1.0, {}, {}, {}),
        Cell("cacm", "lexical", 1.0, {}, {}, {}),
    ]
    candidates = {"previous defaults": {"ranking": {"x": 0}}, "A": {"ranking": {"x": 1}}}
    table = {0: [0.40, 0.50], 1: [held_out_figure, 0.60], None: [0.40, 0.50]}
    monkeypatch.setattr(select, "CANDIDATES", candidates)
    monkeypatch.setattr(
        select, "scores", lambda cells, overrides: table[overrides.get("ranking", {}).get("x")]
    )
    select.print_loco(cells, {})
    out = capsys.readouterr().out
    rows = [
        line.split("|")[2].strip() for line in out.splitlines() if line.startswith("| cranfield |")
    ]
    return [chosen for chosen in rows if not chosen.startswith("not left out")]


def test_loco_choice_for_a_collection_does_not_read_that_collection(monkeypatch, capsys) -> None:
    # Only Cranfield's own figure for A differs: the choice made for the Cranfield fold (on
    # CACM alone) must not change.
    low = _loco_choice(monkeypatch, capsys, held_out_figure=0.38)
    high = _loco_choice(monkeypatch, capsys, held_out_figure=0.41)
    assert low == high == ["A"]


@pytest.mark.parametrize("seeds", [[1, 1], [1, 2], [11, 6], [1, 11, 16]])
def test_draws_whose_models_would_share_a_seed_are_refused(seeds: list[int]) -> None:
    assert "at least 6 apart" in (shared_seed_error(seeds) or "")
    assert shared_seed_error([1, 11, 21]) is None and shared_seed_error([5]) is None


def test_reference_fusions_rank_ties_by_document_id_as_trec_eval_does() -> None:
    # Borda's fused runs hold their ties in an order that follows string hashing: the same
    # scores held in two orders must give one figure, ties by decreasing document id.
    ranx = pytest.importorskip("ranx", reason="the relevance harness needs the bench extra")
    from bench.relevance import evaluate, settled

    qrels = ranx.Qrels.from_dict({"q": {"c": 1}})
    held = [{"a": 2.0, "b": 1.0, "c": 1.0}, {"a": 2.0, "c": 1.0, "b": 1.0}]
    runs = [ranx.Run.from_dict({"q": docs}) for docs in held]
    raw = [evaluate(qrels, run)["ndcg@10"][0] for run in runs]
    assert raw[0] != raw[1]  # ranx itself follows the order held
    assert [evaluate(qrels, settled(run))["ndcg@10"][0] for run in runs] == [raw[1]] * 2
