"""The academic ranking: papers merged across indexes by identifiers or title + year, the
academic signals, year filters, and properties that must hold for any input."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing.engine_answers import parse
from testing.shared import fixture_bytes
from websearch_mcp.config import AcademicSettings
from websearch_mcp.engines.academic.arxiv import ArXiv
from websearch_mcp.engines.academic.crossref import Crossref
from websearch_mcp.engines.academic.europepmc import EuropePMC
from websearch_mcp.engines.academic.semantic_scholar import SemanticScholar
from websearch_mcp.models import Hit, Query, RankedResult
from websearch_mcp.ranking.academic import citation_signal, rank_papers, url_rank
from websearch_mcp.ranking.papers import (
    PaperIds,
    arxiv_id,
    family_name,
    paper_ids,
    surnames,
    title_key,
)
from websearch_mcp.ranking.venues import venue_list

NOW = datetime(2026, 6, 1, tzinfo=UTC)
DEFAULTS = AcademicSettings()


def hit(engine: str, rank: int, title: str, url: str, **fields: object) -> Hit:
    return Hit(title=title, url=url, snippet=str(fields.pop("snippet", "")), rank=rank,
               engine=engine, **fields)  # type: ignore[arg-type]  # fmt: skip


def rank(
    lists: dict[str, list[Hit]],
    text: str = "graph neural networks",
    academic: AcademicSettings = DEFAULTS,
    **query: Any,
) -> list[RankedResult]:
    return rank_papers(
        lists,
        Query(text, **query),
        academic,
        weights={},
        now=NOW,  # type: ignore[arg-type]
    )


def engines_of(results: list[RankedResult]) -> list[list[str]]:
    return sorted(sorted(r.engines) for r in results)


# --- identifiers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"url": "http://arxiv.org/abs/1706.03762v5"}, PaperIds(arxiv="1706.03762")),
        ({"url": "https://x.org/p", "pdf_url": "https://arxiv.org/pdf/2101.00001v2.pdf"},
         PaperIds(arxiv="2101.00001")),
        ({"url": "https://arxiv.org/abs/hep-th/9901001"}, PaperIds(arxiv="hep-th/9901001")),
        ({"url": "https://x.org/p", "doi": "10.48550/arXiv.1810.04805"},
         PaperIds(arxiv="1810.04805")),
        ({"url": "http://dx.doi.org/10.1145/3292500.3330701"},
         PaperIds(doi="10.1145/3292500.3330701")),
        ({"url": "https://pubmed.ncbi.nlm.nih.gov/14760269/"}, PaperIds(pmid="14760269")),
        ({"url": "https://www.ncbi.nlm.nih.gov/pubmed/14760269"}, PaperIds(pmid="14760269")),
        ({"url": "http://export.arxiv.org/abs/1706.03762v1"}, PaperIds(arxiv="1706.03762")),
        ({"url": "https://europepmc.org/article/MED/33712345"}, PaperIds(pmid="33712345")),
        ({"url": "https://europepmc.org/article/PMC/PMC123456"}, PaperIds()),
        ({"url": "https://www.semanticscholar.org/paper/abc", "doi": "10.1/X",
          "ids": {"arxiv": "arXiv:1706.03762v2", "pmid": "99"}},
         PaperIds(doi="10.1/x", arxiv="1706.03762", pmid="99")),
        ({"url": "https://example.org/arxiv.org/abs/1706.03762-notes"}, PaperIds()),
    ],
)  # fmt: skip
def test_identifiers_from_every_field(fields: dict, expected: PaperIds) -> None:
    url = fields.pop("url")
    assert paper_ids(hit("e", 1, "T", url, **fields)) == expected


def test_arxiv_id_and_title_key() -> None:
    assert arxiv_id("arXiv:1706.03762v7") == "1706.03762"
    assert arxiv_id("not an id") is None
    assert title_key("Schrödinger's  Cat: A Study!", 2020) == "schrodinger s cat a study|2020"
    assert title_key("Schrodinger’s cat — a study", 2020) == "schrodinger s cat a study|2020"
    assert title_key("Editorial", 2020) is None  # too generic to merge on
    assert title_key("A long enough title here", None) is None


# --- merging --------------------------------------------------------------------------------

GNN = "Semi-Supervised Classification with Graph Convolutional Networks"


def test_merges_by_doi_across_three_indexes() -> None:
    doi = "10.1000/gcn.2017"
    lists = {
        "crossref": [hit("crossref", 1, GNN, f"http://dx.doi.org/{doi.upper()}", doi=doi,
                         snippet="Abstract.")],
        "openalex": [hit("openalex", 3, GNN + " (extended)", "https://openalex.org/W1",
                         doi=doi, citations=9000, snippet="We present a scalable approach.")],
        "dblp": [hit("dblp", 2, "GCN classification", f"https://doi.org/{doi}")],
    }  # fmt: skip
    (paper,) = rank(lists)
    assert paper.engines == ["crossref", "dblp", "openalex"]
    assert paper.ranks == {"crossref": 1, "dblp": 2, "openalex": 3}
    assert paper.ids == {"doi": doi} and paper.key == f"doi:{doi}"
    assert paper.details["merged_by"] == ["doi"]
    assert paper.snippet == "We present a scalable approach."  # the longest abstract


def test_merges_by_arxiv_id_across_three_indexes() -> None:
    lists = {
        "arxiv": [hit("arxiv", 1, GNN, "https://arxiv.org/abs/1609.02907v4")],
        "semantic_scholar": [hit("semantic_scholar", 1, GNN, "https://www.semanticscholar.org/p/1",
                                 ids={"arxiv": "1609.02907"}, published="2017")],
        "openalex": [hit("openalex", 2, GNN, "https://openalex.org/W9",
                         doi="10.48550/arxiv.1609.02907", published="2016-09-09")],
    }  # fmt: skip
    (paper,) = rank(lists)
    assert sorted(paper.engines) == ["arxiv", "openalex", "semantic_scholar"]
    assert paper.ids == {"arxiv": "1609.02907"} and paper.doi is None
    assert paper.url == "https://arxiv.org/abs/1609.02907v4"  # arXiv's page before the indexes


def test_merges_by_pubmed_id_across_three_indexes() -> None:
    title = "Maternal age and other predictors of newborn blood pressure"
    lists = {
        "pubmed": [hit("pubmed", 1, title, "https://pubmed.ncbi.nlm.nih.gov/14760269/",
                       published="2004-02")],
        "europepmc": [hit("europepmc", 4, title + " in a cohort",
                          "https://europepmc.org/article/MED/14760269", published="2004-02-01")],
        "semantic_scholar": [hit("semantic_scholar", 2, title, "https://www.semanticscholar.org/paper/7",
                                 ids={"pmid": "14760269"}, published="2003")],
    }  # fmt: skip
    (paper,) = rank(lists, "newborn blood pressure")
    assert paper.ids == {"pmid": "14760269"} and paper.key == "pmid:14760269"
    assert paper.url == "https://pubmed.ncbi.nlm.nih.gov/14760269/"
    assert paper.published == "2003"  # the earliest year any index gives


def test_merges_by_title_and_year_across_three_indexes() -> None:
    lists = {
        "dblp": [hit("dblp", 1, "Graph Attention Networks.", "https://dblp.org/rec/x",
                     published="2018", authors=("Petar Velickovic", "Yoshua Bengio"))],
        "google_scholar": [hit("google_scholar", 1, "Graph attention networks",
                               "https://openreview.net/forum?id=rJXMpikCZ", published="2018",
                               authors=("P Veličković", "G Cucurull"))],
        "core": [hit("core", 2, "GRAPH ATTENTION NETWORKS", "https://core.ac.uk/works/1",
                     published="2018-02-04")],
    }  # fmt: skip
    (paper,) = rank(lists, "graph attention networks")
    assert sorted(paper.engines) == ["core", "dblp", "google_scholar"]
    assert paper.details["merged_by"] == ["title"]
    assert paper.url == "https://openreview.net/forum?id=rJXMpikCZ"  # the publisher's page
    assert paper.published == "2018-02-04"  # the most precise date of the earliest year


@pytest.mark.parametrize("server", ["arXiv", "bioRxiv", "PsyArXiv", "TechRxiv", "Research Square"])
def test_a_journal_is_shown_before_a_preprint_server(server: str) -> None:
    doi, title = "10.1/mood", "Sleep and mood in adolescents: a longitudinal study"
    lists = {
        name: [hit(name, 1, title, f"https://{name}.org/p", doi=doi, published="2021",
                   venue=venue)]
        for name, venue in (("a", server), ("b", "Journal of Adolescence"))
    }  # fmt: skip
    (paper,) = rank(lists, "sleep mood adolescents")
    assert paper.venue == "Journal of Adolescence"


def test_an_indexs_venue_name_comes_before_an_arxiv_records_citation_of_it() -> None:
    doi, title = "10.1145/3395363.3397366", "Detecting flaky tests in probabilistic software"
    cited = "In Proc. ACM SIGSOFT ISSTA 2020, pages 14-26. ACM, 2020"
    named = "Proceedings of the 29th ACM SIGSOFT International Symposium on Software Testing"
    lists = {
        "arxiv": [hit("arxiv", 1, title, "https://arxiv.org/abs/2005.14124", doi=doi,
                      published="2020-05-28", venue=cited)],
        "crossref": [hit("crossref", 1, title, f"https://doi.org/{doi}", doi=doi,
                         published="2020-07-18", venue=named)],
    }  # fmt: skip
    (paper,) = rank(lists, "flaky tests probabilistic software")
    assert paper.venue == named
    (alone,) = rank({"arxiv": lists["arxiv"]}, "flaky tests probabilistic software")
    assert alone.venue == cited  # the only name there is


def test_a_doi_ending_in_a_hash_keeps_it_in_the_link() -> None:
    doi = "10.1002/(sici)1097-0134(20000515)39:3<216::aid-prot40>3.0.co;2-#"
    (paper,) = rank({"crossref": [hit("crossref", 1, GNN, f"https://doi.org/{doi}", doi=doi)]})
    assert paper.url == (
        "https://doi.org/10.1002/(sici)1097-0134(20000515)39:3%3C216::aid-prot40%3E3.0.co;2-%23"
    )


def test_doi_and_arxiv_id_join_through_an_index_that_has_both() -> None:
    title = "Deep Residual Learning"
    doi = "10.1109/cvpr.2016.90"
    # fmt: off
    crossref = hit("crossref", 1, title + " for Image Recognition", f"https://doi.org/{doi}",
                   doi=doi, published="2016-06", venue="2016 IEEE CVPR", citations=150000)
    arxiv = hit("arxiv", 1, title, "https://arxiv.org/abs/1512.03385v1", published="2015-12-10",
                pdf_url="https://arxiv.org/pdf/1512.03385v1", venue="arXiv")
    s2 = hit("semantic_scholar", 3, title, "https://www.semanticscholar.org/paper/2c03",
             doi=doi.upper(), ids={"arxiv": "1512.03385"}, citations=190000,
             published="2015-12-10", authors=("Kaiming He", "X. Zhang", "S. Ren", "Jian Sun"))
    lists = {"crossref": [crossref], "arxiv": [arxiv], "semantic_scholar": [s2]}
    # fmt: on
    (paper,) = rank(lists, "deep residual learning")
    assert paper.ids == {"doi": "10.1109/cvpr.2016.90", "arxiv": "1512.03385"}
    assert paper.key == "doi:10.1109/cvpr.2016.90"
    assert paper.url == "https://doi.org/10.1109/cvpr.2016.90"
    assert paper.citations == 190000 and paper.pdf_url == "https://arxiv.org/pdf/1512.03385v1"
    assert paper.published == "2015-12-10" and paper.venue == "2016 IEEE CVPR"
    assert len(paper.authors) == 4
    assert paper.details["merged_by"] == ["arxiv", "doi"]
    # Without the index that knows both, the preprint and the article stay two papers.
    assert len(rank({"crossref": [crossref], "arxiv": [arxiv]}, "deep residual learning")) == 2


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"published": "2019"}, {"published": "2020"}),  # similar title, another year
        ({"published": "2020", "doi": "10.1/a"}, {"published": "2020", "doi": "10.1/b"}),
        ({"published": "2020", "ids": {"arxiv": "2001.00001"}},
         {"published": "2020", "ids": {"arxiv": "2001.00002"}}),
        ({"published": "2020", "authors": ("Ada Lovelace",)},
         {"published": "2020", "authors": ("Alan Turing",)}),
    ],
)  # fmt: skip
def test_different_papers_with_similar_titles_stay_apart(first: dict, second: dict) -> None:
    lists = {
        "crossref": [hit("crossref", 1, "A Survey on Graph Neural Networks", "https://a.org/1",
                         **first)],
        "openalex": [hit("openalex", 1, "A survey on graph neural networks.", "https://b.org/2",
                         **second)],
    }  # fmt: skip
    assert engines_of(rank(lists)) == [["crossref"], ["openalex"]]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("Wei Zhang", "Li Chen"), ("Wei Liu", "Jian Pei")),  # a given name in common
        (("Zhang JA",), ("Liu JA",)),  # PubMed's initials in common
        (("Smith, John",), ("John Brown",)),  # "Family, Given" against "Given Family"
    ],
)
def test_a_given_name_in_common_does_not_make_two_papers_one(
    first: tuple[str, ...], second: tuple[str, ...]
) -> None:
    title = "Introduction to the Special Issue on Deep Learning"
    lists = {
        "crossref": [hit("crossref", 1, title, "https://a.org/1", published="2020",
                         doi="10.1/tnnls", authors=first)],
        "dblp": [hit("dblp", 1, title + ".", "https://b.org/2", published="2020",
                     authors=second)],
    }  # fmt: skip
    assert engines_of(rank(lists, "deep learning special issue")) == [["crossref"], ["dblp"]]


@pytest.mark.parametrize(
    "spellings",
    [
        ("Ashish Vaswani", "Vaswani A", "A. Vaswani", "Vaswani, Ashish", "VASWANI AS"),
        ("Juan Carlos de la Cruz", "de la Cruz JC", "J.-C. de la Cruz"),
        ("Ming-Wei Chang", "Chang MW", "M-W Chang"),
        ("Matthew W. Gillman", "Gillman MW Jr"),
        ("Søren Jørgensen", "Soren Jorgensen", "Jørgensen S"),
    ],
)
def test_one_author_spelled_as_each_index_spells_them_merges(spellings: tuple[str, ...]) -> None:
    title = "Introduction to the Special Issue on Deep Learning"
    others = ("Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov")
    lists = {
        f"e{n}": [hit(f"e{n}", 1, title, f"https://{n}.org/1", published="2020",
                      authors=(others[n], name))]
        for n, name in enumerate(spellings)
    }  # fmt: skip
    (paper,) = rank(lists, "deep learning special issue")
    assert len(paper.engines) == len(spellings)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Ashish Vaswani", "vaswani"),
        ("Vaswani AS", "vaswani"),
        ("Vaswani, Ashish", "vaswani"),
        ("de la Cruz, Juan Carlos", "de la cruz"),  # "Family, Given": all before the comma
        ("de la Cruz JC", "de la cruz"),  # initials last: the rest is the family name
        ("Li Wu", "wu"),  # two-letter names are names, not initials
        ("WU", "wu"),  # nothing but what could be initials: the name as it is
        ("Gillman MW Jr", "gillman"),  # MEDLINE's suffix after the initials
        ("Matthew W. Gillman Jr.", "gillman"),
        ("Smith, John, III", "smith"),
        ("Søren Jørgensen", "jorgensen"),  # letters without a decomposition
        ("Łukasz Kaiser", "kaiser"),
        ("Stanisław Łojasiewicz", "lojasiewicz"),
    ],
)
def test_family_name_in_each_index_spelling(name: str, family: str) -> None:
    assert family_name(name) == family


def test_surnames_leave_out_single_letters() -> None:
    assert surnames(["J. K.", "A. Vaswani"]) == {"vaswani"}


def test_generic_titles_do_not_merge() -> None:
    lists = {
        "crossref": [hit("crossref", 1, "Editorial", "https://a.org/1", published="2020")],
        "openalex": [hit("openalex", 1, "Editorial.", "https://b.org/2", published="2020")],
    }
    assert len(rank(lists, "editorial")) == 2


def test_notices_of_one_generic_title_without_authors_stay_apart() -> None:
    # Europe PMC's recorded "Department of Error." (Lancet, 2025: a DOI, a PMID, no authors) and
    # another of that year's Lancet errata as an index without ids lists it: two notices, not
    # one shown under the other's link with the first's DOI.
    notice = parse(EuropePMC(), fixture_bytes("europepmc/search_cancer_lite.json"))[1]
    link = "https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(25)00001-1/fulltext"
    other = hit("google_scholar", 1, "Department of Error", link, published="2025")
    lists = {"europepmc": [notice], "google_scholar": [other]}
    assert engines_of(rank(lists, "department of error")) == [["europepmc"], ["google_scholar"]]


@pytest.mark.parametrize("s2_first", [True, False])
def test_a_medline_title_from_semantic_scholar_shows_as_the_other_indexes_spell_it(
    s2_first: bool,
) -> None:
    """Semantic Scholar keeps MEDLINE's final period ("Turing patterns in multiplex networks.");
    Crossref's record of the paper has none. The merge folds punctuation away, so they are one
    paper; its title must not gain or lose the period with the index that ranks it first."""
    s2 = json.loads(fixture_bytes("semanticscholar/paper_search_turing_title.json"))
    medline = s2["data"][99] | {"year": 2012}
    s2["data"] = [medline] if s2_first else [s2["data"][0], medline]
    crossref = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    items = crossref["message"]["items"]
    items[1]["title"] = [medline["title"].removesuffix(".")]
    crossref["message"]["items"] = items[1:] if not s2_first else items
    lists = {
        "semantic_scholar": parse(SemanticScholar(), json.dumps(s2)),
        "crossref": parse(Crossref(), json.dumps(crossref)),
    }
    papers = [p for p in rank(lists, "turing patterns networks") if "multiplex" in p.title]
    assert [sorted(p.engines) for p in papers] == [["crossref", "semantic_scholar"]]
    assert papers[0].title == "Turing patterns in multiplex networks"


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        # Five words are a paper's title, whoever lists no authors: one paper.
        ("Attention Is All You Need", [["a", "b"]]),
        # Four are a notice's ("Table of Contents Page"): two records apart.
        ("Table of Contents Page", [["a"], ["b"]]),
    ],
)
def test_records_without_authors_join_by_title_from_five_words(
    title: str, expected: list[list[str]]
) -> None:
    lists = {
        "a": [hit("a", 1, title, "https://a.org/1", published="2017")],
        "b": [hit("b", 1, title, "https://b.org/1", published="2017")],
    }
    assert engines_of(rank(lists, title.lower())) == expected


def test_title_merge_skips_a_contradicting_group_but_joins_a_compatible_one() -> None:
    title = "Scaling Laws for Neural Language Models"
    lists = {
        "a": [hit("a", 1, title, "https://a.org/1", published="2020", doi="10.1/x")],
        "b": [hit("b", 1, title, "https://b.org/1", published="2020", doi="10.1/y")],
        "c": [hit("c", 1, title, "https://c.org/1", published="2020")],
    }
    assert engines_of(rank(lists, "scaling laws")) == [["a", "c"], ["b"]]


def test_an_engine_counts_once_per_paper_with_its_best_rank() -> None:
    doi = "10.1/dup"
    lists = {"crossref": [hit("crossref", 2, GNN, "https://doi.org/10.1/dup", doi=doi),
                          hit("crossref", 5, GNN, "https://x.org/other", doi=doi)]}  # fmt: skip
    (paper,) = rank(lists)
    assert paper.ranks == {"crossref": 2}


def test_an_index_that_found_nothing_changes_no_score() -> None:
    """As in the web ranking (and the rrf `score_details` shows): an index that answered with
    no papers, or only papers on blocked sites, holds no vote, and lowers no paper's share of
    the best possible RRF (nor pushes it under the threshold)."""
    found = {"arxiv": [hit("arxiv", 1, GNN, "https://arxiv.org/abs/1812.08434")]}
    alone = rank_papers(found, Query(GNN), DEFAULTS, weights={}, now=NOW)
    for other in ([], [hit("dblp", 1, "Spam", "https://blocked.example/1")]):
        lists = {**found, "dblp": other}
        with_it = rank_papers(
            lists, Query(GNN), DEFAULTS, weights={}, now=NOW, block_domains=["blocked.example"]
        )
        assert [r.details for r in with_it] == [r.details for r in alone]


def test_an_index_whose_papers_all_fall_outside_the_asked_years_changes_no_score() -> None:
    """Crossref's recorded papers (2012, 2022) all lie outside `year_from` 2023: its list holds
    no vote, as an empty one does, and no arXiv paper's rrf or score is halved by it."""
    arxiv = parse(ArXiv(), fixture_bytes("arxiv/search_testing_m10.xml"))
    crossref = parse(Crossref(), fixture_bytes("crossref/works_query_ecology_rows2.json"))
    assert all(h.published and h.published < "2023" for h in crossref)
    query = Query("software testing", year_from=2023)
    alone = rank_papers({"arxiv": arxiv}, query, DEFAULTS, weights={}, now=NOW)
    both = rank_papers({"arxiv": arxiv, "crossref": crossref}, query, DEFAULTS, weights={}, now=NOW)
    assert alone and alone[0].details["rrf"] > 0.9
    assert [(r.url, r.score, r.details) for r in both] == [
        (r.url, r.score, r.details) for r in alone
    ]


