"""Domain quality, list matching by subdomain, error-code queries."""

from __future__ import annotations

import pytest
import tldextract
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.server_helpers import settings_for
from websearch_mcp.config import RankingSettings
from websearch_mcp.ranking import domain
from websearch_mcp.ranking.domain import (
    DomainLists,
    DomainVerdict,
    domain_info,
    domain_lists,
    host_facts,
    is_error_code_query,
    matches,
    normalise_domain,
)
from websearch_mcp.ranking.lexical import QueryTerms, analyze_query, is_shouted
from websearch_mcp.search.service import SearchService

SETTINGS = RankingSettings()
LISTS = domain_lists(SETTINGS, ["Blocked.example", "https://www.spam.test/path"])


def domain_quality(
    host: str, query: QueryTerms, error_code: bool, lists: DomainLists, penalty: float
) -> DomainVerdict:
    return host_facts(host, lists).verdict(query, error_code, penalty)


def quality(host: str, query: str = "vector database", penalty: float = 0.5) -> float:
    return domain_quality(
        host, analyze_query(query), is_error_code_query(query), LISTS, penalty
    ).factor


def test_registered_domain_from_bundled_suffix_list() -> None:
    info = domain_info("docs.python.co.uk")
    assert (info.registered, info.name, info.suffix) == ("python.co.uk", "python", "co.uk")
    assert domain_info("localhost").registered == "localhost"


def test_lists_match_host_and_subdomains_only() -> None:
    blocked = LISTS.blocked
    assert blocked == {"blocked.example", "spam.test"}
    assert matches("blocked.example", blocked)
    assert matches("a.b.blocked.example", blocked)
    assert not matches("notblocked.example", blocked)
    assert matches("spam.test", blocked)


def test_normalise_domain_entries() -> None:
    assert normalise_domain(" *.Example.COM ") == "example.com"
    assert normalise_domain("https://www.example.com/some/path") == "example.com"
    # Results' hosts carry no port or user: an entry written with them blocks its host.
    assert normalise_domain("example.com:8080") == "example.com"
    assert normalise_domain("https://user@www.example.com:443/x") == "example.com"
    assert normalise_domain("[2001:db8::1]") == "[2001:db8::1]"


def test_ordinary_sites_are_not_penalised() -> None:
    assert quality("postgresql.org") == 1.0
    assert quality("someblog.dev") == 1.0


def test_shops_are_penalised_unless_the_query_names_them() -> None:
    assert quality("amazon.com") == 0.5
    assert quality("www.ebay.co.uk") == 0.5
    assert quality("amazon.com", "amazon return policy") == 1.0
    # A name joined by hyphens names its site as typed.
    assert quality("made-in-china.com", "made-in-china suppliers") == 1.0


def test_authority_subdomain_lifts_a_shop_penalty() -> None:
    assert quality("docs.aws.amazon.com") == 1.0


def test_low_quality_suffix() -> None:
    assert quality("best-vector-db.xyz") == 0.5
    verdict = domain_quality("a.top", analyze_query("x"), False, LISTS, 0.5)
    assert verdict.reason == "low-quality suffix .top"
    assert quality("free-prizes.com.ml") == 0.5  # a suffix under a low-quality one


def test_dictionaries_only_for_error_code_queries() -> None:
    assert quality("merriam-webster.com", "ENOENT no such file or directory") == 0.5
    assert quality("dictionary.cambridge.org", "ORA-00942 table does not exist") == 0.5
    assert quality("merriam-webster.com", "meaning of serendipity") == 1.0


def test_penalty_zero_switches_domains_off() -> None:
    assert quality("amazon.com", penalty=0.0) == 1.0
    assert quality("junk.xyz", penalty=0.0) == 1.0
    assert quality("junk.xyz", penalty=0.8) == pytest.approx(0.2)  # a larger one lowers more


@pytest.mark.parametrize(
    "query",
    ["ENOENT no such file", "0x80070005 windows update", "ORA-00942", "docker exit code 137",
     "HTTP 503 nginx", "git error 128", "npm 报错"],
)  # fmt: skip
def test_error_code_queries(query: str) -> None:
    assert is_error_code_query(query)


@pytest.mark.parametrize(
    "query",
    [
        "python asyncio tutorial",
        "HOW TO FIX THIS",
        "WHERE IS THE ERROR",
        "best laptop 2024",
        "pg18 release",
    ],
)
def test_not_error_code_queries(query: str) -> None:
    assert not is_error_code_query(query)


def test_settings_lists_extend_the_built_in_ones() -> None:
    own = RankingSettings(penalized_domains=["shop.example"], authority_domains=["ours.dev"])
    lists = domain_lists(own)
    query = analyze_query("vector database")
    assert domain_quality("www.shop.example", query, False, lists, 0.5).factor == 0.5
    assert domain_quality("amazon.com", query, False, lists, 0.5).factor == 0.5  # still built in
    assert matches("docs.ours.dev", lists.authority)
    empty = domain_lists(RankingSettings(penalized_domains=[], low_quality_tlds=[]))
    assert domain_quality("x.xyz", query, False, empty, 0.5).factor == 0.5


async def test_a_started_service_has_read_the_suffix_list(
    engines_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list is read at start, not in the first search."""
    real = domain._EXTRACT
    asked: list[str] = []

    class Recording:
        def extract_str(self, host: str) -> tldextract.ExtractResult:
            asked.append(host)
            return real.extract_str(host)

    monkeypatch.setattr(domain, "_EXTRACT", Recording())
    service = SearchService(settings_for(engines_url))
    await service.start()
    await service.close()
    assert asked


def test_host_facts_are_shared_by_requests_with_the_same_lists() -> None:
    first = domain_lists(SETTINGS)
    assert domain_lists(SETTINGS, ["other.example"]).sites is first.sites  # blocking aside
    own = domain_lists(RankingSettings(penalized_domains=["shop.example"]))
    assert own.sites is not first.sites
    query = analyze_query("vector database")
    assert domain_quality("shop.example", query, False, own, 0.5).factor == 0.5
    assert domain_quality("shop.example", query, False, first, 0.5).factor == 1.0
    assert domain.host_facts("shop.example", own) is domain.host_facts("shop.example", own)


def test_host_facts_start_a_new_table_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    lists = domain_lists(RankingSettings(penalized_domains=["full.example"]))
    lists.sites.clear()
    monkeypatch.setattr(domain, "SITES_KEPT", 3)
    query = analyze_query("vector database")
    hosts = ["a.example", "full.example", "b.xyz", "docs.c.example", "amazon.com"]
    factors = [domain_quality(h, query, False, lists, 0.5).factor for h in hosts]
    assert factors == [1.0, 0.5, 0.5, 1.0, 0.5]
    assert len(lists.sites) <= 3


@settings(max_examples=2000)
@given(st.text(alphabet="EeRrOoNnAaTtxX0123456789１٣-:# 错误码代报", max_size=16))
def test_the_quick_scan_never_hides_an_error_code(text: str) -> None:
    both = (
        not is_shouted(text) and domain._ERROR_CODE.search(text)
    ) or domain._ERROR_PHRASE.search(text)
    assert is_error_code_query(text) is bool(both)
