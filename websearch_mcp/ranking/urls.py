"""Canonical URL keys: two URLs that name the same page get the same key.

The key is lower-case, `https` for both http and https, without `www.`/`m.`, default ports,
user info, fragments, tracking parameters and trailing slashes, with the query sorted. It is
an identity for merging, never shown as the result's link (that stays an engine's original).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

# Parameters that only say where a click came from; they never change the page.
TRACKING_PARAMS = frozenset(
    {
        "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "ttclid", "igshid",
        "mc_cid", "mc_eid", "ref", "ref_src", "ref_url", "referrer", "_ga", "_gl", "_hsenc",
        "_hsmi", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "wickedid", "srsltid",
        "spm", "scm", "share_source", "from_source", "cmpid", "s_cid",
    }
)  # fmt: skip
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_")
_DROP_HOST_PREFIXES = ("www.", "m.")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_WEB_SCHEMES = frozenset({"http", "https"})
# Percent-escapes: upper-case them, and decode the ones that stand for unreserved characters.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def _normalise_escape(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _clean_host(host: str) -> str:
    host = host.lower().rstrip(".")
    changed = True
    while changed:  # "m.www.example.com" and friends
        changed = False
        for prefix in _DROP_HOST_PREFIXES:
            if host.startswith(prefix) and host.count(".") > 1:
                host = host[len(prefix) :]
                changed = True
    return host


@lru_cache(maxsize=4096)
def canonical_key(url: str) -> str:
    """The merge key of `url`, e.g. `http://www.Example.com:80/a/?utm_source=x&b=2&a=1#top` ->
    `https://example.com/a?a=1&b=2`. A string that is not a URL is returned trimmed."""
    text = url.strip()
    if "://" not in text and not text.startswith("//"):
        text = "https://" + text if "." in text.split("/", 1)[0] else text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower() or "https"
    web = scheme in _WEB_SCHEMES
    if web:
        scheme = "https"  # one page, whichever protocol an engine happened to list
    host = _clean_host(parts.hostname or "")
    if not host:
        return text
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    default = port is None or (web and port in _DEFAULT_PORTS.values())
    netloc = host if default else f"{host}:{port}"
    path = _ESCAPE.sub(_normalise_escape, quote(parts.path, safe=_PATH_SAFE)).rstrip("/")
    pairs = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_tracking(name)
    ]
    query = urlencode(sorted(pairs), quote_via=quote, safe="") if pairs else ""
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def key_host(key: str) -> str:
    """The host of a canonical key (without port)."""
    netloc = key.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    if netloc.startswith("["):
        return netloc[1 : netloc.find("]")]
    return netloc.split(":", 1)[0]


def key_path(key: str) -> str:
    """The path of a canonical key ("" for the home page), without the query."""
    rest = key.split("://", 1)[-1].split("?", 1)[0]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else ""
