"""Fake academic indexes on 127.0.0.1: each index's real request path under `/{engine}`.

- `Paper` + `render(route, papers, params)`: papers in an index's own wire format (Atom for
  arXiv, each API's JSON, Scholar's HTML), so that several indexes can return the same paper
  under different identifiers.
- `FakeAcademic`: a Starlette app answering with a fixed body (a recorded fixture), a fault, or
  the rendered papers of that engine; it records every request's parameters.

Point an engine at it with `engines.<name>.base_url = f"{base_url}/<name>"` (see `base_urls`).
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from testing.fake_engines import Body, Fault

ATOM_TYPE = "application/atom+xml; charset=utf-8"
JSON_TYPE = "application/json"
HTML_TYPE = "text/html; charset=utf-8"

#: Route name -> (engine, its real request path). PubMed answers on two paths, in two steps.
ROUTES: dict[str, tuple[str, str]] = {
    "arxiv": ("arxiv", "/api/query"),
    "crossref": ("crossref", "/works"),
    "openalex": ("openalex", "/works"),
    "semantic_scholar": ("semantic_scholar", "/graph/v1/paper/search"),
    "pubmed.esearch": ("pubmed", "/entrez/eutils/esearch.fcgi"),
    "pubmed.esummary": ("pubmed", "/entrez/eutils/esummary.fcgi"),
    "europepmc": ("europepmc", "/europepmc/webservices/rest/search"),
    "dblp": ("dblp", "/search/publ/api"),
    "core": ("core", "/v3/search/works"),
    "google_scholar": ("google_scholar", "/scholar"),
}
ENGINE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(engine for engine, _ in ROUTES.values()))


def base_urls(base_url: str) -> dict[str, str]:
    """The `base_url` to configure for each academic engine on one fake server."""
    return {name: f"{base_url.rstrip('/')}/{name}" for name in ENGINE_NAMES}


@dataclass(frozen=True, slots=True)
class Paper:
    """A paper as the fake indexes know it; each index shows the parts it has."""

    title: str
    authors: tuple[str, ...]
    date: str  # YYYY-MM-DD
    abstract: str = ""
    doi: str | None = None
    arxiv: str | None = None
    pmid: str | None = None
    venue: str | None = None
    citations: int | None = None
    landing: str | None = None  # the publisher's page
    pdf: str | None = None

    @property
    def year(self) -> int:
        return int(self.date[:4])

    def without(self, *names: str) -> Paper:
        """The same paper as an index that lacks some fields (`doi`, `arxiv`, ...) shows it."""
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values.update(dict.fromkeys(names))
        return Paper(**values)


def _esc(text: Any) -> str:
    return html.escape(str(text or ""), quote=True)


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


def _split_name(name: str) -> tuple[str, str]:
    given, _, family = name.rpartition(" ")
    return given, family


def render_arxiv(papers: Sequence[Paper]) -> bytes:
    """An arXiv Atom feed of the papers with an arXiv id; versioned ids and links as arXiv
    gives them."""
    entries = []
    for p in papers:
        if not p.arxiv:
            continue
        ident = p.arxiv
        extra = f"<arxiv:doi>{_esc(p.doi)}</arxiv:doi>" if p.doi else ""
        if p.venue:
            extra += f"<arxiv:journal_ref>{_esc(p.venue)}</arxiv:journal_ref>"
        authors = "".join(f"<author><name>{_esc(a)}</name></author>" for a in p.authors)
        entries.append(
            f"""<entry><id>http://arxiv.org/abs/{ident}v2</id>
<updated>{p.date}T10:00:00Z</updated><published>{p.date}T10:00:00Z</published>
<title>{_esc(p.title)}</title><summary>{_esc(p.abstract)}</summary>{authors}
<link href="http://arxiv.org/abs/{ident}v2" rel="alternate" type="text/html"/>
<link title="pdf" href="http://arxiv.org/pdf/{ident}v2" rel="related" type="application/pdf"/>
{extra}<arxiv:primary_category term="cs.LG"/></entry>"""
        )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"
 xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
<title>arXiv Query</title><id>http://arxiv.org/api/fake</id>
<opensearch:totalResults>{len(papers)}</opensearch:totalResults>
{"".join(entries)}</feed>""".encode()