# --- fields and signals ---------------------------------------------------------------------


def test_url_preference() -> None:
    order = [
        "https://www.nature.com/articles/nature14539",
        "https://doi.org/10.1038/nature14539",
        "https://arxiv.org/abs/1234.5678",
        "https://pubmed.ncbi.nlm.nih.gov/1/",
        "https://europepmc.org/article/MED/1",
        "https://www.semanticscholar.org/paper/x",
        "https://arxiv.org/pdf/1234.5678",
    ]
    assert [url_rank(u) for u in order] == list(range(7))
    assert url_rank("https://europepmc.org/articles/PMC1?pdf=render") == 6


def test_citations_are_log_compressed_and_bounded() -> None:
    values = [citation_signal(c, DEFAULTS) for c in (0, 1, 10, 100, 1000, 10**6)]
    assert values == sorted(values) and values[0] == 0.0 and values[-1] == 1.0
    assert values[4] == pytest.approx(1.0)
    assert 0.3 < values[2] < 0.4  # ten citations already count for a third
    assert citation_signal(None, DEFAULTS) == DEFAULTS.citations_unknown


def _two(a: dict, b: dict, text: str = "graph neural networks") -> list[RankedResult]:
    """Two equally ranked, equally worded papers that differ only in `a` / `b`."""
    lists = {
        "e1": [hit("e1", 1, "Graph neural networks A", "https://a.org/1", **a)],
        "e2": [hit("e2", 1, "Graph neural networks B", "https://b.org/2", **b)],
    }
    return rank(lists, text)


