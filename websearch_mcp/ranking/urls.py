"""Canonical URL keys: two URLs that name the same page get the same key.

The key is lower-case, `https` for both http and https, without `www.`/`m.` (or an `m` second,
as in `en.m.wikipedia.org`), default ports, user info, fragments, tracking parameters (YouTube's
share parameters too), doubled and trailing slashes, with the query sorted and an
internationalised host in one spelling (`xn--bcher-kva.de` is `bücher.de`). A `#!` or `#/`
fragment stays: it names a page of a single-page site. Copies are their page:
`mobile.twitter.com`, Google's AMP cache, `?amp=1` and `story.amp.html`, an `index.html`, a
paper's arXiv abstract, PDF, HTML and versions; a DOI link is one DOI in any letter case at
doi.org or dx.doi.org. The key is an identity for merging, never shown as the result's link
(that stays an engine's original).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final, NamedTuple
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

#: A simple URL's host, path and query (`simple_parts`).
URLGroups = tuple[str, str | None, str | None]


# Parameters that only say where a click came from; they never change the page.
TRACKING_PARAMS: Final = frozenset(
    {
        "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
        "mc_cid", "mc_eid", "ref", "ref_src", "ref_url", "referrer", "_ga", "_gl", "_hsenc",
        "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "wickedid", "srsltid",
        "spm", "scm", "share_source", "from_source", "cmpid", "s_cid",
    }
)  # fmt: skip
TRACKING_PREFIXES: Final = ("utm_", "pk_", "mtm_")
# Parameters that ask for the AMP copy of a page (`?amp=1`) or say how the AMP cache served it.
_AMP_PARAMS = frozenset({"amp", "amp_js_v", "amp_gsa", "amp_tf", "usqp"})
# Parameters that only say how a link was shared on one site (`feature=share` on YouTube); a
# page of another site may name a page by them.
_YOUTUBE_SHARING = frozenset({"feature", "si", "ab_channel"})
_SITE_TRACKING: Final = {"youtube.com": _YOUTUBE_SHARING, "youtu.be": _YOUTUBE_SHARING}
_DROP_HOST_PREFIXES = ("www.", "m.")
# `mobile.` names a site's mobile pages only on some sites (`mobile.free.fr` is a phone
# company's site, `free.fr` its parent's): those whose mobile host copies the site.
_MOBILE_PREFIX = "mobile."
_MOBILE_SITES = frozenset({"twitter.com", "x.com"})
_MOBILE_LABEL = ".m."  # second in a host: the mobile pages of the site the first label names
_IDNA_PREFIX = "xn--"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_WEB_SCHEMES = frozenset({"http", "https"})
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
# Percent-escapes: upper-case them, and decode the ones that stand for characters a path holds
# as they are (unreserved, and `:@!$&'()*+,;=`): engines write Wikipedia's `Python_(language)`
# both ways, and sites serve one page for both.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_DECODED = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + _PATH_SAFE
) - frozenset("/%")
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/:@!$&'()*+,;=\-._~]*")  # nothing to quote or decode
# Most URLs engines return: lower-case host, no port, user info or fragment, a path with
# nothing to quote or decode, and a query, if any, of unreserved characters, "=" and "&". Their
# key needs no parsing (same result, a fraction of the time: merging every engine's list
# canonicalises each URL once).
_SIMPLE_URL = re.compile(
    r"https?://([a-z0-9.-]+)(/[A-Za-z0-9/:@!$&'()*+,;=\-._~]*)?(?:\?([A-Za-z0-9._~=&-]*))?"
)


def simple_parts(text: str) -> URLGroups | None:
    """The groups of `_SIMPLE_URL` matching all of `text` (host, path, query), or None."""
    match = _SIMPLE_URL.fullmatch(text)
    return None if match is None else (match[1], match[2], match[3])


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered in TRACKING_PARAMS
        or lowered in _AMP_PARAMS
        or lowered.startswith(TRACKING_PREFIXES)
    )


_AMP_CACHE = ".cdn.ampproject.org"
# Hosts that serve another host's pages under its paths.
_SAME_SITE = {"dx.doi.org": "doi.org", "export.arxiv.org": "arxiv.org"}
_ARXIV_PAGE = re.compile(
    r"/(?:abs|pdf|html)/(\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?(?:\.pdf)?",
    re.IGNORECASE,
)
_INDEX_PAGES = ("/index.html", "/index.htm")
# The AMP convention's name for a page's copy: `story.amp.html` for `story.html`.
_AMP_PAGE = ".amp.html"
_SLASHES = re.compile(r"//+")


def _amp_origin(text: str) -> str | None:
    """The page an AMP cache URL copies, or None when `text` is no such URL: Google's cache
    serves `https://<host>/<path>` at `<host-with-dashes>.cdn.ampproject.org/c/s/<host>/<path>`
    (`/c/<host>/...` for an http page, `/v/` in its viewer's form)."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if not (parts.hostname or "").endswith(_AMP_CACHE):
        return None
    kind, _, rest = parts.path.lstrip("/").partition("/")
    secure = rest.startswith("s/")
    origin = rest[2:] if secure else rest
    if kind not in ("c", "v") or not origin.split("/", 1)[0]:
        return None
    query = f"?{parts.query}" if parts.query else ""
    return ("https://" if secure else "http://") + origin + query


def _without_index(path: str) -> str:
    """A path with one slash for several, without a final slash or index page, an AMP copy
    named as its page: `/docs//index.html` is `/docs`, `/a/story.amp.html` `/a/story.html`."""
    if "//" in path:  # a template's doubled slash: servers read `/a//b` as `/a/b`
        path = _SLASHES.sub("/", path)
    path = path.rstrip("/")
    # Each in turn (`/docs/index.html/index.html`): a key is its own canonical form.
    while True:
        if path.endswith(_INDEX_PAGES):
            path = path.rpartition("/")[0].rstrip("/")
        elif path.endswith(_AMP_PAGE) and not path.endswith("/" + _AMP_PAGE):
            path = path[: -len(_AMP_PAGE)] + ".html"
        else:
            return path


def _key_of(host: str, path: str) -> str:
    """The host and path a key names: one paper's arXiv pages (abstract, PDF, HTML, any
    version) as its abstract, a DOI link in one spelling (DOIs are case-insensitive)."""
    if host == "arxiv.org" and (found := _ARXIV_PAGE.fullmatch(path)):
        return f"arxiv.org/abs/{found[1].lower()}"
    return "doi.org" + path.lower() if host == "doi.org" else host + path


def _normalise_escape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _DECODED else "%" + match.group(1).upper()


def _plain_query(query: str, host: str) -> str | None:
    """The canonical form of a query of unreserved characters, "=" and "&", as `parse_qsl` and
    `urlencode` make it below (nothing to decode or quote); None when a value holds "=", which
    they would quote."""
    pairs = []
    site = _SITE_TRACKING.get(host, ())
    for piece in query.split("&"):
        name, _, value = piece.partition("=")
        if "=" in value:
            return None
        if piece and not _is_tracking(name) and name not in site:
            pairs.append((name, value))
    pairs.sort()
    return "&".join([f"{name}={value}" for name, value in pairs])


def _split_netloc(netloc: str) -> tuple[str, int | str | None]:
    """Host and port of a netloc without user info; port "invalid" when it is not a number."""
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):  # [IPv6]:port
        host, _, rest = hostport[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = hostport.partition(":")
    if not port_text:
        return host, None
    if not port_text.isdigit() or int(port_text) > 65535:
        return host, "invalid"
    return host, int(port_text)


def _unicode_label(label: str) -> str:
    """An IDNA label (`xn--bcher-kva`) as the name it encodes (`bücher`); any other label, and
    one that is no valid encoding of a lower-case non-ASCII name, as it is."""
    if not label.startswith(_IDNA_PREFIX):
        return label
    encoded = label[len(_IDNA_PREFIX) :]
    try:
        name = encoded.encode("ascii").decode("punycode")
    except UnicodeError:
        return label
    # Raw Punycode, not the `idna` codec: IDNA 2003 would read `faß` as `fass`, another site.
    valid = (
        not name.isascii() and name == name.lower() and name.encode("punycode") == encoded.encode()
    )
    return name if valid else label


def unicode_host(host: str) -> str:
    """A lower-case host with its IDNA labels decoded (`xn--bcher-kva.de` -> `bücher.de`):
    engines give a host either as typed or as it goes on the wire."""
    if _IDNA_PREFIX not in host:
        return host
    return ".".join([_unicode_label(label) for label in host.split(".")])


def _clean_host(host: str) -> str:
    host = unicode_host(host.lower().rstrip("."))
    first, mobile, rest = host.partition(_MOBILE_LABEL)
    if mobile and "." not in first and "." in rest:  # en.m.wikipedia.org: a site's mobile pages
        host = f"{first}.{rest}"
    host = _SAME_SITE.get(host, host)
    if host.startswith(_MOBILE_PREFIX) and host[len(_MOBILE_PREFIX) :] in _MOBILE_SITES:
        host = host[len(_MOBILE_PREFIX) :]
    if not host.startswith(_DROP_HOST_PREFIXES):  # most hosts
        return host
    changed = True
    while changed:  # "m.www.example.com" and friends
        changed = False
        for prefix in _DROP_HOST_PREFIXES:
            if host.startswith(prefix) and host.count(".") > 1:
                host = host[len(prefix) :]
                changed = True
    return host


def _unclean(host: str) -> bool:
    """Whether `_clean_host` may change a host of lower-case letters, digits, "." and "-"."""
    return (
        host.endswith(".")
        or host.startswith((*_DROP_HOST_PREFIXES, _MOBILE_PREFIX))
        or _IDNA_PREFIX in host
        or _MOBILE_LABEL in host
        or host in _SAME_SITE
    )


class CanonicalURL(NamedTuple):
    """A URL's merge key, and the host (without port) and path it names ("" when not a URL)."""

    key: str
    host: str
    path: str


# Enough for several requests' URLs (each is asked for more than once per request); fresh
# searches seldom share links, so a bigger cache would mostly hold memory.
@lru_cache(maxsize=2048)
def canonicalize(url: str) -> CanonicalURL:
    """The canonical form of `url`, e.g. `http://www.Example.com:80/a/?utm_source=x&b=2&a=1#top`
    -> key `https://example.com/a?a=1&b=2`, host `example.com`, path `/a`. A string that is not
    a URL keeps its trimmed text as the key."""
    text = url.strip()
    if "ampproject" in text and (origin := _amp_origin(text)):  # engines write hosts lower-case
        return canonicalize(origin)
    simple = simple_parts(text)
    # The simple host is lower-case already, and a path or query is often empty or clean: each
    # step below is taken only where it can change something (canonicalising is per link).
    if (
        simple is not None
        and (host := _clean_host(simple[0]) if _unclean(simple[0]) else simple[0])
        and (query := _plain_query(simple[2], host) if simple[2] else "") is not None
    ):
        path = _without_index(simple[1] or "")
        key = f"https://{_key_of(host, path)}" + (f"?{query}" if query else "")
        return CanonicalURL(key, host, path)
    if "://" not in text and not text.startswith("//"):
        text = "https://" + text if "." in text.split("/", 1)[0] else text
    try:
        parts = urlsplit(text)
    except ValueError:
        return CanonicalURL(text, "", "")
    scheme = parts.scheme.lower() or "https"
    web = scheme in _WEB_SCHEMES
    if web:
        scheme = "https"  # one page, whichever protocol an engine happened to list
    host, port = _split_netloc(parts.netloc)
    host = _clean_host(host)
    if not host or port == "invalid":
        return CanonicalURL(text, "", "")
    shown = f"[{host}]" if ":" in host else host  # IPv6 literal
    default = port is None or (web and port in _DEFAULT_PORTS.values())
    netloc = shown if default else f"{shown}:{port}"
    path = parts.path
    if not _PLAIN_PATH.fullmatch(path):
        path = _ESCAPE.sub(_normalise_escape, quote(path, safe=_PATH_SAFE))
    path = _without_index(path)
    query = ""
    if parts.query:
        site = _SITE_TRACKING.get(host, ())
        # Escapes that are not UTF-8 (`M%FCller`, Latin-1) come back as they were, where
        # decoding would make every such value one replacement character.
        pairs = [
            (name, value)
            for name, value in parse_qsl(
                parts.query, keep_blank_values=True, errors="surrogateescape"
            )
            if not _is_tracking(name) and name not in site
        ]
        query = (
            urlencode(sorted(pairs), quote_via=quote, safe="", errors="surrogateescape")
            if pairs
            else ""
        )
    named = _key_of(netloc, path) if default and web else netloc + path
    key = f"{scheme}://{named}" + (f"?{query}" if query else "")
    # `#!/products/1`, `#/guide`: a route of a single-page site, another page (`#/` its first)
    if parts.fragment.startswith(("!", "/")) and parts.fragment.strip("!/"):
        key += "#" + _ESCAPE.sub(_normalise_escape, quote(parts.fragment, safe=_PATH_SAFE + "?#"))
    return CanonicalURL(key, host, path)


def is_copy(url: str) -> bool:
    """Whether `url` is another address of a page than its own: a mobile host (`m.`, `en.m.`,
    `mobile.twitter.com`), a mirror (`dx.doi.org`), Google's AMP cache or an `?amp` or
    `.amp.html` copy.
    Merged with the page's own address, that one is the link to show."""
    simple = simple_parts(url.strip())
    if simple is not None:  # most links: no parsing
        host, path, query = simple
        bare = host.removeprefix("www.")
        lowered = (query or "").lower()
        if not (
            _unclean(bare)
            or host.endswith(_AMP_CACHE)
            or "amp" in lowered
            or "usqp" in lowered
            or _AMP_PAGE in (path or "")
        ):
            return False
    try:
        parts = urlsplit(url.strip())
        # The host in one spelling first: IDNA and a final dot are the page's own address.
        host = unicode_host((parts.hostname or "").rstrip(".")).removeprefix("www.")
    except ValueError:
        return False
    return (
        host.endswith(_AMP_CACHE)
        or _clean_host(host) != host
        or parts.path.rstrip("/").endswith(_AMP_PAGE)
        or any(name.lower() in _AMP_PARAMS for name, _ in parse_qsl(parts.query, True))
    )


def canonical_key(url: str) -> str:
    """The merge key of `url`: two URLs naming the same page get the same key."""
    return canonicalize(url).key
