"""academic_search end to end: real uvicorn serving the app, the official MCP client, and fake
academic indexes on 127.0.0.1 answering with recorded fixtures or generated papers."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from testing.fake_academic import ENGINE_NAMES, ROUTES, FakeAcademic, Paper, base_urls
from testing.fake_engines import Body, Fault
from testing.serving import serve_app
from testing.shared import fixture_bytes
from websearch_mcp.config import Settings
from websearch_mcp.engines.academic.pubmed import PubMed
from websearch_mcp.engines.registry import ENGINES
from websearch_mcp.search.configuration import parse_config
from websearch_mcp.server.app import create_app
from websearch_mcp.server.arguments import academic_search_args, max_year

JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CORE_KEY = "core-test-key-7f3a9c1e"

# One paper under three identities: Crossref knows the NAACL DOI (2019), arXiv the preprint id
# (2018), Semantic Scholar both. Title + year cannot join Crossref and arXiv (the years differ).
BERT = Paper(
    title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
    authors=("Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"),
    date="2019-06-02",
    abstract="We introduce a new language representation model called BERT, which stands for "
    "Bidirectional Encoder Representations from Transformers.",
    doi="10.18653/v1/n19-1423",
    arxiv="1810.04805",
    venue="Proceedings of the 2019 Conference of the North American Chapter of the ACL (NAACL)",
    citations=85000,
    pdf="https://aclanthology.org/N19-1423.pdf",
)
BERT_PREPRINT = Paper(
    title=BERT.title,
    authors=BERT.authors,
    date="2018-10-11",
    abstract=BERT.abstract,
    arxiv=BERT.arxiv,
)
# A clinical paper: PubMed (PMID + DOI), Europe PMC (PMID only), OpenAlex (DOI only).
TRIAL = Paper(
    title="Transformer language models for clinical trial eligibility screening",
    authors=("Maria Rossi", "Jun Tanaka"),
    date="2021-03-15",
    abstract="Transformer language models screen patients for clinical trials.",
    doi="10.1000/jbi.2021.0042",
    pmid="33712345",
    venue="Journal of Biomedical Informatics",
    citations=40,
)
# Found by title and year only (dblp, Scholar and CORE have no shared id).
SURVEY = Paper(
    title="A Survey of Transformers for Language Representation",
    authors=("Ana Lima", "Tom Berg"),
    date="2020-05-01",
    abstract="We survey transformer language representation models.",
    venue="ACM Computing Surveys",
)
OLD = Paper(
    title="Recurrent language models for representation learning",
    authors=("Old Author",),
    date="2012-01-01",
    abstract="Language representation with recurrent networks before transformers.",
)


def test_arguments_are_coerced_leniently() -> None:
    args = academic_search_args(
        "  graph   networks ", "5", "arxiv, crossref", "2019", 2021.0, "2", "true"
    )
    query = args.query
    assert (query.text, query.max_results, query.page) == ("graph networks", 5, 2)
    assert (query.year_from, query.year_to) == (2019, 2021)
    assert args.engines == ["arxiv", "crossref"] and args.explain is True
    blank = academic_search_args("q", year_from="", year_to=None)
    assert (blank.query.year_from, blank.query.year_to, blank.query.page) == (None, None, 1)
    same = academic_search_args("q", year_from=2020, year_to=2020).query
    assert (same.year_from, same.year_to) == (2020, 2020)


def settings_for(base: str, **search: Any) -> Settings:
    urls = base_urls(base)
    engines: dict[str, Any] = {name: {"enabled": False} for name in ENGINES}
    for name in ENGINE_NAMES:
        engines[name] = {"enabled": True, "base_url": urls[name]}
    engines["arxiv"]["rate_limit"] = 0  # no waiting between calls in a test
    engines["core"]["api_keys"] = [CORE_KEY]
    return parse_config(
        {
            "engines": engines,
            "search": {"deadline_seconds": 5, **search},
            "cache": {"backend": "none"},
        },
        "test",
        environ={},
    )


@pytest.fixture(scope="module")
def fake_server() -> Iterator[tuple[FakeAcademic, str]]:
    fake = FakeAcademic()
    with serve_app(fake.app) as base:
        yield fake, base


@pytest.fixture
def fake(fake_server: tuple[FakeAcademic, str]) -> FakeAcademic:
    fake = fake_server[0]
    for mapping in (fake.papers, fake.bodies, fake.faults, fake.counts, fake.params):
        mapping.clear()
    return fake


@pytest.fixture
def server(fake: FakeAcademic, fake_server: tuple[FakeAcademic, str]) -> Iterator[str]:
    with serve_app(create_app(settings_for(fake_server[1]))) as url:
        yield url


async def call(server: str, arguments: dict[str, Any]) -> Any:
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        return await client.call_tool("academic_search", arguments)


def statuses(answer: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["status"] for e in answer["engines"]}


async def test_tool_is_listed_with_its_schema(server: str) -> None:
    async with Client(f"{server}/mcp", mode="legacy", cache=None) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    tool = tools["academic_search"]
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint and tool.annotations.open_world_hint
    props = tool.input_schema["properties"]
    assert set(props) == {
        "query", "max_results", "engines", "year_from", "year_to", "page", "explain"
    }  # fmt: skip
    assert props["page"]["minimum"] == 1 and props["page"]["maximum"] == 50
    year = props["year_from"]
    assert (year["minimum"], year["maximum"]) == (1000, max_year())
    engine_enum = props["engines"]["items"]["enum"]
    assert set(engine_enum) == set(ENGINE_NAMES)
    assert tool.output_schema is not None and "results" in tool.output_schema["properties"]


# Each index once, replaying its recorded answer: (engine, query, fixture routes, a title).
RECORDED = [
    ("arxiv", "testing", {"arxiv": "arxiv/search_testing_m10.xml"}, "Testing Deep Learning"),
    ("crossref", "ecology", {"crossref": "crossref/works_query_ecology_rows2.json"}, "Ecology"),
    (
        "semantic_scholar",
        "turing",
        {"semantic_scholar": "semanticscholar/paper_search_turing_title.json"},
        "Neural Turing Machines",
    ),
    (
        "pubmed",
        "newborn blood pressure",
        {
            "pubmed.esearch": "pubmed/esearch_mdat_range_usehistory.json",
            "pubmed.esummary": "pubmed/esummary_pubmed_14760269.json",
        },
        "Maternal age and other predictors of newborn blood pressure",
    ),
    ("europepmc", "cancer", {"europepmc": "europepmc/search_cancer_lite.json"}, "Prostate Cancer"),
    ("dblp", "test", {"dblp": "dblp/publ_search_test_star_h1.json"}, "Test Cost Reduction"),
    ("core", "flutter", {"core": "core/search_works_flutter_limit5.json"}, "flutter"),
]


@pytest.mark.parametrize(
    ("engine", "query", "routes", "title"), RECORDED, ids=[r[0] for r in RECORDED]
)
async def test_every_index_end_to_end_on_its_recorded_answer(
    fake: FakeAcademic, server: str, engine: str, query: str, routes: dict[str, str], title: str
) -> None:
    for route, path in routes.items():
        fake.bodies[route] = fixture_bytes(path)
    result = await call(server, {"query": query, "engines": [engine], "explain": True})
    assert not result.is_error, result.content[0].text
    answer = result.structured_content
    assert statuses(answer) == {engine: "ok"}
    assert answer["results"] and all(r["engines"] == [engine] for r in answer["results"])
    assert any(title.lower() in r["title"].lower() for r in answer["results"])
    for paper in answer["results"]:
        assert paper["url"].startswith(("http://", "https://"))
        assert paper["score_details"]["ranks"] == {engine: paper["score_details"]["ranks"][engine]}
    if engine == "pubmed":  # two steps: the PMIDs esearch found were asked of esummary
        assert fake.params["pubmed.esummary"]["id"].startswith("25039505,25039504")
    if engine == "core":  # the key travels as a Bearer token and is never shown
        assert CORE_KEY not in result.content[0].text


async def test_the_text_tells_apart_authors_an_index_names_family_first(
    fake: FakeAcademic, server: str
) -> None:
    # CORE's recorded names are "Alben, Silas", "Li, Chenyang", ...: joined with ", " the byline
    # "Alben, Silas, Li, Chenyang, Wang, Xiaolin et al." reads as six people, not three of four.
    fake.bodies["core"] = fixture_bytes("core/search_works_flutter_limit5.json")
    result = await call(server, {"query": "flutter", "engines": ["core"]})
    [paper] = [p for p in result.structured_content["results"] if "piezoelectric" in p["title"]]
    assert len(paper["authors"]) == 4
    assert "Alben, Silas, Li, Chenyang" not in result.content[0].text


async def test_openalex_end_to_end_on_its_recorded_work(fake: FakeAcademic, server: str) -> None:
    # The recorded sample is one work; a search answer lists such works under `results`.
    work = fixture_bytes("openalex/work_single_W2741809807.json").decode()
    fake.bodies["openalex"] = f'{{"meta": {{"count": 1}}, "results": [{work}]}}'.encode()
    result = await call(server, {"query": "open access prevalence", "engines": ["openalex"]})
    (paper,) = result.structured_content["results"]
    assert paper["title"].startswith("The state of OA")
    assert paper["doi"] == "10.7717/peerj.4375" and paper["citations"] == 962
    assert paper["ids"] == {"doi": "10.7717/peerj.4375", "pmid": "29456894"}
    assert paper["snippet"].startswith("Despite growing interest in Open Access")


async def test_google_scholar_end_to_end(fake: FakeAcademic, server: str) -> None:
    fake.papers["google_scholar"] = [SURVEY]
    result = await call(server, {"query": "transformers survey", "engines": ["google_scholar"]})
    (paper,) = result.structured_content["results"]
    assert paper["title"] == SURVEY.title and paper["published"] == "2020"
    assert fake.headers["google_scholar"]["user-agent"].startswith("Mozilla/")


async def test_pubmeds_first_answer_is_read_off_the_event_loop(
    fake: FakeAcademic, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # esearch's answer (up to the 5 MiB answer cap) is parsed to build the esummary request.
    readers: list[str] = []
    follow_up = PubMed.follow_up

    def recorded(engine: PubMed, *args: Any, **kwargs: Any) -> Any:
        readers.append(threading.current_thread().name)
        return follow_up(engine, *args, **kwargs)

    monkeypatch.setattr(PubMed, "follow_up", recorded)
    fake.bodies["pubmed.esearch"] = fixture_bytes("pubmed/esearch_mdat_range_usehistory.json")
    fake.bodies["pubmed.esummary"] = fixture_bytes("pubmed/esummary_pubmed_14760269.json")
    result = await call(server, {"query": "newborn blood pressure", "engines": ["pubmed"]})
    assert statuses(result.structured_content) == {"pubmed": "ok"}
    assert len(readers) == 2  # esearch's answer, then esummary's (the last: no follow-up)
    assert all(name.startswith("websearch-engine-parse") for name in readers), readers


async def test_same_paper_from_three_indexes_is_one_result(fake: FakeAcademic, server: str) -> None:
    fake.papers.update(
        {
            "crossref": [BERT.without("arxiv", "pdf")],
            "arxiv": [BERT_PREPRINT],
            "semantic_scholar": [BERT, TRIAL],
            "pubmed": [TRIAL.without("venue")],
            "europepmc": [TRIAL.without("doi")],
            "openalex": [TRIAL.without("pmid"), OLD],
            "dblp": [SURVEY],
            "core": [SURVEY.without("venue")],
            "google_scholar": [SURVEY],
        }
    )
    result = await call(server, {"query": "transformers language representation", "explain": True})
    answer = result.structured_content
    assert set(statuses(answer).values()) == {"ok"} and answer["partial"] is False
    by_title = {r["title"]: r for r in answer["results"]}
    assert len(by_title) == len(answer["results"])  # no paper twice

    bert = by_title[BERT.title]
    assert sorted(bert["engines"]) == ["arxiv", "crossref", "semantic_scholar"]
    assert bert["ids"] == {"doi": BERT.doi, "arxiv": BERT.arxiv}
    assert bert["doi"] == BERT.doi and bert["url"] == f"https://doi.org/{BERT.doi}"
    assert bert["published"] == "2018-10-11"  # the earliest date any index gives
    assert bert["citations"] == 85000
    assert bert["pdf_url"] == BERT.pdf  # an https link before arXiv's http one
    assert bert["venue"] == BERT.venue and len(bert["authors"]) == 4
    assert set(bert["score_details"]["merged_by"]) >= {"doi", "arxiv"}
    assert bert["score_details"]["top_venue"] in ("ACL", "NAACL")
    assert bert is answer["results"][0]  # three indexes, top venue, highly cited

    trial = by_title[TRIAL.title]
    assert sorted(trial["engines"]) == ["europepmc", "openalex", "pubmed", "semantic_scholar"]
    assert trial["ids"] == {"doi": TRIAL.doi, "pmid": TRIAL.pmid}
    assert trial["venue"] == TRIAL.venue

    survey = by_title[SURVEY.title]
    assert sorted(survey["engines"]) == ["core", "dblp", "google_scholar"]
    assert "title" in survey["score_details"]["merged_by"]

    # The text rendering carries the paper fields.
    text = result.content[0].text
    assert f"doi:{BERT.doi}" in text and "arXiv:1810.04805" in text
    assert "Jacob Devlin, Ming-Wei Chang, Kenton Lee et al. (2018)" in text
    assert "cited by 85000" in text and f"PDF: {bert['pdf_url']}" in text


async def test_the_text_names_three_authors_without_et_al_and_a_paper_never_cited(
    fake: FakeAcademic, server: str
) -> None:
    three = dataclasses.replace(TRIAL, authors=("Maria Rossi", "Jun Tanaka", "Ana Lima"))
    fake.papers["openalex"] = [dataclasses.replace(three, citations=0)]
    result = await call(server, {"query": "clinical trial screening", "engines": ["openalex"]})
    (paper,) = result.structured_content["results"]
    assert paper["citations"] == 0
    names = "Maria Rossi, Jun Tanaka, Ana Lima"
    byline = f"   {names} (2021). {TRIAL.venue}; doi:{TRIAL.doi}; PMID:{TRIAL.pmid}; cited by 0"
    assert byline in result.content[0].text.splitlines()


async def test_openalex_and_europepmc_merge_by_pubmed_id(fake: FakeAcademic, server: str) -> None:
    # No DOI and titles that differ: only the PubMed id both indexes give links the records.
    retitled = dataclasses.replace(TRIAL.without("doi"), title="Clinical trial screening (BERT)")
    fake.papers.update({"openalex": [retitled, OLD], "europepmc": [TRIAL.without("doi")]})
    result = await call(
        server,
        {
            "query": "clinical trial screening",
            "engines": ["openalex", "europepmc"],
            "explain": True,
        },
    )
    answer = result.structured_content
    merged = [r for r in answer["results"] if len(r["engines"]) == 2]
    assert len(merged) == 1 and len(answer["results"]) == 2
    assert merged[0]["ids"] == {"pmid": TRIAL.pmid}
    assert "pmid" in merged[0]["score_details"]["merged_by"]


async def test_without_the_linking_index_the_versions_stay_apart(
    fake: FakeAcademic, server: str
) -> None:
    fake.papers.update({"crossref": [BERT.without("arxiv")], "arxiv": [BERT_PREPRINT]})
    result = await call(server, {"query": "bert transformers", "engines": ["crossref", "arxiv"]})
    engines = sorted(tuple(r["engines"]) for r in result.structured_content["results"])
    assert engines == [("arxiv",), ("crossref",)]


async def test_year_filters(fake: FakeAcademic, server: str) -> None:
    # The fake indexes ignore the years they are asked for: the fused list is filtered anyway.
    papers = [OLD, BERT_PREPRINT, SURVEY.without("venue"), TRIAL.without("pmid")]
    for engine in ("crossref", "openalex", "semantic_scholar", "arxiv", "core", "europepmc"):
        fake.papers[engine] = papers
    result = await call(
        server,
        {"query": "language representation transformers", "year_from": "2018", "year_to": 2020},
    )
    answer = result.structured_content
    years = sorted(r["published"][:4] for r in answer["results"])
    assert years == ["2018", "2020"]
    # Each index was asked in its own terms.
    assert fake.params["crossref"]["filter"] == "from-pub-date:2018,until-pub-date:2020"
    assert fake.params["openalex"]["filter"] == "publication_year:2018-2020"
    assert fake.params["semantic_scholar"]["year"] == "2018-2020"
    assert "submittedDate:[201801010000 TO 202012312359]" in fake.params["arxiv"]["search_query"]
    assert "yearPublished>=2018" in fake.params["core"]["q"]
    assert "PUB_YEAR:[2018 TO 2020]" in fake.params["europepmc"]["query"]
    assert (fake.params["pubmed.esearch"]["mindate"], fake.params["pubmed.esearch"]["maxdate"]) == (
        "2018",
        "2020",
    )
    assert fake.params["google_scholar"]["as_ylo"] == "2018"

    only_from = await call(server, {"query": "language representation", "year_from": 2020})
    assert all(r["published"] >= "2020" for r in only_from.structured_content["results"])
    assert only_from.structured_content["results"]


async def test_page_is_passed_to_the_indexes(fake: FakeAcademic, server: str) -> None:
    fake.papers["crossref"] = [BERT]
    fake.papers["arxiv"] = [BERT_PREPRINT]
    result = await call(
        server,
        {"query": "transformers", "engines": ["crossref", "arxiv"], "page": 3, "max_results": 5},
    )
    assert result.structured_content["page"] == 3
    assert fake.params["crossref"]["offset"] == "10" and fake.params["arxiv"]["start"] == "10"


# Semantic Scholar's answer to a request past its first 1,000 relevance-ranked results
# (allenai/s2-folks#96).
S2_TOO_DEEP = Body(
    b'{"error": "Requested data for this limit and/or offset is not available"}', status=400
)


async def test_a_page_past_an_index_s_deepest_result_is_not_asked_of_it(
    fake: FakeAcademic, server: str
) -> None:
    """Semantic Scholar and Europe PMC serve their first 1,000 results only: papers 1001-1050
    are not asked of them (no error, no rest for the next search), while Crossref answers."""
    fake.papers["crossref"] = [BERT]
    fake.papers["europepmc"] = [TRIAL]
    fake.bodies["semantic_scholar"] = S2_TOO_DEEP
    engines = ["crossref", "semantic_scholar", "europepmc"]
    deep = await call(
        server, {"query": "transformers", "engines": engines, "page": 21, "max_results": 50}
    )
    answer = deep.structured_content
    expected = {"crossref": "ok", "semantic_scholar": "skipped", "europepmc": "skipped"}
    assert statuses(answer) == expected
    assert answer["partial"] is False
    assert fake.counts["semantic_scholar"] == fake.counts["europepmc"] == 0
    reasons = {e["name"]: e.get("error", "") for e in answer["engines"]}
    assert "first 1,000 results" in reasons["semantic_scholar"]
    assert "first 1,000 results" in reasons["europepmc"]
    del fake.bodies["semantic_scholar"]
    fake.papers["semantic_scholar"] = [BERT]
    first = await call(server, {"query": "transformers", "engines": ["semantic_scholar"]})
    assert statuses(first.structured_content) == {"semantic_scholar": "ok"}


async def test_a_page_reaching_past_an_index_s_deepest_result_asks_for_what_is_left(
    fake: FakeAcademic, server: str
) -> None:
    """Papers 991-1020: Semantic Scholar is asked for its last ten (offset + limit at most
    1,000), not for thirty it answers with an error."""
    fake.papers["semantic_scholar"] = [BERT]
    result = await call(
        server,
        {"query": "transformers", "engines": ["semantic_scholar"], "page": 34, "max_results": 30},
    )
    assert statuses(result.structured_content) == {"semantic_scholar": "ok"}
    asked = fake.params["semantic_scholar"]
    assert (asked["offset"], asked["limit"]) == ("990", "10")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "x", "year_from": 2021, "year_to": 2019}, "year_from (2021) must not be after"),
        ({"query": "x", "page": 0}, "page must be an integer from 1 to 50"),
        ({"query": "x", "page": "51"}, "page must be an integer from 1 to 50"),
        ({"query": "x", "year_from": 999}, "year_from must be an integer from 1000 to"),
        ({"query": "x", "year_to": "next year"}, "year_to must be an integer"),
        ({"query": ""}, "query must not be empty"),
        (
            {"query": "x", "engines": ["bing"]},
            '"bing" is a web engine: web_search asks it; allowed: arxiv',
        ),
    ],
)
def test_invalid_arguments_are_tool_errors(server: str, arguments: dict, message: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "academic_search", "arguments": arguments},
    }
    response = httpx.post(f"{server}/mcp", headers=JSON_HEADERS, json=body, timeout=10)
    result = response.json()["result"]
    assert result["isError"] is True
    assert message in result["content"][0]["text"]


# (index, a query, its recorded answer, where its result list is, a field of the first result
# and a value of another type than the index documents for it)
ODD_FIELDS = [
    ("crossref", "ecology", "crossref/works_query_ecology_rows2.json", ("message", "items"),
     "author", 7),
    ("openalex", "protein", "openalex/docs_works_list_envelope_abridged.json", ("results",),
     "authorships", 12),
    ("core", "flutter", "core/search_works_flutter_limit5.json", ("results",), "links", True),
    ("europepmc", "cancer", "europepmc/search_cancer_lite.json", ("resultList", "result"),
     "journalTitle", [1]),
]  # fmt: skip


@pytest.mark.parametrize(("engine", "query", "path", "where", "field", "value"), ODD_FIELDS)
async def test_one_paper_with_a_field_of_another_type_costs_at_most_that_paper(
    fake: FakeAcademic,
    server: str,
    engine: str,
    query: str,
    path: str,
    where: tuple[str, ...],
    field: str,
    value: Any,
) -> None:
    """A number or a list where an index sends a list of objects or text costs that paper at
    most: the index's other papers are kept, not reported as an `unexpected TypeError`."""
    answer = json.loads(fixture_bytes(path))
    items = answer
    for key in where:
        items = items[key]
    whole = len(items)
    items[0][field] = value
    fake.bodies[engine] = json.dumps(answer).encode()
    result = await call(server, {"query": query, "engines": [engine], "max_results": 50})
    assert not result.is_error, result.content[0].text
    (reported,) = result.structured_content["engines"]
    assert reported["status"] == "ok" and reported["results"] >= whole - 1, reported


