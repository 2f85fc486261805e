"""`Hit` and `RankedResult` as the engines and the ranking make them: fields in the order they are
passed by position, the defaults of a result without paper fields, one dict per instance."""

from __future__ import annotations

import dataclasses
from typing import Any

from websearch_mcp.models import Hit, RankedResult


def test_defaults_are_those_of_a_result_without_paper_fields() -> None:
    hit = Hit("Title", "https://a.example/", "Snippet", 3, "bing")
    assert (hit.title, hit.url, hit.snippet, hit.rank, hit.engine) == (
        "Title",
        "https://a.example/",
        "Snippet",
        3,
        "bing",
    )
    assert hit.score is None and hit.published is None and hit.doi is None
    assert hit.venue is None and hit.citations is None and hit.pdf_url is None
    assert hit.authors == () and hit.ids == {}


def test_each_hit_has_its_own_ids() -> None:
    first, second = Hit("a", "u", "", 1, "e"), Hit("b", "v", "", 2, "e")
    first.ids["arxiv"] = "1706.03762"
    assert second.ids == {}
    given = {"pmid": "14760269"}
    assert Hit("c", "w", "", 1, "e", ids=given).ids is given


def test_keywords_and_positions_make_the_same_hit() -> None:
    by_position = Hit("T", "u", "s", 1, "e", 0.5, "2024-01-02", ("A",), "10.1/x", "V", 7, "p")
    by_keyword = Hit(
        title="T",
        url="u",
        snippet="s",
        rank=1,
        engine="e",
        score=0.5,
        published="2024-01-02",
        authors=("A",),
        doi="10.1/x",
        venue="V",
        citations=7,
        pdf_url="p",
        ids={},
    )
    assert by_position == by_keyword
    assert by_position != dataclasses.replace(by_keyword, rank=2)
    assert repr(by_position).startswith("Hit(title='T', url='u', snippet='s', rank=1")


def test_the_fields_are_listed_in_order() -> None:
    assert [f.name for f in dataclasses.fields(Hit)] == [
        "title",
        "url",
        "snippet",
        "rank",
        "engine",
        "score",
        "published",
        "authors",
        "doi",
        "venue",
        "citations",
        "pdf_url",
        "ids",
        "source",
        "site",
        "grouped",
    ]


def test_a_ranked_result_has_the_defaults_of_a_result_without_paper_fields() -> None:
    result = RankedResult("k", "T", "https://a.example/", "s", ["bing"], {"bing": 1})
    assert (result.key, result.title, result.url, result.snippet) == (
        "k",
        "T",
        "https://a.example/",
        "s",
    )
    assert result.engines == ["bing"] and result.ranks == {"bing": 1}
    assert result.score == 0.0 and result.published is None and result.doi is None
    assert result.venue is None and result.citations is None and result.pdf_url is None
    assert result.authors == () and (result.engine_scores, result.ids, result.details) == (
        {},
        {},
        {},
    )
    other = RankedResult("j", "", "", "", [], {})
    for name in ("engine_scores", "ids", "details"):
        getattr(result, name)["x"] = 1
        assert getattr(other, name) == {}, name


def test_a_ranked_result_by_keywords_is_the_one_by_positions() -> None:
    values: tuple[Any, ...] = (
        "k", "T", "u", "s", ["e"], {"e": 1}, 0.5, "2024", {"e": 0.9}, ("A",), "10.1/x", "V", 7,
        "p", {"arxiv": "1"}, {"final": 0.5},
    )  # fmt: skip
    names = [f.name for f in dataclasses.fields(RankedResult)]
    assert names == [
        "key", "title", "url", "snippet", "engines", "ranks", "score", "published",
        "engine_scores", "authors", "doi", "venue", "citations", "pdf_url", "ids", "details",
        "source", "also", "undated", "folded",
    ]  # fmt: skip
    by_position = RankedResult(*values)
    by_keyword = RankedResult(**dict(zip(names[: len(values)], values, strict=True)))
    assert by_position == by_keyword
    assert by_position.details is values[-1]
    assert by_position != dataclasses.replace(by_keyword, score=0.25)
    assert repr(by_position).startswith("RankedResult(key='k', title='T', url='u'")


def test_a_result_carries_its_score_details_only_when_explained() -> None:
    result = RankedResult("k", "T", "u", "s", ["e"], {"e": 1}, details={"final": 0.5})
    assert "score_details" not in result.to_dict()
    assert result.to_dict(explain=True)["score_details"] == {"final": 0.5}
