"""Serper (Google results as JSON): `POST /search`, the key in `X-API-KEY`."""

from __future__ import annotations

from typing import Any, ClassVar

from websearch_mcp.engines.base import Engine, clean_text
from websearch_mcp.engines.common import api_error, error_message
from websearch_mcp.engines.web._common import http_url, iso_date, json_object
from websearch_mcp.engines.web._google import QDR, google_language
from websearch_mcp.errors import EngineParseError
from websearch_mcp.models import Hit, HttpRequest, HttpResponse, Query


class Serper(Engine):
    """Serper: `organic[]` with `title`, `link`, `snippet` and sometimes a `date`. No score."""

    name: ClassVar[str] = "serper"
    base_url: ClassVar[str] = "https://google.serper.dev"
    needs_key: ClassVar[bool] = True
    returns_score: ClassVar[bool] = False
    supports_time_range: ClassVar[bool] = True
    supports_language: ClassVar[bool] = True
    default_enabled: ClassVar[bool] = True
    default_timeout: ClassVar[float] = 5.0
    key_env: ClassVar[str | None] = "SERPER_API_KEYS"

    max_num: ClassVar[int] = 100

    def request(self, query: Query, key: str | None) -> HttpRequest:
        """Body: `q`, `num`, `page`, `tbs` (qdr:d/w/m/y), `hl` and `gl` from the language tag."""
        body: dict[str, Any] = {"q": query.text, "num": min(query.max_results, self.max_num)}
        if query.page > 1:
            body["page"] = query.page
        if query.time_range:
            body["tbs"] = QDR[query.time_range]
        hl, gl, _ = google_language(query.language)
        if hl:
            body["hl"] = hl
        if gl:
            body["gl"] = gl
        return HttpRequest(
            "POST",
            "/search",
            json=body,
            headers={"X-API-KEY": key or "", "Accept": "application/json"},
            secrets=(key,) if key else (),
        )

    def parse(self, response: HttpResponse, query: Query) -> list[Hit]:
        """`organic[]` -> hits; a refusal's `message` ("Not enough credits") names the cause."""
        if response.status >= 300 and (message := error_message(response, "message")):
            raise api_error(message, response)
        self.check_status(response)
        organic = json_object(response, "Serper").get("organic", [])
        if not isinstance(organic, list):
            raise EngineParseError("Serper answered with an 'organic' that is not a list")
        hits: list[Hit] = []
        for item in organic:
            url = http_url(item.get("link")) if isinstance(item, dict) else None
            if not url:
                continue
            hits.append(
                Hit(
                    title=clean_text(item.get("title")) or url,
                    url=url,
                    snippet=clean_text(item.get("snippet")),
                    rank=len(hits) + 1,
                    engine=self.name,
                    published=iso_date(item.get("date")),
                )
            )
        return hits