def test_more_citations_rank_higher() -> None:
    first, second = _two({"citations": 3}, {"citations": 3000})
    assert first.url == "https://b.org/2"
    assert first.details["citations"] == 1.0 and first.details["citation_count"] == 3000
    assert second.score < first.score


def test_top_venue_ranks_higher_and_the_list_is_configurable() -> None:
    neurips = "Advances in Neural Information Processing Systems 33"
    first, second = _two({"venue": "Some Workshop"}, {"venue": neurips})
    assert first.url == "https://b.org/2"
    assert first.details["venue"] == 1.0 and first.details["top_venue"]
    assert second.details["venue"] == 0.0 and "top_venue" not in second.details
    custom = AcademicSettings(venues=["Some Workshop"])
    lists = {"e1": [hit("e1", 1, "Graph neural networks", "https://a.org/1",
                        venue="Some Workshop")]}  # fmt: skip
    (paper,) = rank(lists, academic=custom)
    assert paper.details["top_venue"] == "Some Workshop"


def test_venue_matching_rules() -> None:
    venues = venue_list(("My Lab Journal", "ICAPS"))
    assert venues.match("Science (New York, N.Y.)") == "Science"
    assert venues.match("Lecture Notes in Computer Science") is None
    assert venues.match("Nature Communications") is None
    assert venues.match("2017 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)")
    assert venues.match("Proc. ICAPS 2021") == "ICAPS"
    assert venues.match("The My Lab Journal") == "My Lab Journal"
    assert venues.match("Lancet (London, England)") == "The Lancet"
    assert (
        venues.match("IEEE Symposium on Security & Privacy")
        == "IEEE Symposium on Security and Privacy"
    )
    assert venues.match("Nature Medicine") == "Nature Medicine"
    assert venues.match("Nature Medicine Case Reports") is None  # two words: the whole venue
    assert venues.match(None) is None


