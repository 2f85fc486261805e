"""The native scans (`text_scan.c`): the same answers as the Python they stand in for, on any
text, and clear errors.

The module is built with the compiled modules (`setup.py`, WEBSEARCH_MCP_COMPILE=1):
`tests/ranking/test_compiled.py` builds them and runs these tests, and every other engine and
ranking test, on that build. In a plain tree they skip."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.native import native_module
from websearch_mcp.engines import common, text
from websearch_mcp.ranking import urls

text_scan = native_module("websearch_mcp.text_scan")
canonical_url, plain_link, simple_url, single_spaced = (
    text_scan.canonical_url,
    text_scan.plain_link,
    text_scan.simple_url,
    text_scan.single_spaced,
)

# Every character the pattern treats apart, and some it never accepts.
URL_CHARS = "az09.-AZ/:@!$&'()*+,;=_~?=&#% \t\r\n\x00\x7fé\u3000\U0001f600"
_URLS = st.builds(
    lambda prefix, rest: prefix + rest,
    st.sampled_from(["http://", "https://", "HTTP://", "http:/", "ftp://", "", "https://www."]),
    st.text(alphabet=URL_CHARS, max_size=40),
)
# Whitespace `split()` breaks on (ASCII and not), and characters around it.
SPACE_CHARS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2003\u3000ab.é\U0001f600"
# Latin-1 texts long enough to be read eight bytes at a time, with the other characters apart.
_LATIN1_TEXTS = st.lists(
    st.one_of(
        st.text(alphabet="ab ", min_size=1, max_size=20),
        st.sampled_from(["  ", " ", "\t", "\n", "\x1f", "\x01", "\x85", "\xa0", "é", "\x7f"]),
    ),
    max_size=12,
).map("".join)


# Links as engines give them and as they go wrong: hosts with "www." / "m." prefixes and dots
# after, paths with slashes at the end, an empty or a real query, whitespace around, and the
# characters the simple shape refuses.
_LINKS = st.builds(
    lambda space, scheme, prefix, host, dot, path, query, after: (
        space + scheme + prefix + host + dot + path + query + after
    ),
    st.sampled_from(["", " ", "\t\n", "\x1f", "\xa0"]),
    st.sampled_from(["https://", "http://", "HTTPS://", "https:/", ""]),
    st.sampled_from(["", "www.", "m.", "www.m.", "m.www.", "www.www."]),
    st.text(alphabet="ab.-1A_", max_size=12),
    st.sampled_from(["", ".", ".."]),
    st.text(alphabet="/ab.%~:@+é#", max_size=12),
    st.sampled_from(
        [
            "",
            "?",
            "?a=1",
            "?utm_source=x&b=2",
            "?a b",
            "??",
            "?b=2&a=1&a=0&a",
            "?x=1=2",
            "?&&c=&UTM_x=1&Ref=2&pk_a&mtm&b",
            "?a=1#f",
            "?a=%41",
        ]
    ),
    st.sampled_from(["", " ", "\n", "#top", "é"]),
)


def link_groups(value: str) -> tuple[str, str | None] | None:
    match = common._PLAIN_LINK.fullmatch(value)
    return None if match is None else (match[1], match[2])


def regex_groups(value: str) -> tuple[str, str | None, str | None] | None:
    match = urls._SIMPLE_URL.fullmatch(value)
    return None if match is None else (match[1], match[2], match[3])


@settings(max_examples=3000)
@given(_URLS)
def test_simple_url_gives_the_patterns_groups(value: str) -> None:
    assert simple_url(value) == regex_groups(value)


@settings(max_examples=3000)
@given(_URLS)
def test_plain_link_gives_the_patterns_groups(value: str) -> None:
    assert plain_link(value) == link_groups(value)


@pytest.mark.parametrize(
    ("value", "groups"),
    [
        ("https://Example.com", ("Example.com", None)),
        ("http://a.b/é?x#y", ("a.b", "/é?x#y")),
        ("https://?q", ("", "?q")),
        ("https://a.b#\n", None),
        ("https://a_b/", None),
        ("http:/a", None),
        ("https://a.b/\U0001f600", ("a.b", "/\U0001f600")),
    ],
)
def test_plain_link_examples(value: str, groups: tuple[str, str | None] | None) -> None:
    assert plain_link(value) == groups == link_groups(value)


@pytest.mark.parametrize(
    ("value", "groups"),
    [
        ("https://example.com", ("example.com", None, None)),
        ("http://a.b/c/d?x=1&y=", ("a.b", "/c/d", "x=1&y=")),
        ("https://a.b?", ("a.b", None, "")),
        ("https://a.b/", ("a.b", "/", None)),
        ("https://a.b/p?q=1?", None),
        ("https://A.b/", None),
        ("https://a.b:443/", None),
        ("https://", None),
        ("https://a.b/é", None),
    ],
)
def test_simple_url_examples(value: str, groups: tuple[str, str | None, str | None] | None) -> None:
    assert simple_url(value) == groups == regex_groups(value)


@settings(max_examples=3000)
@given(st.text(alphabet=SPACE_CHARS, max_size=30))
def test_single_spaced_says_whether_collapsing_changes_the_text(value: str) -> None:
    assert single_spaced(value) == (" ".join(value.split()) == value)
    assert text.collapse_spaces(value) == " ".join(value.split())


@settings(max_examples=3000)
@given(_LATIN1_TEXTS)
def test_single_spaced_on_long_latin1_texts(value: str) -> None:
    assert single_spaced(value) == (" ".join(value.split()) == value)


@pytest.mark.parametrize(
    ("value", "plain"),
    [("", True), ("a b", True), (" a", False), ("a ", False), ("a  b", False), ("a\nb", False),
     ("a\u3000b", False), ("a\xa0b", False), ("é b", True), (" ", False)],
)  # fmt: skip
def test_single_spaced_examples(value: str, plain: bool) -> None:
    assert single_spaced(value) is plain


def canonical(value: str, cls: type = urls.CanonicalURL) -> object:
    return canonical_url(value, cls, urls.TRACKING_PARAMS, urls.TRACKING_PREFIXES)


@settings(max_examples=5000)
@given(st.one_of(_LINKS, _URLS))
def test_canonical_url_is_canonicalize_or_none(value: str) -> None:
    found = canonical(value)
    if found is not None:
        assert type(found) is urls.CanonicalURL
        assert found == urls.canonical_form(value)
    assert urls.canonicalize(value) == urls.canonical_form(value)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("https://www.example.com/a/", "https://example.com/a"),
        (" http://m.www.example.com.//?\n", "https://example.com"),
        ("https://www.com/", "https://www.com"),
        ("https://m.m.example.com/x//", "https://example.com/x"),
        ("https://a.b/p/?utm_source=x&b=2&a=1&a=0", "https://a.b/p?a=0&a=1&b=2"),
        ("https://a.b/?Ref=1&GCLID=2&utm_x&&k", "https://a.b?k="),
        ("https://a.b/?utm_a=1", "https://a.b"),
    ],
)
def test_canonical_url_examples(value: str, key: str) -> None:
    found = canonical(value)
    assert found is not None and found.key == key
    assert found == urls.canonical_form(value)


@pytest.mark.parametrize(
    "value",
    ["https://a.b/?x=1=2", "https://a.b/#top", "https://A.b/", "https://.../", "https://a.b/é",
     "ftp://a.b/", "https://a.b:443/", "https://a.b/\u3000", "https://a.b/?a=%41",
     "https://a.b/?" + "&".join(f"p{i}=1" for i in range(65))],
)  # fmt: skip
def test_canonical_url_leaves_the_rest_to_python(value: str) -> None:
    assert canonical(value) is None
    assert urls.canonicalize(value) == urls.canonical_form(value)


def test_canonical_url_needs_its_arguments() -> None:
    tracking, prefixes = urls.TRACKING_PARAMS, urls.TRACKING_PREFIXES
    with pytest.raises(TypeError, match="subclass of tuple"):
        canonical_url("https://a.b/", list, tracking, prefixes)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="takes a text, a tuple type, a set and a tuple"):
        canonical_url("https://a.b/", tuple)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="a set of tracking names and a tuple of prefixes"):
        canonical_url("https://a.b/", tuple, ["ref"], prefixes)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="prefixes of ASCII str"):
        canonical_url("https://a.b/", tuple, tracking, ("é",))


@pytest.mark.parametrize("scan", [plain_link, simple_url, single_spaced, canonical])
def test_a_non_string_is_a_clear_type_error(scan: object) -> None:
    with pytest.raises(TypeError, match="wants a str, not bytes"):
        scan(b"https://example.com")  # type: ignore[operator]


def test_no_references_are_leaked() -> None:
    value = "https://example.com/a?b=1"
    cls = urls.CanonicalURL
    before, cls_before = sys.getrefcount(value), sys.getrefcount(cls)
    for _ in range(1000):
        simple_url(value)
        plain_link(value)
        single_spaced(value)
        canonical(value, cls)
        canonical("https://www.example.com/a/?utm_x=1&b=2&a", cls)
    after, cls_after = sys.getrefcount(value), sys.getrefcount(cls)
    assert (after, cls_after) == (before, cls_before)