async def test_one_index_failing_is_reported(fake: FakeAcademic, server: str) -> None:
    fake.papers["crossref"] = [BERT]
    fake.faults["arxiv"] = Fault(status=503)
    result = await call(server, {"query": "bert transformers", "engines": ["crossref", "arxiv"]})
    answer = result.structured_content
    assert statuses(answer) == {"arxiv": "error", "crossref": "ok"}
    assert answer["partial"] is True and answer["results"][0]["engines"] == ["crossref"]


@pytest.mark.parametrize("body", [b"", b'{"message": "Forbidden"}'], ids=["bare", "explained"])
async def test_an_index_denying_access_without_a_key_is_blocked_with_or_without_a_reason(
    fake: FakeAcademic, server: str, body: bytes
) -> None:
    """No key was sent, so a 403 cannot be a refused key: the index denies access, whether or not
    its body says why."""
    fake.papers["crossref"] = [BERT]
    fake.faults["openalex"] = Fault(status=403, body=body)
    result = await call(server, {"query": "bert transformers", "engines": ["crossref", "openalex"]})
    answer = result.structured_content
    assert statuses(answer) == {"openalex": "blocked", "crossref": "ok"}
    (openalex,) = [row for row in answer["engines"] if row["name"] == "openalex"]
    assert ("Forbidden" if body else "HTTP 403") in openalex["error"]