def test_a_query_naming_an_author_or_a_venue_matches_the_paper() -> None:
    for named in ({"authors": ("Thomas Kipf", "Max Welling")}, {"venue": "JMLR"}):
        first, second = _two({}, named, "kipf graph neural networks jmlr")
        assert first.url == "https://b.org/2"
        assert first.details["alignment"] > second.details["alignment"]


def test_open_full_text_ranks_higher() -> None:
    first, second = _two({}, {"pdf_url": "https://b.org/2.pdf"})
    assert first.url == "https://b.org/2" and first.pdf_url == "https://b.org/2.pdf"
    assert (first.details["open_access"], second.details["open_access"]) == (1.0, 0.0)


@pytest.mark.parametrize("text", ["recent graph neural networks", "graph neural networks 2025"])
def test_recency_applies_only_when_asked(text: str) -> None:
    old, new = {"published": "2015-01-01"}, {"published": "2026-01-01"}
    first, _ = _two(old, new, text)
    assert first.url == "https://b.org/2" and first.details["freshness"] > 0.8
    plain = _two(old, new)
    assert all(r.details["freshness"] is None for r in plain)
    assert plain[0].score == plain[1].score


@pytest.mark.parametrize("text", ["sea level projections 2100", "2048-bit RSA graph networks"])
def test_a_year_to_come_or_a_number_is_no_wish_for_recent_papers(text: str) -> None:
    old, new = {"published": "2015-01-01"}, {"published": "2026-01-01"}
    assert all(r.details["freshness"] is None for r in _two(old, new, text))


