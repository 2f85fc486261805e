"""Domain quality by host and registered domain.

Registered domains come from tldextract with its bundled public suffix list: no fetch, no disk
cache. Lists (blocked, penalised, dictionary, authority, low-quality suffixes) match a host and
every subdomain of it: `example.com` covers `docs.example.com` but not `badexample.com`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import tldextract

from websearch_mcp.config import RankingSettings
from websearch_mcp.ranking.lexical import QueryTerms, is_shouted
from websearch_mcp.ranking.tokens import stem
from websearch_mcp.ranking.urls import unicode_host

# Built-in lists; the settings' lists are added to them.
PENALIZED_DOMAINS = (
    "amazon.com", "amazon.co.uk", "amazon.de", "amazon.co.jp", "amazon.in", "ebay.com",
    "ebay.co.uk", "ebay.de", "aliexpress.com", "alibaba.com", "walmart.com", "etsy.com",
    "temu.com", "shein.com", "bestbuy.com", "target.com", "flipkart.com", "rakuten.com",
    "rakuten.co.jp", "mercari.com", "wish.com", "newegg.com", "taobao.com", "tmall.com",
    "jd.com", "pinduoduo.com", "1688.com", "made-in-china.com", "dhgate.com", "pinterest.com",
    "shopee.com", "lazada.com", "apple.com", "samsung.com",
)  # fmt: skip
DICTIONARY_DOMAINS = (
    "merriam-webster.com", "dictionary.com", "thefreedictionary.com", "wiktionary.org",
    "collinsdictionary.com", "dictionary.cambridge.org", "oxfordlearnersdictionaries.com",
    "urbandictionary.com", "vocabulary.com", "yourdictionary.com", "wordreference.com",
    "macmillandictionary.com", "definitions.net", "acronymfinder.com", "abbreviations.com",
    "dict.youdao.com", "iciba.com", "zdic.net", "dict.cn", "hjdict.com", "linguee.com",
)  # fmt: skip
AUTHORITY_DOMAINS = (
    "docs.python.org", "python.org", "postgresql.org", "sqlite.org", "mysql.com",
    "developer.mozilla.org", "w3.org", "whatwg.org", "ietf.org", "rfc-editor.org",
    "readthedocs.io", "readthedocs.org", "docs.rs", "doc.rust-lang.org", "rust-lang.org",
    "pkg.go.dev", "go.dev", "nodejs.org", "typescriptlang.org", "react.dev", "kernel.org",
    "man7.org", "gnu.org", "apache.org", "docker.com", "kubernetes.io", "learn.microsoft.com",
    "developer.apple.com", "developer.android.com", "cloud.google.com", "developers.google.com",
    "docs.aws.amazon.com", "aws.amazon.com", "docs.github.com", "github.com", "gitlab.com",
    "stackoverflow.com", "pypi.org", "npmjs.com", "crates.io", "wikipedia.org", "arxiv.org",
    "nih.gov", "nature.com", "science.org", "acm.org", "ieee.org", "who.int", "europa.eu",
)  # fmt: skip
#: First labels of documentation hosts, and first labels of public-institution suffixes: both
#: give a site half an authority (`boosts.site_authority`).
DOCS_HOST_LABELS = frozenset({"docs", "doc", "developer", "developers", "learn", "manual", "wiki"})
PUBLIC_SUFFIX_LABELS = frozenset({"gov", "edu", "ac", "mil", "int"})
LOW_QUALITY_TLDS = (
    "xyz", "top", "click", "loan", "work", "gq", "tk", "ml", "cf", "ga", "buzz", "icu", "cyou",
    "rest", "monster", "bid", "win", "review", "country", "stream", "download", "racing", "men",
    "date", "faith", "cricket", "party", "trade", "accountant", "zip", "mov", "sbs", "cfd",
    "bond", "lol", "quest",
)  # fmt: skip

# One extractor for the process. It reads the bundled suffix list on first use, which takes a
# while: a server does that at start (`load_suffix_list`), not in its first search.
_EXTRACT = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=())

# Error codes as typed: errno names (ENOENT), vendor codes (ORA-00942, TS2345, E0277) ...
_ERROR_CODE = re.compile(r"\bE[A-Z]{3,}\b|\b[A-Z]{1,5}-?\d{3,6}\b")
# ... and in any case: hex codes, "exit code 137", "HTTP 503", Chinese "error code".
_ERROR_PHRASE = re.compile(
    r"\b0x[0-9a-f]{4,}\b|\b(?:error|errno|exit|status|http|code)\s*(?:code\s*)?[:#]?\s*-?\d{2,}\b"
    r"|错误码|错误代码|报错",
    re.IGNORECASE,
)
# Every match of either holds a digit, a capital E or the first character of a Chinese phrase.
_MAY_NAME_A_CODE = re.compile(r"[\dE错报]")


@dataclass(frozen=True, slots=True)
class DomainInfo:
    """What the lists need: the host and its registered domain parts."""

    host: str
    registered: str  # example.co.uk (the host itself when it has no public suffix)
    name: str  # example
    suffix: str  # co.uk


@dataclass(frozen=True, slots=True)
class DomainVerdict:
    """The domain factor in (0, 1] and, when penalised, why."""

    factor: float
    reason: str | None = None


_NEUTRAL = DomainVerdict(1.0)  # frozen: one for every host without a penalty


def load_suffix_list() -> None:
    """Read the bundled public suffix list now rather than on the first lookup."""
    _EXTRACT.extract_str("example.com")


@lru_cache(maxsize=8192)
def domain_info(host: str) -> DomainInfo:
    """Split a host with the bundled public suffix list (cached per host)."""
    parts = _EXTRACT.extract_str(host)
    registered = f"{parts.domain}.{parts.suffix}" if parts.domain and parts.suffix else host
    return DomainInfo(host=host, registered=registered, name=parts.domain, suffix=parts.suffix)


_PORT = re.compile(r":\d*$")


def normalise_domain(entry: str) -> str:
    """A list entry as a bare lower-case host: scheme, user, port, path, `www.` and `*.`
    removed, and IDNA labels decoded as in the results' hosts (`xn--bcher-kva.de` is
    `bücher.de`)."""
    entry = entry.strip().lower().split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]
    if not entry.startswith("["):  # an IPv6 literal keeps its colons
        entry = _PORT.sub("", entry)
    entry = entry.strip(".")
    for prefix in ("*.", "www."):
        entry = entry.removeprefix(prefix)
    return unicode_host(entry)


@lru_cache(maxsize=64)
def domain_set(entries: tuple[str, ...]) -> frozenset[str]:
    """A list of domains prepared for `matches` (cached: settings lists rarely change)."""
    return frozenset(normalise_domain(e) for e in entries if e.strip())


#: Hosts whose facts one set of lists keeps (`HostFacts`): more than a day of searches' sites.
SITES_KEPT = 8192


@dataclass(frozen=True, slots=True)
class DomainLists:
    """The configured lists, normalised once for every request with the same ones
    (`domain_lists`). `sites`: each host's `HostFacts` under these lists, shared by every
    request whose lists differ from them in blocked domains at most."""

    blocked: frozenset[str]
    authority: frozenset[str]
    penalized: frozenset[str]
    dictionary: frozenset[str]
    low_quality_tlds: frozenset[str]
    sites: dict[str, HostFacts] = field(default_factory=dict, compare=False, repr=False)


@lru_cache(maxsize=64)
def _sites(
    authority: frozenset[str],
    penalized: frozenset[str],
    dictionary: frozenset[str],
    low_quality_tlds: frozenset[str],
) -> dict[str, HostFacts]:
    """The one table of host facts for these lists (a host's facts depend on them alone)."""
    return {}


def domain_lists(settings: RankingSettings, block_domains: Sequence[str] = ()) -> DomainLists:
    """The built-in lists plus the settings' own, and the user's `block_domains`."""
    # Cached on the settings' own lists (most often empty): a key of the built-in lists joined
    # to them hashed a few hundred domains per request.
    return _lists(
        tuple(settings.authority_domains),
        tuple(settings.penalized_domains),
        tuple(settings.dictionary_domains),
        tuple(settings.low_quality_tlds),
        tuple(block_domains),
    )


@lru_cache(maxsize=64)
def _lists(
    authority_domains: tuple[str, ...],
    penalized_domains: tuple[str, ...],
    dictionary_domains: tuple[str, ...],
    low_quality_tlds: tuple[str, ...],
    block_domains: tuple[str, ...],
) -> DomainLists:
    authority = domain_set(AUTHORITY_DOMAINS + authority_domains)
    penalized = domain_set(PENALIZED_DOMAINS + penalized_domains)
    dictionary = domain_set(DICTIONARY_DOMAINS + dictionary_domains)
    low_quality = domain_set(LOW_QUALITY_TLDS + low_quality_tlds)
    return DomainLists(
        blocked=domain_set(block_domains),
        authority=authority,
        penalized=penalized,
        dictionary=dictionary,
        low_quality_tlds=low_quality,
        sites=_sites(authority, penalized, dictionary, low_quality),
    )


@lru_cache(maxsize=8192)
def _suffixes(host: str) -> tuple[str, ...]:
    labels = host.split(".")
    return tuple(".".join(labels[i:]) for i in range(len(labels)))


def matches(host: str, domains: frozenset[str]) -> bool:
    """Whether `host` is one of `domains` (normalised) or a subdomain of one."""
    return bool(domains) and not domains.isdisjoint(_suffixes(host))


def is_error_code_query(text: str) -> bool:
    """Whether the query asks about an error code (ENOENT, 0x80070005, ORA-00942, exit code 137)."""
    if not _MAY_NAME_A_CODE.search(text):  # most queries: one short scan, not both patterns
        return False
    return bool((not is_shouted(text) and _ERROR_CODE.search(text)) or _ERROR_PHRASE.search(text))


class HostFacts:
    """What the domain verdict and the site's authority read of a host and the lists, apart
    from the query: the same for every request with these lists, so made once per host
    (`host_facts`), where each request would split the host and match it against every list
    again."""

    __slots__ = ("authority", "dictionary", "documentation", "low_quality", "name", "penalized")

    def __init__(self, host: str, lists: DomainLists) -> None:
        info = domain_info(host)
        self.authority = matches(host, lists.authority)
        last = info.suffix.rsplit(".", 1)[-1]
        low = bool(info.suffix) and (
            info.suffix in lists.low_quality_tlds or last in lists.low_quality_tlds
        )
        self.low_quality = f"low-quality suffix .{info.suffix}" if low else None
        self.dictionary = matches(host, lists.dictionary)
        self.penalized = matches(host, lists.penalized)
        # The words that name the site in a query (`redis` for redis.io), none without a name.
        self.name = (stem(info.name), info.name.replace("-", "")) if info.name else None
        # Documentation hosts (docs.*, developer.*) and public-institution suffixes (.gov,
        # .ac.uk; not the bare .ac, Ascension Island's, open to anyone).
        first, _, rest = info.suffix.partition(".")
        self.documentation = host.split(".", 1)[0] in DOCS_HOST_LABELS or (
            first in PUBLIC_SUFFIX_LABELS and (bool(rest) or first != "ac")
        )

    def named_by(self, query: QueryTerms) -> bool:
        """Whether the query names the site itself (`redis` for redis.io), its own subject."""
        name = self.name
        return name is not None and (name[0] in query.words or name[1] in query.words)

    def verdict(self, query: QueryTerms, error_code: bool, penalty: float) -> DomainVerdict:
        """The domain factor: 1 - `penalty` for low-quality suffixes, dictionaries on error-code
        queries and e-commerce/brand sites the query does not name; 1 otherwise, and always 1
        on an authority site (docs.aws.amazon.com is not amazon.com's shop)."""
        if penalty <= 0.0 or self.authority:
            return _NEUTRAL
        reason = self.low_quality
        if reason is None:
            if error_code and self.dictionary:
                reason = "dictionary for an error-code query"
            elif self.penalized and not self.named_by(query):
                reason = "e-commerce or brand site"
        return DomainVerdict(1.0 - penalty, reason) if reason else _NEUTRAL

    def site_authority(self, query: QueryTerms) -> float:
        """`boosts.site_authority` of the host."""
        if self.authority or self.named_by(query):
            return 1.0
        return 0.5 if self.documentation else 0.0


def host_facts(host: str, lists: DomainLists) -> HostFacts:
    """The facts of `host` under `lists`, made on its first request (see `HostFacts`)."""
    sites = lists.sites
    found = sites.get(host)
    if found is None:
        if len(sites) >= SITES_KEPT:  # rare: a new table, rather than an order to keep
            sites.clear()
        found = sites[host] = HostFacts(host, lists)
    return found
