"""Canonical URL keys: two URLs that name the same page get the same key.

The key is lower-case, `https` for both http and https, without `www.`/`m.` (or an `m` second,
as in `en.m.wikipedia.org`), default ports, user info, fragments, tracking parameters and
trailing slashes, with the query sorted and an internationalised host in one spelling
(`xn--bcher-kva.de` is `bücher.de`). A `#!` fragment stays: it names a page of a single-page
site. The key is an identity for merging, never shown as the result's link (that stays an
engine's original).
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
_DROP_HOST_PREFIXES = ("www.", "m.")
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
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def _normalise_escape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _DECODED else "%" + match.group(1).upper()


def _plain_query(query: str) -> str | None:
    """The canonical form of a query of unreserved characters, "=" and "&", as `parse_qsl` and
    `urlencode` make it below (nothing to decode or quote); None when a value holds "=", which
    they would quote."""
    pairs = []
    for piece in query.split("&"):
        name, _, value = piece.partition("=")
        if "=" in value:
            return None
        if piece and not _is_tracking(name):
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
        or host.startswith(_DROP_HOST_PREFIXES)
        or _IDNA_PREFIX in host
        or _MOBILE_LABEL in host
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
    simple = simple_parts(text)
    # The simple host is lower-case already, and a path or query is often empty or clean: each
    # step below is taken only where it can change something (canonicalising is per link).
    if (
        simple is not None
        and (host := _clean_host(simple[0]) if _unclean(simple[0]) else simple[0])
        and (query := _plain_query(simple[2]) if simple[2] else "") is not None
    ):
        path = simple[1] or ""
        if path.endswith("/"):
            path = path.rstrip("/")
        key = f"https://{host}{path}" + (f"?{query}" if query else "")
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
    path = path.rstrip("/")
    query = ""
    if parts.query:
        # Escapes that are not UTF-8 (`M%FCller`, Latin-1) come back as they were, where
        # decoding would make every such value one replacement character.
        pairs = [
            (name, value)
            for name, value in parse_qsl(
                parts.query, keep_blank_values=True, errors="surrogateescape"
            )
            if not _is_tracking(name)
        ]
        query = (
            urlencode(sorted(pairs), quote_via=quote, safe="", errors="surrogateescape")
            if pairs
            else ""
        )
    key = f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")
    if parts.fragment.startswith("!"):  # `#!/products/1`: a route, another page
        key += "#" + _ESCAPE.sub(_normalise_escape, quote(parts.fragment, safe=_PATH_SAFE + "?#"))
    return CanonicalURL(key, host, path)


def canonical_key(url: str) -> str:
    """The merge key of `url`: two URLs naming the same page get the same key."""
    return canonicalize(url).key