def test_zero_weights_leave_rrf_alone() -> None:
    off = AcademicSettings(
        alignment_weight=0, rare_term_weight=0, phrase_weight=0, citations_weight=0,
        venue_weight=0, open_access_weight=0, freshness_weight=0,
    )  # fmt: skip
    lists = {"e1": [hit("e1", 1, "unrelated words", "https://a.org/1", citations=5)]}
    (paper,) = rank(lists, "latest graph", academic=off)
    assert paper.score == paper.details["rrf"] == 1.0


def test_details_explain_every_signal() -> None:
    lists = {"e1": [hit("e1", 1, GNN, "https://a.org/1", citations=10, doi="10.1/d")]}
    (paper,) = rank(lists, "graph convolutional networks")
    for name in ("rrf", "alignment", "rare", "phrase", "citations", "venue", "open_access",
                 "freshness", "final", "ranks", "citation_count", "ids"):  # fmt: skip
        assert name in paper.details
    assert paper.details["final"] == round(paper.score, 4)
    assert paper.to_dict()["ids"] == {"doi": "10.1/d"}


# --- filters --------------------------------------------------------------------------------


def test_year_range_filters_papers_by_any_known_year() -> None:
    lists = {
        "e1": [
            hit("e1", 1, "Graph networks one", "https://a.org/1", published="2015"),
            hit("e1", 2, "Graph networks two", "https://a.org/2", published="2019-05-01"),
            hit("e1", 3, "Graph networks three", "https://a.org/3"),  # no year: kept
            hit("e1", 4, "Graph networks four", "https://a.org/4", published="2022"),
            hit("e1", 5, "Graph networks five", "https://arxiv.org/abs/1801.00005",
                published="2017-12-30"),
        ],
        # The published version of "five" is from 2018: inside the range.
        "e2": [hit("e2", 1, "Graph networks five", "https://x.org/5", published="2018",
                   ids={"arxiv": "1801.00005"})],
    }  # fmt: skip
    kept = rank(lists, "graph networks", year_from=2018, year_to=2020)
    assert sorted(r.url for r in kept) == [
        "https://a.org/2",
        "https://a.org/3",
        "https://x.org/5",
    ]
    assert {r.url for r in rank(lists, "graph networks", year_to=2016)} == {
        "https://a.org/1",
        "https://a.org/3",
    }
    # A paper kept for one index's year shows that year's date, not an earlier one outside the
    # asked years; unasked, the earliest.
    assert next(r for r in kept if r.url == "https://x.org/5").published == "2018"
    unasked = rank(lists, "graph networks")
    assert next(r for r in unasked if r.url == "https://x.org/5").published == "2017-12-30"