async def test_a_base_url_replaces_only_the_origin_of_pubmeds_api(
    fake: FakeAcademic, fake_server: tuple[FakeAcademic, str]
) -> None:
    """docs/engines.md: `base_url` "replaces only the origin; request paths stay the real
    API's": PubMed at its own origin answers on /entrez/eutils/esearch.fcgi and esummary.fcgi."""
    fake.papers["pubmed"] = [TRIAL]
    real = {f"/entrez/eutils/{step}.fcgi": f"pubmed.{step}" for step in ("esearch", "esummary")}

    async def eutils(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":  # the real paths only, at the root of the origin
            route = real.get(scope["path"])
            path = f"/{ROUTES[route][0]}{ROUTES[route][1]}" if route else "/not-eutils"
            scope = {**scope, "path": path}
        await fake.app(scope, receive, send)

    with serve_app(eutils) as origin:
        settings = settings_for(fake_server[1])
        settings.engines["pubmed"] = settings.engines["pubmed"].model_copy(
            update={"base_url": origin}
        )
        with serve_app(create_app(settings)) as server:
            result = await call(
                server, {"query": "clinical trial screening", "engines": ["pubmed"]}
            )
    assert not result.is_error, result.content[0].text
    answer = result.structured_content
    assert statuses(answer) == {"pubmed": "ok"}
    assert answer["results"][0]["title"] == TRIAL.title


@pytest.mark.parametrize("strategy", ["sequential", "pool"])
async def test_every_index_is_asked_whatever_the_web_strategy(
    fake: FakeAcademic, fake_server: tuple[FakeAcademic, str], strategy: str
) -> None:
    """`search.strategy` saves web quota; academic_search still searches the indexes at once
    and merges what they share (docs/tools.md)."""
    fake.papers.update({"crossref": [BERT.without("arxiv", "pdf")], "arxiv": [BERT_PREPRINT]})
    fake.papers.update({"semantic_scholar": [BERT], "core": [SURVEY]})
    with serve_app(create_app(settings_for(fake_server[1], strategy=strategy))) as server:
        result = await call(server, {"query": "transformers language representation"})
    answer = result.structured_content
    assert "skipped" not in statuses(answer).values()
    assert set(fake.counts) >= {"arxiv", "crossref", "semantic_scholar", "core"}
    bert = next(r for r in answer["results"] if r["title"] == BERT.title)
    assert sorted(bert["engines"]) == ["arxiv", "crossref", "semantic_scholar"]


async def test_all_indexes_failing_is_a_tool_error_listing_each(
    fake: FakeAcademic, server: str
) -> None:
    fake.faults.update({name: Fault(status=500, body="down") for name in ENGINE_NAMES})
    result = await call(server, {"query": "transformers"})
    assert result.is_error
    text = result.content[0].text
    assert "no engine answered" in text
    for name in ENGINE_NAMES:
        assert f"{name}: error" in text


async def test_a_less_than_sign_in_an_abstract_is_text_not_a_tag(
    fake: FakeAcademic, server: str
) -> None:
    # Abstracts compare with "<" and ">"; only a real tag (`<i>`, `</jats:p>`) is markup, and
    # Semantic Scholar's have none (its fields are plain text: "n<k and k>2" is no tag).
    marked = "Patients aged < 65 years and BMI > 30 had p<0.05 in <i>vivo</i>."
    shown = "Patients aged < 65 years and BMI > 30 had p<0.05 in vivo."
    plain = "Patients aged < 65 years had p<0.05 when n<k and k>2 held."
    for engine, abstract, expected in (
        ("semantic_scholar", plain, plain),
        ("openalex", marked, shown),
        ("core", marked, shown),
    ):
        fake.papers.clear()
        fake.papers[engine] = [dataclasses.replace(TRIAL, abstract=abstract)]
        result = await call(server, {"query": "clinical trial screening", "engines": [engine]})
        (paper,) = result.structured_content["results"]
        assert paper["snippet"] == expected, engine


async def test_an_arxiv_record_with_an_erratum_doi_merges_under_the_article_doi(
    fake: FakeAcademic, server: str
) -> None:
    # arXiv's `doi` field lists the article's DOI and its erratum's, separated by a space.
    article = Paper(
        title="Holographic entanglement in a toy model of gravity",
        authors=("Ada Novak", "Ben Ortiz"),
        date="1999-01-04",
        doi="10.1103/physrevd.60.104001",
        arxiv="hep-th/9901001",
        venue="Phys. Rev. D 60, 104001 (1999)",
    )
    erratum = "10.1103/physrevd.61.129902"
    fake.papers.update(
        {
            "arxiv": [dataclasses.replace(article, doi=f"{article.doi} {erratum}")],
            "crossref": [article.without("arxiv")],
        }
    )
    result = await call(
        server, {"query": "holographic entanglement", "engines": ["arxiv", "crossref"]}
    )
    (paper,) = result.structured_content["results"]
    assert sorted(paper["engines"]) == ["arxiv", "crossref"]
    assert paper["doi"] == article.doi
    assert paper["ids"] == {"doi": article.doi, "arxiv": article.arxiv}


@pytest.mark.parametrize(
    ("index", "paper"),
    [
        ("crossref", BERT),  # one DOI under another link (Crossref's doi.org link)
        ("dblp", SURVEY),  # no id in common: one title, year and authors
    ],
)
async def test_a_paper_of_a_list_moved_down_that_another_index_returned_is_listed_once(
    fake: FakeAcademic, server: str, index: str, paper: Any
) -> None:
    """A list that seems to answer another query is vouched for by link only: a paper it
    shares with an index that answers (merged by its DOI, or by its title, year and authors)
    is the answer's already, and is not listed again below."""
    fake.papers.update({"semantic_scholar": [TRIAL, paper], index: [paper]})
    arguments = {"query": "clinical trial screening", "engines": ["semantic_scholar", index]}
    answer = (await call(server, arguments)).structured_content
    assert statuses(answer) == {"semantic_scholar": "ok", index: "irrelevant"}
    titles = [r["title"] for r in answer["results"]]
    assert titles.count(paper.title) == 1, titles


async def test_the_papers_of_a_list_moved_down_are_listed_in_the_room_left(
    fake: FakeAcademic, server: str
) -> None:
    """docs/engines.md: a gated list is not deleted, its papers follow the others' in the room
    they leave. In one fusion of every list (its weight times 0.05) each of its papers fell
    under `academic.relevance_threshold`, and the answer lost them all."""
    fake.papers.update({"semantic_scholar": [TRIAL], "dblp": [BERT, SURVEY]})
    arguments = {
        "query": "clinical trial screening",
        "engines": ["semantic_scholar", "dblp"],
        "explain": True,
    }
    answer = (await call(server, arguments)).structured_content
    assert statuses(answer) == {"semantic_scholar": "ok", "dblp": "irrelevant"}
    titles = [r["title"] for r in answer["results"]]
    assert titles == [TRIAL.title, BERT.title, SURVEY.title], titles
    assert answer["results"][-1]["score_details"]["moved_down"] == 0.05


async def test_the_text_says_when_relevance_is_uncertain(fake: FakeAcademic, server: str) -> None:
    # Every index answers with papers that share no word with the query (a stale answer).
    fake.papers.update({"crossref": [BERT], "openalex": [TRIAL]})
    query = "glacier meltwater sediment"
    result = await call(server, {"query": query, "engines": ["crossref", "openalex"]})
    answer = result.structured_content
    assert answer["note"].startswith("relevance is uncertain")
    assert f"Note: {answer['note']}." in result.content[0].text


def test_searxng_science_results_keep_a_date_of_year_or_month_precision(
    fake: FakeAcademic, server: str
) -> None:
    # dblp dates its records by year, PubMed often by month ("2004 Feb"): SearXNG clients get
    # the first day of that year or month, as SearXNG writes such dates.
    fake.bodies["dblp"] = fixture_bytes("dblp/publ_search_test_star_h1.json")
    fake.bodies["pubmed.esearch"] = fixture_bytes("pubmed/esearch_mdat_range_usehistory.json")
    fake.bodies["pubmed.esummary"] = fixture_bytes("pubmed/esummary_pubmed_14760269.json")
    params = {"q": "test pressure", "categories": "science", "engines": "dblp,pubmed"}
    body = httpx.get(f"{server}/search", params=params, timeout=10).json()
    dates = {r["engine"]: r["publishedDate"] for r in body["results"]}
    assert dates == {"dblp": "2005-01-01T00:00:00", "pubmed": "2004-02-01T00:00:00"}


def test_searxng_engines_naming_indexes_and_engines_not_served_here_searches_papers(
    fake: FakeAcademic, server: str
) -> None:
    # SearXNG clients name SearXNG's own engines ("google scholar", "google"): names this server
    # does not know are ignored, so the academic indexes named with them still mean papers.
    fake.papers["arxiv"] = [BERT_PREPRINT]
    for engines in ("arxiv", "arxiv,google scholar", "arxiv,google"):
        params = {"q": "bert transformers", "engines": engines}
        body = httpx.get(f"{server}/search", params=params, timeout=10).json()
        found = [(r["engines"], r["category"], r["title"]) for r in body["results"]]
        assert found == [(["arxiv"], "science", BERT.title)], engines


async def test_a_pubmed_paper_found_by_its_electronic_date_stays_in_the_asked_years(
    fake: FakeAcademic, server: str
) -> None:
    # PubMed matches a year range on the print date or the electronic one: a paper published
    # online in December 2003 for the February 2004 issue is found for 2003, and must stay.
    summary = json.loads(fixture_bytes("pubmed/esummary_pubmed_14760269.json"))
    summary["result"]["14760269"]["epubdate"] = "2003 Dec 15"
    fake.bodies["pubmed.esearch"] = fixture_bytes("pubmed/esearch_mdat_range_usehistory.json")
    fake.bodies["pubmed.esummary"] = json.dumps(summary).encode()
    title = "Maternal age and other predictors of newborn blood pressure"
    shown = {}
    for years in ({"year_to": 2003}, {"year_from": 2004}, {}):
        arguments = {"query": "newborn blood pressure", "engines": ["pubmed"], **years}
        result = await call(server, arguments)
        assert not result.is_error, result.content[0].text
        papers = result.structured_content["results"]
        assert [p["title"] for p in papers] == [title], years
        shown[tuple(years)] = papers[0]["published"]
    # The date PubMed matched on; the issue's, as PubMed cites it, otherwise.
    assert shown == {("year_to",): "2003-12-15", ("year_from",): "2004-02", (): "2004-02"}


async def test_core_s_reference_surnames_do_not_replace_another_index_s_authors(
    fake: FakeAcademic, server: str
) -> None:
    # CORE's recorded record of this paper lists nine names, six of them reference authors;
    # Crossref lists its three authors. The byline named "Piccolroaz, Bertoldi, Bigoni".
    fake.bodies["core"] = fixture_bytes("core/search_works_flutter_limit5.json")
    fake.papers["crossref"] = [
        Paper(
            title="A dynamical interpretation of flutter instability in a continuous medium",
            authors=("Andrea Piccolroaz", "Davide Bigoni", "John R. Willis"),
            date="2006-12-01",
            doi="10.1016/j.jmps.2006.05.005",
        )
    ]
    result = await call(server, {"query": "flutter instability", "engines": ["core", "crossref"]})
    paper = result.structured_content["results"][0]
    assert sorted(paper["engines"]) == ["core", "crossref"]
    assert paper["authors"] == ["Andrea Piccolroaz", "Davide Bigoni", "John R. Willis"]


async def test_the_text_names_a_paper_s_pubmed_id(fake: FakeAcademic, server: str) -> None:
    # Clients that give the model only the text lost the PMID the structured answer holds.
    work = fixture_bytes("openalex/work_single_W2741809807.json").decode()
    fake.bodies["openalex"] = f'{{"meta": {{"count": 1}}, "results": [{work}]}}'.encode()
    result = await call(server, {"query": "open access prevalence", "engines": ["openalex"]})
    (paper,) = result.structured_content["results"]
    assert paper["ids"]["pmid"] == "29456894"
    assert "29456894" in result.content[0].text
