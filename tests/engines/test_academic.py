"""Academic engines: parsers on the recorded samples in shared/fixtures (Google Scholar, which
has none, on a hand-made page that says so), error bodies, empty answers, and every request
builder (paths, parameters, key placement, year ranges, paging)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.damaged_answers import RECORDED, assert_keeps_contract, damaged, recorded_bodies
from testing.engine_answers import (
    assert_clean,
    assert_read_as_missing,
    edited,
    params_of,
    parse,
    resp,
)
from testing.shared import fixture_bytes
from websearch_mcp.dates import date_from_parts, publication_date
from websearch_mcp.engines.academic._common import names, normalize_doi, title_text
from websearch_mcp.engines.academic.arxiv import ArXiv, search_query
from websearch_mcp.engines.academic.core import Core
from websearch_mcp.engines.academic.crossref import Crossref
from websearch_mcp.engines.academic.dblp import DBLP
from websearch_mcp.engines.academic.europepmc import EuropePMC
from websearch_mcp.engines.academic.google_scholar import GoogleScholar, byline
from websearch_mcp.engines.academic.openalex import OpenAlex, rebuild_abstract
from websearch_mcp.engines.academic.pubmed import PubMed
from websearch_mcp.engines.academic.semantic_scholar import FIELDS, SemanticScholar
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.errors import (
    EngineAuthError,
    EngineBlocked,
    EngineError,
    EngineParseError,
    EngineRateLimited,
)
from websearch_mcp.models import Hit, Query

KEY = "acad-key-5e8c2f9d1a"
ACADEMIC = (
    "arxiv",
    "crossref",
    "openalex",
    "semantic_scholar",
    "pubmed",
    "europepmc",
    "dblp",
    "core",
    "google_scholar",
)
JSON_APIS = ("crossref", "openalex", "semantic_scholar", "pubmed", "europepmc", "dblp", "core")


def assert_paper_clean(hits: list[Hit], engine: str) -> None:
    """What every parser promises, and bare lower-case DOIs and dates of known precision."""
    assert_clean(hits, engine)
    for hit in hits:
        if hit.doi is not None:
            assert hit.doi == hit.doi.lower() and hit.doi.startswith("10.")
        if hit.published is not None:
            assert publication_date(hit.published) == hit.published


# --- registry and declarations --------------------------------------------------------------------


@pytest.mark.parametrize("name", ACADEMIC)
def test_declarations(name: str) -> None:
    cls = ENGINES[name]
    assert cls.name == name and cls.kind == "academic"
    assert cls.base_url.startswith("https://") and not cls.base_url.endswith("/")
    assert cls.needs_key is (name == "core")
    assert cls.default_enabled is (name != "google_scholar")  # scraping Scholar is opt-in
    assert cls.key_env == ("CORE_API_KEYS" if name == "core" else None)
    assert cls.default_timeout > 0 and not cls.returns_score
    cls()


def test_arxiv_and_pubmed_keep_to_their_published_rates() -> None:
    # arXiv's terms of use: one request every three seconds; NCBI: three a second without a key.
    assert ArXiv.rate_limit == 1 / 3
    assert PubMed.rate_limit == 3.0


@pytest.mark.parametrize("name", JSON_APIS)
def test_json_apis_reject_html_with_a_short_message(name: str) -> None:
    with pytest.raises(EngineParseError) as caught:
        parse(ENGINES[name](), "<!DOCTYPE html><p>secret-looking body</p>")
    assert "secret-looking" not in str(caught.value) and len(str(caught.value)) < 100


@pytest.mark.parametrize("name", [n for n in ACADEMIC if n != "core"])
def test_keyless_requests_carry_no_secrets(name: str) -> None:
    req = ENGINES[name]().request(Query("graph neural networks"), None)
    assert req.secrets == () and req.method == "GET"
    assert all("key" not in k.lower() for k in list(req.headers) + list(req.params or {}))


# --- shared helpers -------------------------------------------------------------------------------


def test_publication_date_keeps_the_known_precision() -> None:
    assert publication_date("2022-02-24T15:05:19Z") == "2022-02-24"
    assert publication_date("2004/02/01 00:00") == "2004-02-01"
    assert publication_date("2004 Feb 15") == "2004-02-15"
    assert publication_date("2004 Feb") == "2004-02"
    assert publication_date("2004 Jan-Feb") == "2004-01"
    assert publication_date("2004 Spring") == "2004"
    assert publication_date("2010-10-09T00:00:00") == "2010-10-09"
    assert publication_date("2019") == publication_date(2019) == "2019"
    assert publication_date("2019-02-30") is None
    assert publication_date("") is publication_date(None) is publication_date(True) is None


def test_date_parts_doi_names_and_titles() -> None:
    assert date_from_parts({"date-parts": [[2022, 7, 26]]}) == "2022-07-26"
    assert date_from_parts({"date-parts": [[2022, 7]]}) == "2022-07"
    assert date_from_parts({"date-parts": [[2022]]}) == "2022"
    assert date_from_parts({"date-parts": [[None]]}) is None
    assert date_from_parts({"date-time": "2022"}) is None
    assert normalize_doi("https://doi.org/10.7717/PeerJ.4375") == "10.7717/peerj.4375"
    assert normalize_doi("http://dx.doi.org/10.1038/227680a0") == "10.1038/227680a0"
    assert normalize_doi("doi:10.1000/XYZ") == "10.1000/xyz"
    sici = "10.1002/(sici)1097-0134(20000515)39:3<216::aid-prot40>3.0.co;2-#"
    linked = "https://doi.org/10.1002/%28SICI%291097-0134%2820000515%2939:3%3C216::AID-PROT40"
    linked += "%3E3.0.CO;2-%23"
    assert normalize_doi(linked) == normalize_doi(sici) == sici
    assert normalize_doi("10.1103/PhysRevD.60.1 10.1103/PhysRevD.61.9") == "10.1103/physrevd.60.1"
    assert normalize_doi("not a doi") is None and normalize_doi(None) is None
    assert names([" Ann  Lee ", "", None, "Ann Lee", "Bo"]) == ("Ann Lee", "Bo")
    assert title_text("A title.") == "A title" and title_text("Wait...") == "Wait..."


# --- arXiv ----------------------------------------------------------------------------------------


def test_arxiv_recorded_search() -> None:
    hits = parse(ArXiv(), fixture_bytes("arxiv/search_testing_m10.xml"))
    assert len(hits) == 10
    assert_paper_clean(hits, "arxiv")
    first = hits[0]
    assert first.title == (
        "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    )
    assert first.url == "https://arxiv.org/abs/2202.12139"  # version dropped
    assert first.pdf_url == "https://arxiv.org/pdf/2202.12139v1"
    assert first.published == "2022-02-24"
    assert first.authors == ("Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker")
    assert first.doi == "10.1109/icstw55395.2022.00035"
    assert first.venue is not None and first.venue.startswith("Artificial Intelligence in Software")
    assert first.snippet.startswith("Deep Learning (DL) has revolutionized the capabilities")
    assert hits[1].authors == (
        "Aurora Ramírez",
        "Mario Berrios",
        "José Raúl Romero",
        "Robert Feldt",
    )
    assert hits[4].title == "ChatGPT and Software Testing Education: Promises & Perils"
    survey = hits[6]
    assert survey.url == "https://arxiv.org/abs/2503.05378"
    assert survey.doi is None and survey.venue is None


def test_arxiv_empty_feed() -> None:
    assert parse(ArXiv(), fixture_bytes("arxiv/empty_results.xml")) == []


@pytest.mark.parametrize("status", [400, 200])
def test_arxiv_error_entry_is_an_error_whatever_the_status(status: int) -> None:
    with pytest.raises(EngineError, match="incorrect id format for abc") as caught:
        parse(ArXiv(), fixture_bytes("arxiv/error_bad_id_400.xml"), status)
    assert type(caught.value) is EngineError


def test_arxiv_leaves_out_stop_words_in_any_case() -> None:
    assert search_query(Query("The Theory OF everything")) == "all:Theory AND all:everything"


def test_arxiv_drops_a_version_suffix_of_several_digits() -> None:
    body = fixture_bytes("arxiv/search_testing_m10.xml").replace(
        b"https://arxiv.org/abs/2202.12139v1", b"https://arxiv.org/abs/2202.12139v12"
    )
    assert parse(ArXiv(), body)[0].url == "https://arxiv.org/abs/2202.12139"


def test_arxiv_abstract_pages_are_https_whatever_the_feed_links() -> None:
    body = fixture_bytes("arxiv/search_testing_m10.xml").replace(
        b'href="https://arxiv.org/abs/2202.12139v1"', b'href="http://arxiv.org/abs/2202.12139v1"'
    )
    assert parse(ArXiv(), body)[0].url == "https://arxiv.org/abs/2202.12139"


def test_arxiv_feed_declaring_entities_is_refused_without_expanding_them() -> None:
    # Declared entities may grow a feed a hundredfold (expat's bound); arXiv declares none.
    body = fixture_bytes("arxiv/search_testing_m10.xml").replace(
        b"<feed ", b'<!DOCTYPE feed [<!ENTITY t "Testing">]><feed ', 1
    )
    body = body.replace(b"Microcontroller Based Testing", b"Microcontroller Based &t;")
    with pytest.raises(EngineParseError, match="not XML"):
        parse(ArXiv(), body)


def test_arxiv_paper_titled_error_is_a_result() -> None:
    body = fixture_bytes("arxiv/search_testing_m10.xml").replace(
        b"<title>Microcontroller Based Testing of Digital IP-Core</title>", b"<title>Error</title>"
    )
    hits = parse(ArXiv(), body)
    assert len(hits) == 10 and hits[7].title == "Error"


def test_arxiv_links_are_http_links_a_parser_reads() -> None:
    # As every engine's: a link no URL parser reads (it failed the SearXNG-compatible answer)
    # leaves the paper out, and a PDF link that is no http(s) link is no PDF link.
    body = fixture_bytes("arxiv/search_testing_m10.xml")
    body = body.replace(b"http://arxiv.org/abs/2202.12139v1", b"http://[fe80::1/abs/2202.12139")
    body = body.replace(b"https://arxiv.org/abs/2202.12139v1", b"http://[fe80::1/abs/2202.12139")
    body = body.replace(b"https://arxiv.org/pdf/2405.13786v1", b"javascript:alert(1)//")
    hits = parse(ArXiv(), body)
    assert len(hits) == 9 and all("fe80" not in h.url for h in hits)
    assert hits[0].url == "https://arxiv.org/abs/2405.13786" and hits[0].pdf_url is None


def test_arxiv_rejects_non_feeds() -> None:
    with pytest.raises(EngineParseError):
        parse(ArXiv(), "<html><body>not atom</body>")
    with pytest.raises(EngineParseError):
        parse(ArXiv(), "<rss><channel/></rss>")


def test_arxiv_entry_without_a_web_address_is_skipped() -> None:
    # An entry cut short of its id and links names no page: no hit with an empty address.
    feed = fixture_bytes("arxiv/search_testing_m10.xml")
    body = feed.replace(b"<id>http://arxiv.org/abs/2202.12139v1</id>", b"", 1)
    body = body.replace(b'<link href="https://arxiv.org/abs/2202.12139v1" rel="alternate"', b"<x")
    body = body.replace(b"https://arxiv.org/pdf/1202.4527v1", b"javascript:alert(1)")
    hits = parse(ArXiv(), body)
    assert len(hits) == 9
    assert_paper_clean(hits, "arxiv")
    assert hits[0].title == parse(ArXiv(), feed)[1].title
    assert all(hit.pdf_url is None or hit.pdf_url.startswith("https://") for hit in hits)
    assert [hit.pdf_url for hit in hits].count(None) == 1


@pytest.mark.parametrize("encoding", ["WTF-8", "rot13", "utf-7", "idna"])
def test_arxiv_feed_in_an_encoding_python_cannot_read_is_a_parse_error(encoding: str) -> None:
    body = fixture_bytes("arxiv/search_testing_m10.xml").replace(
        b"encoding='UTF-8'", f"encoding='{encoding}'".encode(), 1
    )
    with pytest.raises(EngineParseError, match="not XML"):
        parse(ArXiv(), body)


def test_arxiv_request() -> None:
    req = ArXiv().request(Query("testing of deep learning models", max_results=10, page=3), None)
    assert (req.method, req.path) == ("GET", "/api/query")
    assert req.params == {
        "search_query": "all:testing AND all:deep AND all:learning AND all:models",
        "start": 20,
        "max_results": 10,
        "sortBy": "relevance",
        "sortOrder": "descending",
    }


def test_arxiv_year_range_is_a_submitted_date_window() -> None:
    both = search_query(Query("transformers", year_from=2019, year_to=2021))
    assert both == "all:transformers AND submittedDate:[201901010000 TO 202112312359]"
    since = search_query(Query("transformers", year_from=2023))
    assert since.endswith("submittedDate:[202301010000 TO 999912312359]")
    until = search_query(Query("transformers", year_to=2000))
    assert until.endswith("submittedDate:[199101010000 TO 200012312359]")
    assert search_query(Query("the of")) == "all:the AND all:of"  # only stop words: keep them
    # "and" required in every field would miss papers that never write it.
    assert search_query(Query("cats and dogs")) == "all:cats AND all:dogs"


# --- Crossref -------------------------------------------------------------------------------------


def test_crossref_recorded_search() -> None:
    hits = parse(Crossref(), fixture_bytes("crossref/works_query_ecology_rows2.json"))
    assert len(hits) == 2
    assert_paper_clean(hits, "crossref")
    first, second = hits
    assert first.title == "Communicating Ecology"  # `title` is a list
    assert first.url == "https://doi.org/10.1093/obo/9780199830060-0238"
    assert first.doi == "10.1093/obo/9780199830060-0238"
    assert first.venue == "Ecology"  # `container-title` is a list too
    assert first.published == "2022-07-26"
    assert first.authors == ()
    assert first.citations == 1
    assert first.snippet.startswith("Communication is perhaps the most important")  # JATS <p> gone
    assert second.authors == ("André Kessler",)
    assert second.published == "2012-05-23" and second.citations == 0
    assert second.snippet.startswith("“Ours is a world of sights and sounds.")


def test_crossref_date_parts_past_any_calendar_are_no_date() -> None:
    # Numbers past what a C long holds, and 1e400 (infinity to Python's json), date nothing.
    assert date_from_parts({"date-parts": [[10**20, 1, 1]]}) is None
    assert date_from_parts({"date-parts": [[float("inf")]]}) is None
    data = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    first, second = data["message"]["items"]
    first["published-print"] = first["published"] = {"date-parts": [[2**70, 7, 26]]}
    second["published"] = {"date-parts": [[2012, 2**70]]}
    body = json.dumps(data).replace("2012, " + str(2**70), "2012, 1e400")
    hits = parse(Crossref(), body)
    assert len(hits) == 2
    assert_paper_clean(hits, "crossref")


def test_crossref_validation_failure() -> None:
    with pytest.raises(EngineError, match="does not support field query parameters"):
        parse(Crossref(), fixture_bytes("crossref/error_400_validation.json"), 400)


def test_crossref_jats_abstract_partial_dates_and_organisations() -> None:
    item = {
        "DOI": "10.5555/ABC",
        "title": ["  Graph\n neural   networks "],
        "abstract": "<jats:title>Abstract</jats:title><jats:p>We <jats:italic>study</jats:italic>"
        " graphs &amp; nets of CO<jats:sub>2</jats:sub> in <jats:italic>E. coli</jats:italic>."
        "</jats:p>",
        "author": [{"name": "The GNN Consortium"}, {"family": "Solo"}],
        "issued": {"date-parts": [[2019]]},
        "container-title": [],
    }
    body = {"status": "ok", "message": {"items": [item, {"title": []}]}}
    [hit] = parse(Crossref(), json.dumps(body))
    assert hit.title == "Graph neural networks"
    assert hit.url == "https://doi.org/10.5555/abc"  # built from the DOI
    # Inline tags are dropped without a space, as inside words; block tags leave one.
    assert hit.snippet == "We study graphs & nets of CO2 in E. coli."
    assert hit.authors == ("The GNN Consortium", "Solo")
    assert hit.published == "2019" and hit.venue is None
    assert parse(Crossref(), json.dumps({"status": "ok", "message": {"items": []}})) == []
    summary = {**item, "abstract": "<jats:title>Summary</jats:title><jats:p>Findings.</jats:p>"}
    [labelled] = parse(Crossref(), json.dumps({"status": "ok", "message": {"items": [summary]}}))
    assert labelled.snippet == "Findings."


def test_crossref_request() -> None:
    req = Crossref().request(Query("ecology", max_results=20, page=2, year_from=2010), None)
    assert (req.method, req.path) == ("GET", "/works")
    params = dict(req.params or {})
    assert params.pop("select").startswith("DOI,URL,title,author,container-title,abstract")
    assert params == {"query": "ecology", "rows": 20, "offset": 20, "filter": "from-pub-date:2010"}
    both = params_of(Crossref().request(Query("x", year_from=2019, year_to=2021), None))
    assert both["filter"] == "from-pub-date:2019,until-pub-date:2021"
    assert "filter" not in params_of(Crossref().request(Query("x"), None))
    assert "offset" not in params_of(Crossref().request(Query("x"), None))


# --- OpenAlex -------------------------------------------------------------------------------------


def test_openalex_recorded_work() -> None:
    # The recorded single work, placed in the list envelope that /works?search= answers with.
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    [hit] = parse(OpenAlex(), json.dumps({"meta": {"count": 1}, "results": [work]}))
    assert_paper_clean([hit], "openalex")
    assert hit.title == (
        "The state of OA: a large-scale analysis of the prevalence and impact of Open Access"
        " articles"
    )
    assert hit.url == "https://doi.org/10.7717/peerj.4375"
    assert hit.doi == "10.7717/peerj.4375"
    assert hit.published == "2018-02-13"
    assert len(hit.authors) == 9
    assert hit.authors[:3] == ("Heather Piwowar", "Jason Priem", "Vincent Larivière")
    assert hit.venue == "PeerJ"
    assert hit.citations == 962
    assert hit.pdf_url == "https://peerj.com/articles/4375.pdf"
    assert hit.snippet.startswith("Despite growing interest in Open Access (OA) to scholarly")
    assert hit.ids == {"pmid": "29456894"}  # from ids.pmid, a PubMed link


def test_openalex_documented_list_envelope() -> None:
    hits = parse(OpenAlex(), fixture_bytes("openalex/docs_works_list_envelope_abridged.json"))
    assert_paper_clean(hits, "openalex")
    assert [(h.title, h.url, h.doi) for h in hits] == [
        (
            "PROTEIN MEASUREMENT WITH THE FOLIN PHENOL REAGENT",
            "https://doi.org/10.1016/s0021-9258(19)52451-6",
            "10.1016/s0021-9258(19)52451-6",
        ),
        (
            "Cleavage of Structural Proteins during the Assembly of the Head of Bacteriophage T4",
            "https://doi.org/10.1038/227680a0",
            "10.1038/227680a0",
        ),
    ]
    assert all(h.snippet == "" and h.published is None for h in hits)


def test_openalex_abstract_and_open_access_fallbacks() -> None:
    assert rebuild_abstract({"world": [1], "Hello": [0], "again": [3], "hello": [2]}) == (
        "Hello world hello again"
    )
    assert rebuild_abstract(None) == ""
    work = {
        "id": "https://openalex.org/W1",
        "display_name": "No DOI",
        "publication_year": 2021,
        "primary_location": {"landing_page_url": None, "source": None},
        "open_access": {"is_oa": True, "oa_url": "https://repo.example/paper"},
    }
    [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
    assert hit.url == "https://openalex.org/W1"
    assert hit.pdf_url is None  # an open-access landing page is no PDF
    # The best open copy's PDF comes before the open-access landing page.
    best = {**work, "best_oa_location": {"pdf_url": "https://repo.example/paper.pdf"}}
    [hit] = parse(OpenAlex(), json.dumps({"results": [best]}))
    assert hit.pdf_url == "https://repo.example/paper.pdf"
    assert hit.published == "2021" and hit.doi is None and hit.venue is None
    assert parse(OpenAlex(), json.dumps({"meta": {"count": 0}, "results": []})) == []


def test_openalex_pubmed_central_pdf_link_without_a_slash_is_the_pdf() -> None:
    """PubMed Central's PDF link ends `/pdf` with no slash after it: the open-access link was
    read as a landing page and the work had no `pdf_url`."""
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    # The recorded work's PubMed Central copy, as the only open-access link.
    landing = next(
        location["landing_page_url"]
        for location in work["locations"]
        if location["source"]["display_name"] == "PubMed Central"
    )
    work["primary_location"]["pdf_url"] = work["best_oa_location"] = None
    upper = "https://repo.example/bitstream/123/Paper.PDF"  # an extension in capitals
    for oa_url, pdf_url in ((f"{landing}/pdf", f"{landing}/pdf"), (landing, None), (upper, upper)):
        work["open_access"]["oa_url"] = oa_url
        [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
        assert hit.pdf_url == pdf_url


def test_openalex_error_body() -> None:
    body = {"error": "Invalid query parameters error.", "message": "'foo' is not a valid field"}
    with pytest.raises(EngineError, match="not a valid field"):
        parse(OpenAlex(), json.dumps(body), 400)


def test_openalex_request() -> None:
    req = OpenAlex().request(Query("open access", max_results=25, page=2), None)
    assert (req.method, req.path) == ("GET", "/works")
    params = dict(req.params or {})
    assert "abstract_inverted_index" in params.pop("select")
    assert params == {"search": "open access", "per-page": 25, "page": 2}

    def years(**kw: Any) -> str | None:
        return params_of(OpenAlex().request(Query("x", **kw), None)).get("filter")

    assert years(year_from=2019, year_to=2021) == "publication_year:2019-2021"
    assert years(year_from=2019) == "publication_year:>2018"
    assert years(year_to=2021) == "publication_year:<2022"
    assert years() is None


# --- Semantic Scholar -----------------------------------------------------------------------------


def test_semantic_scholar_recorded_titles_only_search() -> None:
    hits = parse(SemanticScholar(), fixture_bytes("semanticscholar/paper_search_turing_title.json"))
    assert len(hits) == 100
    assert_paper_clean(hits, "semantic_scholar")
    assert hits[0].title.startswith("Using DeepSpeed and Megatron to Train Megatron-Turing NLG")
    # Asked for titles only: the URL is built from the paper id.
    assert hits[0].url == (
        "https://www.semanticscholar.org/paper/7cbc2a7843411a1768ab762930707af0a3c33a19"
    )
    assert hits[4].title == "Neural Turing Machines"
    # Without the period MEDLINE ends its titles with, as PubMed's and Europe PMC's are.
    assert hits[99].title == "Turing patterns in multiplex networks"
    # A title S2 keeps with Google Scholar's format tag is the paper's title alone.
    analog = "Neural Networks And Analog Computation Beyond The Turing Limit"
    assert analog in {h.title for h in hits}
    assert not any(h.title.startswith("[") for h in hits)


def test_semantic_scholar_empty_search_has_no_data_key() -> None:
    assert parse(SemanticScholar(), fixture_bytes("semanticscholar/paper_search_empty.json")) == []


def test_semantic_scholar_404_error_body() -> None:
    with pytest.raises(EngineError, match="Title match not found"):
        parse(
            SemanticScholar(),
            fixture_bytes("semanticscholar/paper_search_match_404_not_found.json"),
            404,
        )


def test_semantic_scholar_page_past_the_results_has_no_papers() -> None:
    # S2's answer to an offset past the query's last result, within its first 1,000.
    body = '{"error": "Requested data for this limit and/or offset is not available"}'
    assert parse(SemanticScholar(), body, 400, query=Query("rare topic", page=2)) == []
    with pytest.raises(EngineError, match="not available"):  # asked of the first page
        parse(SemanticScholar(), body, 400, query=Query("rare topic"))
    with pytest.raises(EngineError, match="Unrecognized"):
        parse(SemanticScholar(), '{"error": "Unrecognized field"}', 400, query=Query("x", page=2))


@pytest.mark.parametrize(
    ("years", "published"),
    [
        ({"year_from": 2020, "year_to": 2020}, "2020"),  # the year S2 matched it on
        ({}, "2019-12-30"),
        ({"year_from": 2019}, "2019-12-30"),
    ],
)
def test_semantic_scholar_dates_a_paper_by_its_year_when_only_that_is_in_the_years(
    years: dict[str, int], published: str
) -> None:
    paper = {
        "paperId": "abc",
        "title": "Online first",
        "year": 2020,
        "publicationDate": "2019-12-30",
    }
    query = Query("x", **years)  # type: ignore[arg-type]
    [hit] = parse(SemanticScholar(), json.dumps({"data": [paper]}), query=query)
    assert hit.published == published


def test_semantic_scholar_full_fields() -> None:
    paper = {
        "paperId": "abc",
        "url": "https://www.semanticscholar.org/paper/abc",
        "title": "Attention Is All You Need",
        "abstract": "The dominant sequence transduction models...",
        "year": 2017,
        "publicationDate": None,
        "authors": [{"authorId": "1", "name": "Ashish Vaswani"}, {"name": "Noam Shazeer"}],
        "venue": "Neural Information Processing Systems",
        "externalIds": {"DOI": "10.48550/ARXIV.1706.03762", "ArXiv": "1706.03762"},
        "citationCount": 100000,
        "openAccessPdf": {"url": "https://arxiv.org/pdf/1706.03762", "status": "GREEN"},
    }
    no_pdf = {"paperId": "def", "title": "Second", "openAccessPdf": None, "externalIds": None}
    hits = parse(SemanticScholar(), json.dumps({"total": 2, "offset": 0, "data": [paper, no_pdf]}))
    assert_paper_clean(hits, "semantic_scholar")
    first = hits[0]
    assert first.published == "2017"
    assert first.authors == ("Ashish Vaswani", "Noam Shazeer")
    assert first.doi == "10.48550/arxiv.1706.03762"
    assert first.venue == "Neural Information Processing Systems"
    assert first.citations == 100000
    assert first.pdf_url == "https://arxiv.org/pdf/1706.03762"
    assert hits[1].pdf_url is None and hits[1].doi is None


def test_semantic_scholar_abstracts_are_plain_text() -> None:
    abstract = "We prove the bound holds when n<k and k>2 for all graphs &amp; trees."
    paper = {"paperId": "abc", "title": "Bounds <i> on graphs", "abstract": abstract}
    (hit,) = parse(SemanticScholar(), json.dumps({"data": [paper]}))
    assert (hit.title, hit.snippet) == ("Bounds <i> on graphs", abstract)


def test_semantic_scholar_request_with_and_without_key() -> None:
    req = SemanticScholar().request(Query("turing", max_results=20, page=2), KEY)
    assert (req.method, req.path) == ("GET", "/graph/v1/paper/search")
    assert req.params == {"query": "turing", "fields": FIELDS, "limit": 20, "offset": 20}
    assert req.headers["x-api-key"] == KEY
    assert req.secrets == (KEY,)
    assert KEY not in repr(req) and KEY not in str(req.params)
    keyless = SemanticScholar().request(Query("turing"), None)
    assert "x-api-key" not in keyless.headers and keyless.secrets == ()

    def years(**kw: Any) -> str | None:
        return params_of(SemanticScholar().request(Query("x", **kw), None)).get("year")

    assert years(year_from=2019, year_to=2021) == "2019-2021"
    assert years(year_from=2019) == "2019-"
    assert years(year_to=2021) == "-2021"
    assert years(year_from=2020, year_to=2020) == "2020"
    assert years() is None


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("COVID-19 vaccine efficacy", "COVID 19 vaccine efficacy"),
        ("self‐attention in GPT-4", "self attention in GPT 4"),
        ("graph - neural -networks", "graph - neural -networks"),  # no hyphen inside a word
    ],
)
def test_semantic_scholar_is_sent_hyphenated_words_apart(text: str, sent: str) -> None:
    # Its search documentation: "Hyphenated query terms yield no matches (replace it with space
    # to find matches)".
    assert params_of(SemanticScholar().request(Query(text), None))["query"] == sent


def test_openalex_sends_a_configured_key_and_no_key_without_one() -> None:
    req = OpenAlex().request(Query("graph neural networks"), KEY)
    assert params_of(req)["api_key"] == KEY
    assert req.secrets == (KEY,) and KEY not in repr(req)
    keyless = OpenAlex().request(Query("graph neural networks"), None)
    assert "api_key" not in params_of(keyless) and keyless.secrets == ()


# --- PubMed ---------------------------------------------------------------------------------------


def test_pubmed_search_request() -> None:
    req = PubMed().request(Query("newborn blood pressure", max_results=20, page=2), KEY)
    assert (req.method, req.path) == ("GET", "/entrez/eutils/esearch.fcgi")
    assert req.params == {
        "db": "pubmed",
        "term": "newborn blood pressure",
        "retmode": "json",
        "retmax": 20,
        "sort": "relevance",
        "retstart": 20,
        "api_key": KEY,
    }
    assert req.secrets == (KEY,) and KEY not in repr(req)
    assert all(KEY not in v for v in req.headers.values())
    keyless = PubMed().request(Query("x"), None)
    assert "api_key" not in params_of(keyless) and keyless.secrets == ()


def test_pubmed_year_range_uses_publication_dates() -> None:
    def dates(**kw: Any) -> tuple[Any, ...]:
        params = params_of(PubMed().request(Query("x", **kw), None))
        return params.get("datetype"), params.get("mindate"), params.get("maxdate")

    assert dates(year_from=2001, year_to=2005) == ("pdat", 2001, 2005)
    assert dates(year_from=2001) == ("pdat", 2001, 3000)  # NCBI needs both ends
    assert dates(year_to=2005) == ("pdat", 1800, 2005)
    assert dates() == (None, None, None)


def test_pubmed_follow_up_asks_for_the_summaries_of_the_found_ids() -> None:
    esearch = resp(fixture_bytes("pubmed/esearch_mdat_range_usehistory.json"))
    req = PubMed().follow_up(esearch, Query("x", max_results=20), KEY)
    assert req is not None
    assert (req.method, req.path) == ("GET", "/entrez/eutils/esummary.fcgi")
    ids = (req.params or {})["id"].split(",")
    assert len(ids) == 20 and ids[0] == "25039505" and ids[-1] == "25039486"
    assert req.params == {"db": "pubmed", "id": ",".join(ids), "retmode": "json", "api_key": KEY}
    assert req.secrets == (KEY,)
    keyless = PubMed().follow_up(esearch, Query("x", max_results=20), None)
    assert keyless is not None and "api_key" not in params_of(keyless) and keyless.secrets == ()
    # An answer listing more ids than were asked for (`retmax`): the first of them only.
    fewer = PubMed().follow_up(esearch, Query("x", max_results=5), None)
    assert fewer is not None and params_of(fewer)["id"] == ",".join(ids[:5])
    many = {"esearchresult": {"idlist": [str(n) for n in range(1, 100_001)]}}
    flood = PubMed().follow_up(resp(json.dumps(many)), Query("x", max_results=50), None)
    assert flood is not None and params_of(flood)["id"] == ",".join(map(str, range(1, 51)))


def test_pubmed_follow_up_stops_at_the_summary_and_on_nothing_to_summarise() -> None:
    summary = resp(fixture_bytes("pubmed/esummary_pubmed_14760269.json"))
    assert PubMed().follow_up(summary, Query("x"), None) is None
    empty = {"esearchresult": {"count": "0", "idlist": []}}
    assert PubMed().follow_up(resp(json.dumps(empty)), Query("x"), None) is None
    error = {"esearchresult": {"ERROR": "Invalid query"}}
    assert PubMed().follow_up(resp(json.dumps(error)), Query("x"), None) is None
    assert PubMed().follow_up(resp("busy", 503), Query("x"), None) is None
    assert PubMed().follow_up(resp("<html>"), Query("x"), None) is None


def test_pubmed_recorded_summary() -> None:
    [hit] = parse(PubMed(), fixture_bytes("pubmed/esummary_pubmed_14760269.json"))
    assert_paper_clean([hit], "pubmed")
    assert hit.title == "Maternal age and other predictors of newborn blood pressure"
    assert hit.url == "https://pubmed.ncbi.nlm.nih.gov/14760269/"
    assert hit.published == "2004-02"  # "2004 Feb"
    assert hit.authors == (
        "Gillman MW",
        "Rich-Edwards JW",
        "Rifas-Shiman SL",
        "Lieberman ES",
        "Kleinman KP",
        "Lipshultz SE",
    )
    assert hit.doi == "10.1016/j.jpeds.2003.10.064"
    assert hit.venue == "The Journal of pediatrics"
    assert hit.citations == 123
    assert hit.snippet == ""


def test_pubmed_empty_search_and_errors() -> None:
    empty = {"esearchresult": {"count": "0", "retmax": "0", "idlist": []}}
    assert parse(PubMed(), json.dumps(empty)) == []
    with pytest.raises(EngineError, match="Invalid query") as caught:
        parse(PubMed(), json.dumps({"esearchresult": {"ERROR": "Invalid query"}}))
    assert type(caught.value) is EngineError
    limit = {"error": "API rate limit exceeded", "api-key": "192.0.2.1", "count": "4"}
    with pytest.raises(EngineRateLimited):
        parse(PubMed(), json.dumps(limit), 429)
    # An esearch answer that still has ids means the summary step did not happen.
    with pytest.raises(EngineError, match="summary"):
        parse(PubMed(), fixture_bytes("pubmed/esearch_mdat_range_usehistory.json"))


@pytest.mark.parametrize("ids", [5, 1.5, True, "14760269"])
def test_pubmed_id_lists_that_are_not_lists_are_a_parse_error(ids: Any) -> None:
    esearch = json.loads(fixture_bytes("pubmed/esearch_mdat_range_usehistory.json"))
    esearch["esearchresult"]["idlist"] = ids
    with pytest.raises(EngineParseError, match="'idlist' that is not a list"):
        PubMed().follow_up(resp(json.dumps(esearch)), Query("x"), None)
    with pytest.raises(EngineParseError, match="'idlist' that is not a list"):
        parse(PubMed(), json.dumps(esearch))
    summary = json.loads(fixture_bytes("pubmed/esummary_pubmed_14760269.json"))
    summary["result"]["uids"] = ids
    with pytest.raises(EngineParseError, match="'uids' that is not a list"):
        parse(PubMed(), json.dumps(summary))


@pytest.mark.parametrize(
    ("dates", "years", "published"),
    [
        # The issue's date when it is in the asked years, the first of them included.
        ({"epubdate": "2005 Jan 3"}, {"year_from": 2004}, "2004-02"),
        # Neither date in them: the issue's still.
        ({"epubdate": "2003 Dec 15"}, {"year_from": 2005}, "2004-02"),
        # No issue date: the sort date, else the electronic one.
        ({"pubdate": ""}, {}, "2004-02-01"),
        ({"pubdate": "", "sortpubdate": "", "epubdate": "2003 Dec 15"}, {}, "2003-12-15"),
        (
            {"pubdate": "", "sortpubdate": "", "epubdate": "2003 Dec 15"},
            {"year_to": 2003},
            "2003-12-15",
        ),
    ],
)
def test_pubmed_dates_a_paper_by_its_issue_unless_only_its_electronic_date_is_in_the_years(
    dates: dict[str, str], years: dict[str, int], published: str
) -> None:
    summary = json.loads(fixture_bytes("pubmed/esummary_pubmed_14760269.json"))
    summary["result"]["14760269"].update(dates)  # pubdate "2004 Feb", no epubdate
    [hit] = parse(PubMed(), json.dumps(summary), query=Query("x", **years))  # type: ignore[arg-type]
    assert hit.published == published


def test_pubmed_answers_without_id_lists_have_no_papers() -> None:
    assert parse(PubMed(), json.dumps({"esearchresult": {"count": "0"}})) == []
    assert PubMed().follow_up(resp(json.dumps({"esearchresult": {}})), Query("x"), None) is None
    assert parse(PubMed(), json.dumps({"result": {}})) == []


def test_pubmed_summary_skips_bad_uids_and_keeps_order() -> None:
    summary = json.loads(fixture_bytes("pubmed/esummary_pubmed_14760269.json"))
    result = summary["result"]
    result["uids"] = ["999", "14760269"]
    result["999"] = {"uid": "999", "error": "cannot get document summary"}
    [hit] = parse(PubMed(), json.dumps(summary))
    assert hit.rank == 1 and hit.url.endswith("/14760269/")


# --- Europe PMC -----------------------------------------------------------------------------------


def test_europepmc_recorded_search() -> None:
    hits = parse(EuropePMC(), fixture_bytes("europepmc/search_cancer_lite.json"))
    assert len(hits) == 25
    assert_paper_clean(hits, "europepmc")
    first = hits[0]
    assert first.title == (
        "Abscopal response in a patient with fibrolamellar hepatocellular carcinoma following"
        " radiotherapy"
    )
    assert first.url == "https://europepmc.org/article/MED/39709209"
    assert first.ids == {"pmid": "39709209"}
    assert sum(bool(h.ids.get("pmid")) for h in hits) == 25
    assert first.doi == "10.1016/s0140-6736(24)02600-x"
    assert first.authors == ("Schoenfeld JD", "Haas-Kogan DA", "O'Neill AF")
    assert first.venue == "Lancet"
    assert first.published == "2025-12-01"
    assert first.citations == 0
    assert first.pdf_url is None  # not open access
    assert hits[1].authors == ()  # an erratum without authors
    open_access = hits[5]
    assert open_access.doi == "10.1002/hpja.70059"
    assert open_access.pdf_url == "https://europepmc.org/articles/PMC12120539?pdf=render"
    assert sum(h.pdf_url is not None for h in hits) == 8
    assert sum(h.doi is None for h in hits) == 1


def test_europepmc_shows_the_issue_year_it_matched_when_the_paper_was_online_the_year_before() -> (
    None
):
    """Europe PMC matches a year range on `pubYear` (the issue's year); a paper first published
    online late the year before keeps its first date unless only the issue's year is asked, so
    the fused list, checked again on the date shown, keeps what the index chose."""
    recorded = fixture_bytes("europepmc/search_cancer_lite.json")
    body = edited(recorded, ("resultList", "result", 0, "firstPublicationDate"), "2024-12-10")
    asked = Query("cancer", year_from=2025, year_to=2025)
    assert parse(EuropePMC(), body, query=asked)[0].published == "2025"
    assert parse(EuropePMC(), body)[0].published == "2024-12-10"
    assert parse(EuropePMC(), body, query=Query("cancer", year_from=2024))[0].published == (
        "2024-12-10"
    )


def test_europepmc_no_results() -> None:
    assert parse(EuropePMC(), fixture_bytes("europepmc/search_no_results.json")) == []


def test_europepmc_core_result_fields() -> None:
    item = {
        "id": "PPR1",
        "source": "PPR",
        "title": "A <i>preprint</i>.",
        "authorString": "Doe J.",
        "abstractText": "<h4>Background</h4>Some &amp; more.",
        "journalInfo": {"journal": {"title": "Journal of Things"}},
        "pubYear": "2024",
        "fullTextUrlList": {
            "fullTextUrl": [
                {
                    "availability": "Open access",
                    "documentStyle": "html",
                    "url": "https://oa.example/a.html",
                },
                {
                    "availability": "Subscription required",
                    "documentStyle": "pdf",
                    "url": "https://paywall.example/a.pdf",
                },
                {
                    "availability": "Open access",
                    "documentStyle": "pdf",
                    "url": "https://oa.example/a.pdf",
                },
            ]
        },
    }
    [hit] = parse(EuropePMC(), json.dumps({"hitCount": 1, "resultList": {"result": [item]}}))
    assert hit.title == "A preprint"
    assert hit.url == "https://europepmc.org/article/PPR/PPR1"
    assert hit.snippet == "Background Some & more."
    assert hit.authors == ("Doe J",)
    assert hit.venue == "Journal of Things"
    assert hit.published == "2024"
    assert hit.pdf_url == "https://oa.example/a.pdf"


def test_europepmc_paging_asks_for_all_pages_and_keeps_the_last() -> None:
    query = Query("cancer", max_results=10, page=2)
    req = EuropePMC().request(query, None)
    assert params_of(req)["pageSize"] == 20
    hits = parse(EuropePMC(), fixture_bytes("europepmc/search_cancer_lite.json"), query=query)
    everything = parse(EuropePMC(), fixture_bytes("europepmc/search_cancer_lite.json"))
    assert [h.url for h in hits] == [h.url for h in everything[10:20]]
    assert [h.rank for h in hits] == list(range(1, 11))


def test_europepmc_request() -> None:
    req = EuropePMC().request(Query("cancer", max_results=25), None)
    assert (req.method, req.path) == ("GET", "/europepmc/webservices/rest/search")
    assert req.params == {
        "query": "cancer",
        "format": "json",
        "resultType": "core",
        "pageSize": 25,
    }
    ranged = EuropePMC().request(Query("cancer", year_from=2019, year_to=2021), None)
    assert params_of(ranged)["query"] == "(cancer) AND (PUB_YEAR:[2019 TO 2021])"
    since = EuropePMC().request(Query("cancer", year_from=2019), None)
    assert params_of(since)["query"] == "(cancer) AND (PUB_YEAR:[2019 TO 9999])"
    assert (
        params_of(EuropePMC().request(Query("x", max_results=100, page=50), None))["pageSize"]
        == 1000
    )


# --- dblp -----------------------------------------------------------------------------------------


def test_dblp_recorded_search() -> None:
    [hit] = parse(DBLP(), fixture_bytes("dblp/publ_search_test_star_h1.json"))
    assert_paper_clean([hit], "dblp")
    assert hit.title == (
        "A Test Cost Reduction Method by Test Response and Test Vector Overlapping for"
        " Full-Scan Test Architecture"
    )
    assert hit.url == "https://doi.org/10.1109/ATS.2005.17"  # `ee`, the publisher's page
    assert hit.doi == "10.1109/ats.2005.17"
    assert hit.authors == (
        "Tsuyoshi Shinogi",
        "Hiroyuki Yamada",
        "Terumine Hayashi",
        "Shinji Tsuruoka",
        "Tomohiro Yoshikawa",
    )
    assert hit.venue == "Asian Test Symposium"
    assert hit.published == "2005"


def test_dblp_edited_sample_with_a_single_author_object() -> None:
    # SOURCES.md: this sample was edited by its author to show `authors.author` as an object.
    [hit] = parse(DBLP(), fixture_bytes("dblp/publ_search_single_author_object_EDITED.json"))
    assert hit.authors == ("Tsuyoshi Shinogi",)


def dblp_variant(edit: Any) -> str:
    data = json.loads(fixture_bytes("dblp/publ_search_test_star_h1.json"))
    edit(data["result"]["hits"])
    return json.dumps(data)


def test_dblp_single_hit_object_missing_hits_and_odd_fields() -> None:
    def single(hits: dict[str, Any]) -> None:
        hits["hit"] = hits["hit"][0]  # a lone hit comes as an object

    assert len(parse(DBLP(), dblp_variant(single))) == 1

    def none(hits: dict[str, Any]) -> None:
        hits.clear()
        hits.update({"@total": "0", "@computed": "0", "@sent": "0", "@first": "0"})

    assert parse(DBLP(), dblp_variant(none)) == []

    def odd(hits: dict[str, Any]) -> None:
        info = hits["hit"][0]["info"]
        info["ee"] = ["https://ieeexplore.ieee.org/document/1", "https://doi.org/x"]
        info["venue"] = ["CoRR", "ATS"]
        info["authors"]["author"][0] = {"@pid": "1", "text": "Wei Wang 0001"}
        del info["doi"]

    [hit] = parse(DBLP(), dblp_variant(odd))
    assert hit.url == "https://ieeexplore.ieee.org/document/1"
    assert hit.venue == "CoRR, ATS"
    assert hit.authors[0] == "Wei Wang"  # homonym number dropped
    assert hit.doi is None


def test_dblp_filters_years_itself() -> None:
    body = fixture_bytes("dblp/publ_search_test_star_h1.json")
    assert parse(DBLP(), body, query=Query("x", year_from=2010)) == []
    assert parse(DBLP(), body, query=Query("x", year_to=2004)) == []
    assert len(parse(DBLP(), body, query=Query("x", year_from=2005, year_to=2005))) == 1


def test_dblp_status_error() -> None:
    data = json.loads(fixture_bytes("dblp/publ_search_test_star_h1.json"))
    data["result"]["status"] = {"@code": "400", "text": "Bad Request"}
    with pytest.raises(EngineError, match="Bad Request"):
        parse(DBLP(), json.dumps(data))


def test_dblp_request() -> None:
    req = DBLP().request(Query("test*", max_results=30, page=3), None)
    assert (req.method, req.path) == ("GET", "/search/publ/api")
    assert req.params == {"q": "test*", "format": "json", "h": 30, "f": 60}
    assert "f" not in params_of(DBLP().request(Query("x"), None))


# --- CORE -----------------------------------------------------------------------------------------


def test_core_recorded_search() -> None:
    hits = parse(Core(), fixture_bytes("core/search_works_flutter_limit5.json"))
    assert len(hits) == 5
    assert_paper_clean(hits, "core")
    first = hits[0]
    assert first.title == "A dynamical interpretation of flutter instability in a continuous medium"
    assert first.url == "https://core.ac.uk/works/722934"
    assert first.doi == "10.1016/j.jmps.2006.05.005"
    assert first.published == "2010-10-09"
    assert first.authors.count("Davide Bigoni") == 1  # CORE repeats names
    assert first.authors[0] == "Andrea Piccolroaz"
    assert first.pdf_url is None  # its downloadUrl is an arXiv abstract page
    assert first.snippet.startswith("Flutter instability in an infinite medium")
    second = hits[1]
    assert second.title == (
        "Supersonic flutter analysis of flat composite panels by unified formulation"
    )
    assert second.pdf_url == "https://core.ac.uk/download/143956574.pdf"
    assert second.doi is None
    # Its arXiv id, as for every work here, is what merges it with arXiv's record.
    assert [h.ids for h in hits] == [
        {"arxiv": "1010.1833"},
        {"arxiv": "1312.4233"},
        {"arxiv": "1509.06726"},
        {"arxiv": "1903.03298"},
        {"arxiv": "1708.06987"},
    ]
    assert hits[3].title == "Modeling and Simulation of a Fluttering Cantilever in Channel Flow"


def test_core_empty_and_errors() -> None:
    assert (
        parse(Core(), json.dumps({"totalHits": 0, "limit": 10, "offset": 0, "results": []})) == []
    )
    with pytest.raises(EngineAuthError) as caught:
        parse(Core(), json.dumps({"message": f"Invalid API key {KEY}"}), 401)
    assert KEY not in str(caught.value)
    with pytest.raises(EngineRateLimited):
        parse(Core(), json.dumps({"message": "Rate limit exceeded"}), 429)


def test_core_request() -> None:
    req = Core().request(Query("flutter", max_results=5, page=2, year_from=2010, year_to=2015), KEY)
    assert (req.method, req.path) == ("GET", "/v3/search/works")
    assert req.params == {
        "q": "(flutter) AND yearPublished>=2010 AND yearPublished<=2015",
        "limit": 5,
        "offset": 5,
    }
    assert req.headers["Authorization"] == f"Bearer {KEY}"
    assert req.secrets == (KEY,)
    assert KEY not in repr(req) and KEY not in str(req.params)
    assert Core().request(Query("flutter"), KEY).params == {"q": "flutter", "limit": 10}


# --- Google Scholar -------------------------------------------------------------------------------

# Hand-made from Scholar's result markup (no recorded page exists): `div.gs_r` blocks with a PDF
# side link, `h3.gs_rt a`, the `gs_a` byline, `gs_rs` snippet and a "Cited by" link; plus a
# [CITATION] record without a link.
SCHOLAR_PAGE = """<!DOCTYPE html><html><body><div id="gs_res_ccl_mid">
<div class="gs_r gs_or gs_scl" data-cid="a1"><div class="gs_ggs gs_fl"><div class="gs_ggsd">
<div class="gs_or_ggsm"><a href="https://arxiv.org/pdf/1706.03762">
<span class="gs_ctg2">[PDF]</span> arxiv.org</a></div></div></div>
<div class="gs_ri"><h3 class="gs_rt"><a href="https://proceedings.neurips.cc/paper/7181">Attention
is all you <b>need</b></a></h3>
<div class="gs_a">A Vaswani, N Shazeer, N Parmar… - Advances in neural …, 2017 -
proceedings.neurips.cc</div>
<div class="gs_rs">The dominant sequence transduction models are based on complex recurrent
&hellip;</div>
<div class="gs_fl gs_flb"><a href="javascript:void(0)" class="gs_or_sav">Save</a>
<a href="/scholar?cites=2960712678066186980&amp;as_sdt=2005">Cited by 150,123</a>
<a href="/scholar?q=related:x">Related articles</a></div></div></div>
<div class="gs_r gs_or gs_scl" data-cid="b2"><div class="gs_ri"><h3 class="gs_rt">
<span class="gs_ctu"><span class="gs_ct1">[CITATION]</span></span> A cited-only record</h3>
<div class="gs_a">J Doe - 1999</div></div></div>
<div class="gs_r gs_or gs_scl" data-cid="c3"><div class="gs_ri"><h3 class="gs_rt">
<a href="https://www.nature.com/articles/nature14539">Deep learning</a></h3>
<div class="gs_a">Y LeCun, Y Bengio, G Hinton - nature, 2015 - nature.com</div>
<div class="gs_rs">Deep learning allows computational models…</div></div></div>
</div></body></html>"""


def test_google_scholar_hand_made_page() -> None:
    hits = parse(GoogleScholar(), SCHOLAR_PAGE)
    assert_paper_clean(hits, "google_scholar")
    assert [h.url for h in hits] == [
        "https://proceedings.neurips.cc/paper/7181",
        "https://www.nature.com/articles/nature14539",
    ]
    first = hits[0]
    assert first.title == "Attention is all you need"
    assert first.authors == ("A Vaswani", "N Shazeer", "N Parmar")
    assert first.venue == "Advances in neural …"
    assert first.published == "2017"
    assert first.citations == 150123
    assert first.pdf_url == "https://arxiv.org/pdf/1706.03762"
    assert first.snippet.startswith("The dominant sequence transduction models")
    second = hits[1]
    assert (second.venue, second.published, second.citations) == ("nature", "2015", None)
    assert second.pdf_url is None


def test_google_scholar_byline() -> None:
    assert byline("K He, X Zhang - 2016 - openaccess.thecvf.com") == (
        ("K He", "X Zhang"),
        None,
        "2016",
    )
    assert byline("J Smith - example.com") == (("J Smith",), None, None)
    assert byline("J Smith, A Doe - Nature, 2019 - nature.com") == (
        ("J Smith", "A Doe"),
        "Nature",
        "2019",
    )


def test_google_scholar_captcha_and_empty_pages() -> None:
    captcha = '<html><body><div id="gs_captcha_ccl"><form id="gs_captcha_f"></form></div>'
    with pytest.raises(EngineBlocked):
        parse(GoogleScholar(), captcha)
    with pytest.raises(EngineBlocked):
        GoogleScholar().hits(
            resp("", url="https://www.google.com/sorry/index?continue=x"), Query("q")
        )
    robot = "<html><body><p>Please show you're not a robot</p></body></html>"
    with pytest.raises(EngineBlocked):
        parse(GoogleScholar(), robot)
    none = "<html><body><p>Your search - zzqx - did not match any articles.</p></body></html>"
    assert parse(GoogleScholar(), none) == []
    with pytest.raises(EngineParseError):
        parse(GoogleScholar(), "<html><body><p>elsewhere</p></body></html>")


def test_google_scholar_paper_about_robots_is_not_a_block() -> None:
    page = SCHOLAR_PAGE.replace("Deep learning allows", "Proving you are not a robot allows")
    assert len(parse(GoogleScholar(), page)) == 2


def test_google_scholar_request() -> None:
    req = GoogleScholar().request(Query("transformers", page=2, year_from=2017, year_to=2019), None)
    assert (req.method, req.path) == ("GET", "/scholar")
    assert req.params == {
        "q": "transformers",
        "hl": "en",
        "as_sdt": "0,5",
        "num": 10,
        "start": 10,
        "as_ylo": 2017,
        "as_yhi": 2019,
    }


# --- secrets never leak into reports --------------------------------------------------------------


@pytest.mark.parametrize("name", ["core", "semantic_scholar"])
def test_refused_key_errors_do_not_echo_the_key(name: str) -> None:
    body = json.dumps({"message": f"key {KEY} is not valid", "error": f"key {KEY} refused"})
    with pytest.raises(EngineError) as caught:
        parse(ENGINES[name](), body, 403)
    assert KEY not in str(caught.value)
    assert isinstance(caught.value, EngineAuthError)


# --- fields of another type than documented -------------------------------------------------------

# What a changed API or a damaged answer puts where text belongs; a number is no text either.
ODD_TEXT = (["a", "b"], {"value": "x y"}, True, 12345)
# Where an identifier belongs, an integer is one (CORE's `id` is one); a fraction is none.
ODD_ID = (["a", "b"], {"value": "x y"}, True, 1.5)
OPENALEX = "openalex/docs_works_list_envelope_abridged.json"
OPENALEX_WORK = "openalex/work_single_W2741809807.json"  # placed in the list envelope
CORE = "core/search_works_flutter_limit5.json"
CROSSREF = "crossref/works_query_ecology_rows2.json"
DBLP_STAR = "dblp/publ_search_test_star_h1.json"
EUROPEPMC = "europepmc/search_cancer_lite.json"
EPMC_ITEM = ("resultList", "result", 5)  # an open-access article, with a `pmcid`
S2_TITLES = "semanticscholar/paper_search_turing_title.json"
PUBMED_SUMMARY = "pubmed/esummary_pubmed_14760269.json"
DBLP_INFO = ("result", "hits", "hit", 0, "info")
# dblp's `venue` is a string or a list of strings: a list of objects holds none.
ODD_VENUE = ({"value": "x y"}, [{"value": "x"}], True, 12345)


@pytest.mark.parametrize(
    ("name", "path", "field", "values"),
    [
        ("openalex", OPENALEX, ("results", 0, "title"), ODD_TEXT),
        ("openalex", OPENALEX_WORK, ("results", 0, "display_name"), ODD_TEXT),
        (
            "openalex",
            OPENALEX_WORK,
            ("results", 0, "authorships", 0, "author", "display_name"),
            ODD_TEXT,
        ),
        ("core", CORE, ("results", 0, "title"), ODD_TEXT),
        ("core", CORE, ("results", 0, "authors", 0, "name"), ODD_TEXT),
        ("core", CORE, ("results", 0, "arxivId"), ODD_ID),
        ("semantic_scholar", S2_TITLES, ("data", 0, "title"), ODD_TEXT),
        ("pubmed", PUBMED_SUMMARY, ("result", "14760269", "authors", 0, "name"), ODD_TEXT),
        ("crossref", CROSSREF, ("message", "items", 1, "author", 0, "given"), ODD_TEXT),
        ("crossref", CROSSREF, ("message", "items", 1, "author", 0, "family"), ODD_TEXT),
        ("crossref", CROSSREF, ("message", "items", 0, "abstract"), ODD_TEXT),
        ("dblp", DBLP_STAR, (*DBLP_INFO, "authors", "author", 0, "text"), ODD_TEXT),
        ("dblp", DBLP_STAR, (*DBLP_INFO, "venue"), ODD_VENUE),
        ("europepmc", EUROPEPMC, (*EPMC_ITEM, "authorString"), ODD_TEXT),
        ("europepmc", EUROPEPMC, (*EPMC_ITEM, "source"), ODD_TEXT),
        ("europepmc", EUROPEPMC, (*EPMC_ITEM, "id"), ODD_ID),
        ("europepmc", EUROPEPMC, (*EPMC_ITEM, "pmcid"), ODD_TEXT),
    ],
)
def test_a_field_of_another_type_is_read_as_missing(
    name: str, path: str, field: tuple[str | int, ...], values: tuple[Any, ...]
) -> None:
    body = fixture_bytes(path)
    if path == OPENALEX_WORK:
        body = json.dumps({"meta": {"count": 1}, "results": [json.loads(body)]}).encode()
    for value in values:
        assert_read_as_missing(ENGINES[name](), body, field, value, Query("q"))


def test_identifiers_given_as_integers_are_kept_and_other_types_are_none() -> None:
    paper = {
        "paperId": "abc",
        "title": "A paper",
        "externalIds": {"PubMed": 19872477, "ArXiv": ["1706.03762"], "DOI": "10.1/x"},
    }
    [hit] = parse(SemanticScholar(), json.dumps({"data": [paper]}))
    assert hit.ids == {"pmid": "19872477"}
    europepmc = edited(fixture_bytes(EUROPEPMC), (*EPMC_ITEM, "id"), 40536727)
    assert parse(EuropePMC(), europepmc)[5].url == "https://europepmc.org/article/MED/40536727"
    without_links = edited(fixture_bytes(CORE), ("results", 0, "links"), [])
    works = parse(Core(), without_links)
    assert works[0].url == "https://core.ac.uk/works/722934"
    odd_id = edited(without_links, ("results", 0, "id"), {"value": 722934})
    assert [h.url for h in parse(Core(), odd_id)] == [h.url for h in works[1:]]  # no link


# --- damaged recorded answers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path"), [(n, path) for n in ACADEMIC for path, _ in RECORDED.get(n, ())]
)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_damaged_recorded_answers_are_papers_or_an_engine_error(
    name: str, path: str, data: st.DataObject
) -> None:
    body, content_type = data.draw(damaged(fixture_bytes(path), recorded_bodies()))
    assert_keeps_contract(ENGINES[name](), body, Query("test query"), content_type)


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        (
            "graph neural networks -chemistry",
            "all:graph AND all:neural AND all:networks ANDNOT all:chemistry",
        ),
        ("LSTM OR GRU for speech", "(all:LSTM OR all:GRU) AND all:speech"),
        ('"attention is all you need" bert', 'all:"attention is all you need" AND all:bert'),
        ("self-attention or recurrence", "all:self-attention AND all:recurrence"),  # "or": a word
        ("OR networks", "all:networks"),
        ("-the", "all:the"),
        ('-"black hole" stars', 'all:stars ANDNOT all:"black hole"'),
        ("-chemistry", "all:-chemistry"),  # never the word excluded, required
    ],
)
def test_arxiv_keeps_the_querys_operators(text: str, expression: str) -> None:
    # A word the caller excluded was required, and either of two alternatives required both.
    assert search_query(Query(text)) == expression


def test_crossref_only_a_leading_abstract_label_is_taken_off() -> None:
    # The recorded answer, with an abstract that uses the label words inside its text.
    data = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    data["message"]["items"][0]["abstract"] = (
        "<jats:title>Abstract</jats:title><jats:p>We give an abstract account of the"
        " ecology, and in summary: nothing is lost.</jats:p>"
    )
    hit = parse(Crossref(), json.dumps(data))[0]
    assert hit.snippet == (
        "We give an abstract account of the ecology, and in summary: nothing is lost."
    )


@pytest.mark.parametrize(
    "text",
    [
        "Целью работы является анализ экосистем.",  # Russian journals' abstracts in Crossref
        "本研究では森林の生態系を調べた。",  # Japanese: no case at all
        "Études de terrain dans les Alpes.",  # an accented capital
        "“Ecology” is the study of living things.",  # a quotation opens it
    ],
)
def test_crossref_abstract_label_is_taken_off_before_any_script(text: str) -> None:
    # The label was taken off whatever followed it before `without_abstract_label`; now only
    # before an ASCII capital, digit or bracket.
    data = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    data["message"]["items"][0]["abstract"] = (
        f"<jats:title>Abstract</jats:title><jats:p>{text}</jats:p>"
    )
    assert parse(Crossref(), json.dumps(data))[0].snippet == text


def test_core_keeps_authors_whose_full_names_are_written_without_a_space() -> None:
    # Chinese and Japanese names are whole without a space: no surname taken from references.
    work = json.loads(fixture_bytes("core/search_works_flutter_limit5.json"))["results"][1]
    work["authors"] = [{"name": "王小明"}, {"name": "李华"}, {"name": "John Smith"}]
    [hit] = parse(Core(), json.dumps({"totalHits": 1, "results": [work]}))
    assert hit.authors == ("王小明", "李华", "John Smith")


def test_dblp_record_without_a_year_is_dropped_when_years_are_asked() -> None:
    data = json.loads(fixture_bytes("dblp/publ_search_test_star_h1.json"))
    del data["result"]["hits"]["hit"][0]["info"]["year"]
    body = json.dumps(data)
    assert len(parse(DBLP(), body)) == 1  # no years asked: kept
    assert parse(DBLP(), body, query=Query("x", year_from=2000)) == []


def test_google_scholar_byline_without_a_host_keeps_its_venue_and_year() -> None:
    assert byline("J Smith, A Doe - Nature, 2019") == (("J Smith", "A Doe"), "Nature", "2019")


def test_crossref_titles_keep_words_whole_across_small_caps_and_mathml() -> None:
    # Wiley titles set acronyms in <scp>; physics titles hold MathML subscripts.
    data = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    first, second = data["message"]["items"]
    first["title"] = ["Sleep during the <scp>COVID</scp>\u201019 pandemic"]
    second["title"] = [
        'Photocatalytic <mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:msub>'
        '<mml:mi mathvariant="normal">H</mml:mi><mml:mn>2</mml:mn></mml:msub></mml:math> evolution'
    ]
    titles = [hit.title for hit in parse(Crossref(), json.dumps(data))]
    assert titles == ["Sleep during the COVID\u201019 pandemic", "Photocatalytic H2 evolution"]


def test_crossref_abstracts_keep_formulas_whole_across_their_jats_tags() -> None:
    # JATS sets a formula in <jats:inline-formula> and a subscript in <jats:inf>.
    data = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    data["message"]["items"][0]["abstract"] = (
        "<jats:p>Rising <jats:inline-formula><mml:math><mml:msub><mml:mi>CO</mml:mi><mml:mn>2"
        "</mml:mn></mml:msub></mml:math></jats:inline-formula> and H<jats:inf>2</jats:inf>O "
        "vapour.</jats:p>"
    )
    hit = parse(Crossref(), json.dumps(data))[0]
    assert hit.snippet == "Rising CO2 and H2O vapour."


def test_crossref_abstract_opening_with_the_word_summary_keeps_it() -> None:
    data = json.loads(fixture_bytes("crossref/works_query_ecology_rows2.json"))
    data["message"]["items"][0]["abstract"] = (
        "<jats:p>Summary statistics from genome-wide association studies are shared.</jats:p>"
    )
    hit = parse(Crossref(), json.dumps(data))[0]
    assert hit.snippet == "Summary statistics from genome-wide association studies are shared."


def test_openalex_abstract_loses_its_abstract_label() -> None:
    # OpenAlex's inverted index often holds the publisher's heading as its first word.
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    index = {w: [p + 1 for p in ps] for w, ps in work["abstract_inverted_index"].items()}
    work["abstract_inverted_index"] = {"Abstract": [0], **index}
    [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
    assert hit.snippet.startswith("Despite growing interest in Open Access")


@pytest.mark.parametrize("dash", ["\u2014", "\u2013", "-"])
def test_openalex_abstract_loses_a_heading_set_off_by_a_dash(dash: str) -> None:
    # "Abstract — Despite ...", as IEEE sets its abstracts: the heading went and its dash
    # stayed, opening the snippet (before, the heading stayed whole).
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    index = {w: [p + 2 for p in ps] for w, ps in work["abstract_inverted_index"].items()}
    work["abstract_inverted_index"] = {"Abstract": [0], dash: [1], **index}
    [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
    assert hit.snippet.startswith("Despite growing interest in Open Access"), hit.snippet[:20]


def test_openalex_open_access_landing_page_is_no_pdf_url() -> None:
    # The recorded work with its PDFs unknown: `oa_url` is then its best copy's landing page.
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    work["primary_location"]["pdf_url"] = work["best_oa_location"]["pdf_url"] = None
    work["open_access"]["oa_url"] = "https://europepmc.org/articles/pmc5815332"
    [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
    assert hit.pdf_url is None


@pytest.mark.parametrize(
    "oa_url",
    [
        "https://peerj.com/articles/4375.pdf",
        "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC5815332/pdf/",  # no `.pdf`: still a PDF
    ],
)
def test_openalex_open_access_pdf_is_the_pdf_url(oa_url: str) -> None:
    # The recorded work with its PDFs unknown but `oa_url` a PDF: that is the paper's PDF.
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    work["primary_location"]["pdf_url"] = work["best_oa_location"]["pdf_url"] = None
    work["open_access"]["oa_url"] = oa_url
    [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
    assert hit.pdf_url == oa_url


def test_openalex_repository_is_no_venue() -> None:
    # The recorded work's own Europe PMC location (a `repository` source) as its primary one,
    # as OpenAlex gives it for works it knows first from a repository (PMC, Zenodo, ...).
    work = json.loads(fixture_bytes("openalex/work_single_W2741809807.json"))
    work["primary_location"] = work["locations"][2]
    [hit] = parse(OpenAlex(), json.dumps({"results": [work]}))
    assert hit.venue == "PeerJ"  # the journal of its best copy, not "Europe PMC (PubMed Central)"


def test_core_authors_are_not_the_bare_surnames_it_extracted_from_references() -> None:
    # The recorded work lists "Bertoldi", "Bigoni" (nine times), "Lebedev", "Loret", "Rice" and
    # "Willis" beside its three authors (Piccolroaz, Bigoni, Willis: J. Mech. Phys. Solids 2006).
    first = parse(Core(), fixture_bytes("core/search_works_flutter_limit5.json"))[0]
    assert first.authors == ("Andrea Piccolroaz", "Davide Bigoni", "John R. Willis")