def test_blocked_domains_are_left_out() -> None:
    lists = {"e1": [hit("e1", 1, GNN, "https://predatory.example/p"),
                    hit("e1", 2, GNN + " II", "https://good.org/p")]}  # fmt: skip
    results = rank_papers(lists, Query("graph"), DEFAULTS, weights={},
                          block_domains=["predatory.example"], now=NOW)  # fmt: skip
    assert [r.url for r in results] == ["https://good.org/p"]


def test_a_pdf_link_on_a_blocked_domain_is_left_out_and_another_index_s_kept() -> None:
    doi = "10.1/gnn"
    blocked = "https://www.researchgate.net/profile/x/file.pdf"
    lists = {
        "a": [hit("a", 1, GNN, f"https://doi.org/{doi}", doi=doi, pdf_url=blocked)],
        "b": [hit("b", 1, GNN, "https://b.org/p", doi=doi, pdf_url="https://b.org/p.pdf")],
    }
    for only, pdf in (("a", None), (None, "https://b.org/p.pdf")):
        chosen = {only: lists[only]} if only else lists
        (paper,) = rank_papers(chosen, Query("graph"), DEFAULTS, weights={},
                               block_domains=["researchgate.net"], now=NOW)  # fmt: skip
        assert paper.pdf_url == pdf
        assert paper.details["open_access"] == (0.0 if pdf is None else 1.0)