def _date_parts(date: str) -> dict[str, Any]:
    return {"date-parts": [[int(part) for part in date.split("-")]]}


def render_crossref(papers: Sequence[Paper]) -> bytes:
    """Crossref's work list; Crossref holds only works with a DOI."""
    items = [
        {
            "DOI": p.doi,
            "URL": f"http://dx.doi.org/{p.doi}",
            "title": [p.title],
            "author": [
                {"given": given, "family": family, "sequence": "additional"}
                for given, family in map(_split_name, p.authors)
            ],
            "container-title": [p.venue] if p.venue else [],
            "is-referenced-by-count": p.citations or 0,
            "published": _date_parts(p.date),
            "issued": _date_parts(p.date),
            "abstract": f"<jats:p>{_esc(p.abstract)}</jats:p>" if p.abstract else None,
            "type": "journal-article",
        }
        for p in papers
        if p.doi
    ]
    message = {"total-results": len(items), "items": items, "items-per-page": len(items)}
    return _json({"status": "ok", "message-type": "work-list", "message": message})


def _inverted(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


def render_openalex(papers: Sequence[Paper]) -> bytes:
    results = []
    for n, p in enumerate(papers):
        doi = p.doi or (f"10.48550/arxiv.{p.arxiv}" if p.arxiv else None)
        results.append(
            {
                "id": f"https://openalex.org/W{4000000 + n}",
                "doi": f"https://doi.org/{doi}" if doi else None,
                "ids": {"openalex": f"https://openalex.org/W{4000000 + n}"}
                | ({"pmid": f"https://pubmed.ncbi.nlm.nih.gov/{p.pmid}"} if p.pmid else {}),
                "display_name": p.title,
                "title": p.title,
                "publication_date": p.date,
                "publication_year": p.year,
                "authorships": [{"author": {"display_name": a}} for a in p.authors],
                "primary_location": {
                    "landing_page_url": p.landing or (f"https://doi.org/{doi}" if doi else None),
                    "pdf_url": p.pdf,
                    "source": {"display_name": p.venue} if p.venue else None,
                },
                "cited_by_count": p.citations or 0,
                "abstract_inverted_index": _inverted(p.abstract) if p.abstract else None,
            }
        )
    meta = {"count": len(results), "db_response_time_ms": 12, "page": 1, "per_page": 25}
    return _json({"meta": meta, "results": results, "group_by": []})


def render_semantic_scholar(papers: Sequence[Paper]) -> bytes:
    data = []
    for n, p in enumerate(papers):
        ids = {"DOI": p.doi, "ArXiv": p.arxiv, "PubMed": p.pmid}
        paper_id = f"{n:02d}" + "f" * 38
        data.append(
            {
                "paperId": paper_id,
                "url": f"https://www.semanticscholar.org/paper/{paper_id}",
                "title": p.title,
                "abstract": p.abstract or None,
                "year": p.year,
                "publicationDate": p.date,
                "authors": [{"authorId": str(100 + i), "name": a} for i, a in enumerate(p.authors)],
                "venue": p.venue or "",
                "externalIds": {k: v for k, v in ids.items() if v},
                "citationCount": p.citations,
                "openAccessPdf": {"url": p.pdf, "status": "GREEN"} if p.pdf else None,
            }
        )
    return _json({"total": len(data), "offset": 0, "data": data})


def render_pubmed_esearch(papers: Sequence[Paper]) -> bytes:
    ids = [p.pmid for p in papers if p.pmid]
    result = {"count": str(len(ids)), "retmax": str(len(ids)), "retstart": "0", "idlist": ids}
    return _json({"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result})


_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def render_pubmed_esummary(papers: Sequence[Paper], asked: Sequence[str]) -> bytes:
    """esummary for the asked PMIDs, in the asked order."""
    by_id = {p.pmid: p for p in papers if p.pmid}
    result: dict[str, Any] = {"uids": [uid for uid in asked if uid in by_id]}
    for uid in result["uids"]:
        p = by_id[uid]
        year, month, day = p.date.split("-")
        ids = [{"idtype": "pubmed", "idtypen": 1, "value": uid}]
        if p.doi:
            ids.append({"idtype": "doi", "idtypen": 3, "value": p.doi})
        result[uid] = {
            "uid": uid,
            "pubdate": f"{year} {_MONTHS[int(month) - 1]} {int(day)}",
            "sortpubdate": f"{year}/{month}/{day} 00:00",
            "source": p.venue or "",
            "fulljournalname": p.venue or "",
            "title": p.title + ".",
            "authors": [{"name": a, "authtype": "Author"} for a in p.authors],
            "articleids": ids,
            "pmcrefcount": p.citations if p.citations is not None else "",
        }
    return _json({"header": {"type": "esummary", "version": "0.3"}, "result": result})


def render_europepmc(papers: Sequence[Paper]) -> bytes:
    results = []
    for n, p in enumerate(papers):
        ident = p.pmid or f"PPR{900 + n}"
        item = {
            "id": ident,
            "source": "MED" if p.pmid else "PPR",
            "pmid": p.pmid,
            "doi": p.doi,
            "title": p.title + ".",
            "authorString": ", ".join(p.authors) + ".",
            "journalInfo": {"journal": {"title": p.venue}} if p.venue else None,
            "pubYear": str(p.year),
            "firstPublicationDate": p.date,
            "abstractText": p.abstract,
            "citedByCount": p.citations or 0,
            "isOpenAccess": "N",
        }
        results.append({k: v for k, v in item.items() if v is not None})
    return _json(
        {
            "version": "6.9",
            "hitCount": len(results),
            "request": {"queryString": "fake", "resultType": "core"},
            "resultList": {"result": results},
        }
    )


def render_dblp(papers: Sequence[Paper]) -> bytes:
    hits = []
    for n, p in enumerate(papers):
        info: dict[str, Any] = {
            "authors": {
                "author": [{"@pid": f"{n}/{i}", "text": a} for i, a in enumerate(p.authors)]
            },
            "title": p.title + ".",
            "venue": p.venue or "CoRR",
            "year": str(p.year),
            "type": "Conference and Workshop Papers",
            "url": f"https://dblp.org/rec/conf/fake/P{n}",
        }
        if p.doi:
            info["doi"] = p.doi
            info["ee"] = f"https://doi.org/{p.doi}"
        elif p.arxiv:
            info["ee"] = f"https://arxiv.org/abs/{p.arxiv}"
        hits.append({"@score": "5", "@id": str(n), "info": info})
    meta = {"@total": str(len(hits)), "@computed": str(len(hits)), "@sent": str(len(hits))}
    return _json(
        {
            "result": {
                "query": "fake",
                "status": {"@code": "200", "text": "OK"},
                "hits": {**meta, "@first": "0", "hit": hits},
            }
        }
    )


def render_core(papers: Sequence[Paper]) -> bytes:
    results = []
    for n, p in enumerate(papers):
        links = [{"type": "display", "url": f"https://core.ac.uk/works/{7000 + n}"}]
        if p.pdf:
            links.append({"type": "download", "url": p.pdf})
        results.append(
            {
                "id": 7000 + n,
                "title": p.title,
                "abstract": p.abstract,
                "authors": [{"name": a} for a in p.authors],
                "doi": p.doi,
                "downloadUrl": p.pdf or "",
                "links": links,
                "publishedDate": f"{p.date}T00:00:00",
                "yearPublished": p.year,
                "citationCount": p.citations,
            }
        )
    return _json({"totalHits": len(results), "limit": 10, "offset": 0, "results": results})


def render_google_scholar(papers: Sequence[Paper]) -> bytes:
    blocks = []
    for p in papers:
        link = p.landing or (f"https://doi.org/{p.doi}" if p.doi else "https://example.org/")
        pdf = (
            f'<div class="gs_ggs gs_fl"><div class="gs_or_ggsm"><a href="{_esc(p.pdf)}">'
            "[PDF] pdf</a></div></div>"
            if p.pdf
            else ""
        )
        byline = f"{', '.join(p.authors)} - {p.venue or 'Preprint'}, {p.year} - example.org"
        cites = (
            f'<a href="/scholar?cites=1&amp;as_sdt=2005">Cited by {p.citations}</a>'
            if p.citations
            else ""
        )
        blocks.append(
            f"""<div class="gs_r gs_or gs_scl">{pdf}<div class="gs_ri">
<h3 class="gs_rt"><a href="{_esc(link)}">{_esc(p.title)}</a></h3>
<div class="gs_a">{_esc(byline)}</div><div class="gs_rs">{_esc(p.abstract)}</div>
<div class="gs_fl">{cites}</div></div></div>"""
        )
    return f"""<!DOCTYPE html><html><body><div id="gs_res_ccl_mid">{"".join(blocks)}
</div></body></html>""".encode()


RENDERERS = {
    "arxiv": (render_arxiv, ATOM_TYPE),
    "crossref": (render_crossref, JSON_TYPE),
    "openalex": (render_openalex, JSON_TYPE),
    "semantic_scholar": (render_semantic_scholar, JSON_TYPE),
    "pubmed.esearch": (render_pubmed_esearch, JSON_TYPE),
    "europepmc": (render_europepmc, JSON_TYPE),
    "dblp": (render_dblp, JSON_TYPE),
    "core": (render_core, JSON_TYPE),
    "google_scholar": (render_google_scholar, HTML_TYPE),
}


def render(route: str, papers: Sequence[Paper], params: Mapping[str, str]) -> tuple[bytes, str]:
    """`papers` in the wire format of `route` (a key of `ROUTES`): `(body, content_type)`."""
    if route == "pubmed.esummary":
        return render_pubmed_esummary(papers, params.get("id", "").split(",")), JSON_TYPE
    renderer, content_type = RENDERERS[route]
    return renderer(papers), content_type


@dataclass(slots=True)
class FakeAcademic:
    """The fake indexes. Per route: a fixed `bodies[route]`, else per engine a
    `faults[engine]`, else the rendered `papers[engine]` (an empty list when none)."""

    papers: dict[str, list[Paper]] = field(default_factory=dict)
    bodies: dict[str, bytes | Body] = field(default_factory=dict)
    faults: dict[str, Fault] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    params: dict[str, dict[str, str]] = field(default_factory=dict)  # route -> last parameters
    headers: dict[str, dict[str, str]] = field(default_factory=dict)  # route -> last headers
    app: Starlette = field(init=False)

    def __post_init__(self) -> None:
        self.app = Starlette(
            routes=[
                Route(f"/{engine}{path}", self._endpoint(route), methods=["GET"])
                for route, (engine, path) in ROUTES.items()
            ]
        )

    def _endpoint(self, route: str) -> Any:
        engine = ROUTES[route][0]

        async def endpoint(request: Request) -> Response:
            params = dict(request.query_params)
            self.counts[route] += 1
            self.params[route] = params
            self.headers[route] = {k.lower(): v for k, v in request.headers.items()}
            fault = self.faults.get(engine)
            if fault is not None and fault.status is not None:
                body = fault.body.encode() if isinstance(fault.body, str) else fault.body
                return Response(body, fault.status, media_type="text/plain")
            fixed = self.bodies.get(route)
            if fixed is not None:
                fixed = fixed if isinstance(fixed, Body) else Body(fixed)
                ctype = fixed.content_type or RENDERERS.get(route, (None, JSON_TYPE))[1]
                return Response(fixed.content, fixed.status, media_type=ctype)
            body, ctype = render(route, self.papers.get(engine, []), params)
            return Response(body, 200, media_type=ctype)

        return endpoint