def test_threshold_keeps_two_and_max_results_truncates() -> None:
    lists = {"e1": [hit("e1", i, f"unrelated {i}", f"https://a.org/{i}") for i in range(1, 30)]}
    strict = AcademicSettings(relevance_threshold=1.0)
    assert len(rank(lists, academic=strict)) == 2
    assert len(rank(lists, max_results=5)) == 5


# --- properties -----------------------------------------------------------------------------

ENGINES = ["arxiv", "crossref", "openalex", "pubmed", "semantic_scholar"]
TITLES = ["Graph neural networks for molecules", "Graph Neural Networks for Molecules.",
          "Attention is all you need today", "Deep residual learning for images"]  # fmt: skip
DOIS = [None, "10.1/a", "10.1/b"]
ARXIV = [None, "2001.00001", "2001.00002"]
PMIDS = [None, "111", "222"]
YEARS = [None, "2019", "2020", "2020-05-01"]
HOSTS = ["https://a.org/1", "https://b.org/2", "https://doi.org/10.1/a", "https://c.org/3"]

hit_data = st.tuples(
    st.sampled_from(TITLES), st.sampled_from(HOSTS), st.sampled_from(DOIS),
    st.sampled_from(ARXIV), st.sampled_from(PMIDS), st.sampled_from(YEARS),
    st.one_of(st.none(), st.integers(0, 5000)),
)  # fmt: skip
lists_strategy = st.dictionaries(
    st.sampled_from(ENGINES), st.lists(hit_data, max_size=6), min_size=1, max_size=5
)
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def build(data: dict[str, list[tuple]]) -> dict[str, list[Hit]]:
    lists: dict[str, list[Hit]] = {}
    for engine, items in data.items():
        lists[engine] = [
            Hit(title=t, url=url, snippet="", rank=i, engine=engine, doi=doi, published=year,
                citations=cites, ids={k: v for k, v in (("arxiv", ax), ("pmid", pm)) if v})
            for i, (t, url, doi, ax, pm, year, cites) in enumerate(items, start=1)
        ]  # fmt: skip
    return lists


def dump(results: list[RankedResult]) -> list[dict]:
    return [r.to_dict(explain=True) | {"key": r.key} for r in results]


@PROPS
@given(lists_strategy, st.sampled_from(["graph neural networks", "latest attention"]),
       st.randoms())  # fmt: skip
def test_engine_order_never_changes_the_output(data, text, rnd: random.Random) -> None:
    lists = build(data)
    names = list(lists)
    rnd.shuffle(names)
    shuffled = {name: lists[name] for name in names}
    query = Query(text, max_results=20)
    first = rank_papers(lists, query, DEFAULTS, weights={}, now=NOW)
    assert dump(first) == dump(rank_papers(shuffled, query, DEFAULTS, weights={}, now=NOW))
    # And always: scores in [0, 1], best first, each paper once, each engine once per paper.
    assert all(0.0 <= r.score <= 1.0 for r in first)
    assert [r.score for r in first] == sorted((r.score for r in first), reverse=True)
    assert len({r.key for r in first}) == len(first)
    for r in first:
        assert sorted(r.engines) == sorted(set(r.engines)) == sorted(r.ranks)
    shared = [r.ids.get(kind) for r in first for kind in ("doi", "arxiv", "pmid")]
    shared = [value for value in shared if value]
    assert len(shared) == len(set(shared))  # no identifier is left on two papers


def test_a_paper_dated_after_now_is_no_fresher_than_one_of_today() -> None:
    """Freshness is "1 for this day": a date in the future (an index's announced issue) never
    earns more, which would lift the score above what RRF allows."""
    from datetime import timedelta

    from websearch_mcp.ranking.academic import freshness

    assert freshness(NOW, NOW, DEFAULTS) == 1.0
    assert freshness(NOW + timedelta(days=90), NOW, DEFAULTS) == 1.0


def test_of_two_equally_good_links_the_secure_one_is_shown() -> None:
    """The same publisher page from two indexes: https before http, whatever the ranks."""
    title, secure = "Graph neural networks at scale", "https://journal.example/a?x=1"
    lists = {
        "crossref": [hit("crossref", 1, title, "http://journal.example/a", doi="10.1/gnn")],
        "openalex": [hit("openalex", 3, title, secure, doi="10.1/gnn")],
    }
    (paper,) = rank(lists)
    assert paper.url == "https://journal.example/a?x=1"


def test_a_two_word_title_is_too_generic_to_merge_on() -> None:
    """Title + year joins papers only for titles of `MIN_TITLE_WORDS` (3) words or more."""
    assert title_key("Transformers Revisited", 2020) is None
    assert title_key("Transformers Revisited Again", 2020) == "transformers revisited again|2020"
    title = "Transformers Revisited"
    lists = {
        "crossref": [hit("crossref", 1, title, "https://a.org/1", published="2020")],
        "openalex": [hit("openalex", 1, title, "https://b.org/2", published="2020")],
    }
    assert len(rank(lists, "transformers revisited")) == 2


def test_a_short_title_is_too_generic_to_merge_on() -> None:
    """Title + year joins papers only for titles of `MIN_TITLE_CHARS` (12) characters or more:
    three short words name many papers."""
    assert title_key("Notes on AI", 2020) is None
    lists = {
        "crossref": [hit("crossref", 1, "Notes on AI", "https://a.org/1", published="2020")],
        "openalex": [hit("openalex", 1, "Notes on AI.", "https://b.org/2", published="2020")],
    }
    assert len(rank(lists, "notes on ai")) == 2


def test_the_title_of_a_merged_paper_is_the_best_ranked_indexs() -> None:
    """The indexes spell one paper's title differently: the best-ranked one's is shown,
    whatever the indexes' names."""
    lists = {
        "crossref": [hit("crossref", 4, "GRAPH NEURAL NETWORKS: A REVIEW",
                         "https://doi.org/10.1/gnn", doi="10.1/gnn")],
        "openalex": [hit("openalex", 1, "Graph neural networks: a review",
                         "https://openalex.org/W1", doi="10.1/gnn")],
    }  # fmt: skip
    (paper,) = rank(lists)
    assert paper.title == "Graph neural networks: a review"
    assert paper.engines == ["openalex", "crossref"]


def test_a_title_join_reads_the_authors_of_every_record_already_joined() -> None:
    """The best-ranked record lists no authors; the one its DOI joins does: a third record of
    the same title and year by other authors is another paper."""
    title = "Attention Is All You Need"
    lists = {
        "a": [hit("a", 1, title, "https://a.org/1", published="2017", doi="10.1/att")],
        "b": [hit("b", 1, title, "https://b.org/1", published="2017", doi="10.1/att",
                  authors=("Ashish Vaswani",))],
        "c": [hit("c", 1, title, "https://c.org/1", published="2017",
                  authors=("Alan Turing",))],
    }  # fmt: skip
    assert engines_of(rank(lists, "attention")) == [["a", "b"], ["c"]]


def test_each_identifier_comes_from_the_best_ranked_entry_that_has_one() -> None:
    """Two records joined by their arXiv id name different DOIs: the paper shows the DOI of the
    better-ranked one (papers.py: "One identifier per kind, from the best-ranked entry")."""
    arxiv = {"arxiv": "2101.00001"}
    title = "Graph neural networks"
    lists = {
        "crossref": [hit("crossref", 1, title, "https://a.org/1", doi="10.1/first", ids=arxiv)],
        "openalex": [hit("openalex", 4, title, "https://b.org/2", doi="10.1/second", ids=arxiv)],
    }
    (paper,) = rank(lists)
    assert paper.doi == "10.1/first"
    assert paper.ids["doi"] == "10.1/first"


def test_a_year_before_last_is_no_wish_for_recent_papers() -> None:
    old, new = {"published": "2015-01-01"}, {"published": "2026-01-01"}
    assert all(r.details["freshness"] is None for r in _two(old, new, "graph networks 2024"))
    assert all(r.details["freshness"] is not None for r in _two(old, new, "graph networks 2025"))


def test_a_record_two_papers_claim_by_title_joins_the_same_one_whatever_the_index_names() -> None:
    # Found by hypothesis: a record with only a title and year that matches two papers with
    # different arXiv ids joined the one whose index's name sorts first.
    title = "Attention is all you need"

    def papers(first: str, second: str) -> list[list[str]]:
        lists = {
            first: [
                hit(
                    first,
                    1,
                    title,
                    "https://a.example/1",
                    ids={"arxiv": "1706.03762"},
                    published="2016",
                )
            ],
            second: [
                hit(
                    second,
                    1,
                    title,
                    "https://b.example/1",
                    ids={"arxiv": "1512.03385"},
                    published="2016",
                )
            ],
            "zz_bare": [hit("zz_bare", 1, title, "https://c.example/1", published="2016")],
        }
        named = {first: "x", second: "y", "zz_bare": "bare"}
        return sorted(sorted(named[e] for e in r.engines) for r in rank(lists, title))

    assert papers("aa", "bb") == papers("bb", "aa")
