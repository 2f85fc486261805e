"""Canonical URL keys: variants of one page merge, different pages stay apart."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from websearch_mcp.ranking.urls import canonical_key, canonicalize, is_copy

SAME_PAGE = [
    "https://example.com/docs/page",
    "http://example.com/docs/page",
    "https://www.example.com/docs/page",
    "https://m.example.com/docs/page",
    "https://EXAMPLE.com/docs/page",
    "https://example.com/docs/page/",
    "https://example.com:443/docs/page",
    "http://example.com:80/docs/page",
    "https://example.com/docs/page#section-2",
    "https://example.com/docs/page?utm_source=news&utm_medium=email",
    "https://example.com/docs/page?gclid=abc&fbclid=def&ref=hn",
    "https://example.com/docs/page?mc_cid=1&mc_eid=2&msclkid=3",
    "https://example.com/docs/page?srsltid=AfmBOoq1",  # Google's result-click id
    "https://example.com/docs/page?spm=a2g0o.home.0&scm=1007.1",  # Alibaba's
    "https://user:secret@example.com/docs/page",
    "  https://example.com/docs/page  ",
    "https://example.com./docs/page",
    "example.com/docs/page",
]


@pytest.mark.parametrize("url", SAME_PAGE)
def test_variants_of_one_page_share_a_key(url: str) -> None:
    assert canonical_key(url) == "https://example.com/docs/page"


def test_query_is_sorted_and_tracking_removed() -> None:
    a = canonical_key("https://example.com/s?b=2&a=1&utm_campaign=x")
    b = canonical_key("http://www.example.com/s?a=1&b=2")
    assert a == b == "https://example.com/s?a=1&b=2"


def test_query_encoding_variants_merge() -> None:
    assert canonical_key("https://e.com/s?q=a+b") == canonical_key("https://e.com/s?q=a%20b")


def test_percent_escapes_normalised() -> None:
    assert canonical_key("https://e.com/%7euser") == "https://e.com/~user"
    assert canonical_key("https://e.com/%e4%b8%ad") == canonical_key("https://e.com/中")
    assert canonical_key("https://e.com/a%2fb") == "https://e.com/a%2Fb"  # an encoded slash stays
    assert canonical_key("https://e.com/%41%5a") == "https://e.com/AZ"  # upper-case letters too
    # Characters a path may hold as they are, escaped or not: one page.
    wiki = "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert canonical_key(wiki) == canonical_key(
        "https://en.wikipedia.org/wiki/Python_%28programming_language%29"
    )
    assert canonical_key("https://e.com/Help%3aIt%27s%2C%21") == "https://e.com/Help:It's,!"
    assert canonical_key("https://e.com/a%3fb%23c%25") == "https://e.com/a%3Fb%23c%25"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a", "https://example.com/b"),
        ("https://example.com/Page", "https://example.com/page"),  # paths are case-sensitive
        ("https://example.com/s?id=1", "https://example.com/s?id=2"),
        ("https://example.com:8443/a", "https://example.com/a"),
        ("ftp://files.example.com:80/a", "ftp://files.example.com/a"),  # 80 is http's port
        ("https://docs.example.com/a", "https://example.com/a"),
        ("https://example.org/a", "https://example.com/a"),
        # "amp" is a path's word too (a repository, a package, a shop's category of amplifiers).
        ("https://github.com/someone/amp", "https://github.com/someone"),
        ("https://www.npmjs.com/package/amp", "https://www.npmjs.com/package"),
        ("https://github.com/amp/tools", "https://github.com/tools"),
        # `feature=` is a tracking parameter on YouTube only.
        ("https://example.com/docs?feature=dark", "https://example.com/docs"),
    ],
)
def test_different_pages_stay_apart(a: str, b: str) -> None:
    assert canonical_key(a) != canonical_key(b)


def test_host_and_path_of_the_key() -> None:
    parts = canonicalize("http://www.Docs.Example.co.uk:80/Guide/?utm_source=x")
    assert parts.key == "https://docs.example.co.uk/Guide"
    assert parts.host == "docs.example.co.uk"
    assert parts.path == "/Guide"


def test_ipv6_and_other_ports() -> None:
    assert canonicalize("http://[::1]:8080/a/").key == "https://[::1]:8080/a"
    assert canonicalize("http://[::1]:8080/a/").host == "::1"


def test_not_a_url_keeps_its_text() -> None:
    assert canonicalize(" not a url ") == ("not a url", "", "")
    assert canonicalize("https://example.com:notaport/x").host == ""


_HOST_LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8)
_PATH_PART = st.text("abcXYZ019-._~:@!$&'()*+,;=", max_size=8)


@given(
    st.sampled_from(["http://", "https://"]),
    st.lists(_HOST_LABEL, min_size=1, max_size=4).map(".".join),
    st.sampled_from(["", "www.", "m.", "m.www."]),
    st.sampled_from(["", "."]),
    st.lists(_PATH_PART, max_size=4).map(lambda parts: "".join("/" + p for p in parts)),
    st.sampled_from(["", "/", "//"]),
)
@settings(max_examples=300, deadline=None)
def test_plain_urls_key_as_their_parsed_variants(
    scheme: str, host: str, prefix: str, dot: str, path: str, slash: str
) -> None:
    # A plain URL takes a shortcut; variants that need the full parse must land on its key.
    url = f"{scheme}{prefix}{host}{dot}{path}{slash}"
    key = canonicalize(url)
    assert key == canonicalize(f"{scheme}{prefix}{host}{path}{slash}")  # a final dot is no name
    assert canonicalize(f"{url}?utm_source=feed") == key
    assert canonicalize(url.replace(host, host.upper(), 1)) == key
    assert canonicalize(f"{scheme.upper()}{prefix}{host}{path}{slash}#top") == key


_QUERY_TEXT = st.text("abcXYZ019._~-", max_size=6)
_QUERY_NAME = st.one_of(_QUERY_TEXT, st.sampled_from(["utm_source", "UTM_Medium", "ref", "gclid"]))
_QUERY_PIECE = st.one_of(
    st.tuples(_QUERY_NAME, st.sampled_from(["", "="]), _QUERY_TEXT).map("".join),
    st.tuples(_QUERY_NAME, _QUERY_TEXT, _QUERY_TEXT).map(lambda p: f"{p[0]}={p[1]}={p[2]}"),
    st.just(""),
)


@given(
    st.sampled_from(["http://", "https://www."]),
    st.lists(_HOST_LABEL, min_size=1, max_size=3).map(".".join),
    st.lists(_PATH_PART, max_size=3).map(lambda parts: "".join("/" + p for p in parts)),
    st.lists(_QUERY_PIECE, max_size=5).map("&".join),
)
@settings(max_examples=400, deadline=None)
def test_plain_queries_key_as_the_full_parse(scheme: str, host: str, path: str, query: str) -> None:
    # A query of unreserved characters takes the shortcut too; a fragment sends the same URL
    # through `urlsplit`, `parse_qsl` and `urlencode`, which must agree with it.
    url = f"{scheme}{host}{path}?{query}"
    assert canonicalize(url) == canonicalize(f"{url}#frag")


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/docs/page?pk_campaign=spring&pk_kwd=x",
        "https://example.com/docs/page?mtm_source=news&mtm_medium=email",
        "https://example.com/docs/page?PK_Source=a",
    ],
)
def test_matomo_and_piwik_campaign_parameters_are_tracking(url: str) -> None:
    assert canonical_key(url) == "https://example.com/docs/page"


def test_a_host_that_is_only_a_prefix_and_a_suffix_keeps_it() -> None:
    """`www.`/`m.` are dropped only before a registered name: `m.me` is a site of its own."""
    assert canonicalize("https://m.me/page").host == "m.me"
    assert canonicalize("https://www.m.me/page").host == "m.me"
    assert canonical_key("https://m.me/page") != canonical_key("https://me/page")


def test_a_mobile_label_after_a_language_is_the_same_site() -> None:
    """Wikimedia's mobile pages: `en.m.wikipedia.org` is `en.wikipedia.org`."""
    desktop = canonical_key("https://en.wikipedia.org/wiki/Asyncio")
    assert canonical_key("https://en.m.wikipedia.org/wiki/Asyncio") == desktop
    assert canonical_key("http://EN.M.Wikipedia.org./wiki/Asyncio/") == desktop
    assert canonicalize("https://de.m.wiktionary.org/wiki/a").host == "de.wiktionary.org"
    # Only second, and only before a registered name: these stay as they are.
    assert canonicalize("https://a.b.m.example.com/").host == "a.b.m.example.com"
    assert canonicalize("https://x.m.com/").host == "x.m.com"


def test_an_internationalised_host_and_its_punycode_are_one_site() -> None:
    """Engines give a host as typed (`bücher.de`) or as sent on the wire (`xn--bcher-kva.de`)."""
    unicode_form = canonicalize("https://www.Bücher.de/buch/1")
    assert canonicalize("https://xn--bcher-kva.de/buch/1") == unicode_form
    assert canonicalize("http://XN--BCHER-KVA.de:80/buch/1/?utm_source=x") == unicode_form
    assert unicode_form.host == "bücher.de"
    # `faß.de` is a name of its own, not `fass.de` (IDNA 2003 would map ß to ss)
    assert canonical_key("https://xn--fa-hia.de/") == canonical_key("https://faß.de/")
    assert canonical_key("https://faß.de/") != canonical_key("https://fass.de/")
    assert canonical_key("https://xn--zz-invalid-.de/a") == "https://xn--zz-invalid-.de/a"


def test_query_values_in_a_legacy_charset_stay_apart() -> None:
    """`M%FCller` and `M%F6ller` (Müller, Möller in Latin-1) name two pages, not one."""
    a = canonical_key("https://example.de/suche?name=M%FCller")
    b = canonical_key("https://example.de/suche?name=M%F6ller")
    assert a != b
    assert a == canonical_key("https://example.de/suche?name=M%fcller&utm_source=x")
    assert canonical_key("https://e.com/s?q=%C3%BC") == canonical_key("https://e.com/s?q=ü")


def test_hashbang_routes_are_pages() -> None:
    """`#!` marks a fragment that names a page of a single-page site (the AJAX crawling
    convention); any other fragment is a place on one page."""
    first = canonical_key("https://example.com/#!/products/1")
    assert first != canonical_key("https://example.com/#!/products/2")
    assert first != canonical_key("https://example.com/")
    assert first == canonical_key("http://www.example.com/#!/products/1")
    assert canonical_key("https://example.com/a?x=1#!/r") == "https://example.com/a?x=1#!/r"


def test_only_punycode_labels_of_a_host_are_decoded() -> None:
    """A label without `xn--` is a name as it is, even one that Punycode could read (`com`); a
    `xn--` label is decoded only when it encodes a lower-case name (IDNA maps case away)."""
    assert canonicalize("https://xn--bcher-kva.example.com/a").host == "bücher.example.com"
    assert canonicalize("https://xn--tda.de/").host == "ü.de"
    # `xn--wca` spells "Ü", which no IDNA encoder writes: it stays as it is
    assert canonicalize("https://xn--wca.de/").host == "xn--wca.de"


def test_a_hashbang_route_is_keyed_in_one_spelling() -> None:
    """An engine gives the route as typed or percent-encoded: one page either way."""
    typed = canonical_key("https://example.com/#!/café")
    assert typed == canonical_key("https://example.com/#!/caf%c3%a9")
    assert typed == "https://example.com#!/caf%C3%A9"


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("http://example.com:80/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("https://example.com/caf%C3%A9?z=%C3%A9&a=1", "https://example.com/café?a=1&z=é"),
        ("https://example.com/a?b=x%20y&a=1&utm_source=z", "https://example.com/a?a=1&b=x%20y"),
    ],
)
def test_query_parameters_in_another_order_are_one_page(one: str, other: str) -> None:
    """Whatever path canonicalising takes (a port, escapes, tracking parameters), the order of
    a URL's query parameters does not make it another result."""
    assert canonicalize(one).key == canonicalize(other).key


def test_a_mobile_host_is_the_same_site() -> None:
    """`mobile.twitter.com` serves twitter.com's pages as `m.` hosts do; `mobile.de` and
    `mobile.free.fr` (a phone company's site, not its parent's `free.fr`) are sites of their
    own."""
    desktop = canonical_key("https://twitter.com/python_tip/status/1")
    assert canonical_key("https://mobile.twitter.com/python_tip/status/1") == desktop
    assert canonical_key("http://Mobile.Twitter.com/python_tip/status/1/") == desktop
    assert canonicalize("https://mobile.de/auto").host == "mobile.de"
    assert canonical_key("https://mobile.free.fr/") != canonical_key("https://www.free.fr/")


@pytest.mark.parametrize(
    "amp",
    [
        "https://www-example-com.cdn.ampproject.org/c/s/www.example.com/news/story",
        "https://www-example-com.cdn.ampproject.org/v/s/www.example.com/news/story?amp_js_v=0.1",
        "https://example-com.cdn.ampproject.org/c/example.com/news/story",
        "https://www.example.com/news/story?amp=1",
        "https://www.example.com/news/story?amp",
        "https://www.example.com/news/story?outputType=amp&amp=1",
    ],
)
def test_an_amp_copy_is_the_page(amp: str) -> None:
    """News engines list a story's AMP copy (Google's AMP cache, `?amp=1`) where others list
    the publisher's page: one story, one result."""
    plain = canonical_key("https://www.example.com/news/story")
    if "outputType" in amp:
        plain = canonical_key("https://www.example.com/news/story?outputType=amp")
    assert canonical_key(amp) == plain


def test_an_amp_html_copy_is_the_page() -> None:
    """The AMP convention names a page's copy `<page>.amp.html`: one story, one result, the
    page's own address shown."""
    page = "https://www.example.com/news/2024/story.html"
    copy = "https://www.example.com/news/2024/story.amp.html"
    assert canonical_key(copy) == canonical_key(page)
    assert is_copy(copy)
    assert not is_copy(page)
    index_copy = "https://example.com/news/index.amp.html"
    assert canonical_key(index_copy) == canonical_key("https://example.com/news/")


@pytest.mark.parametrize(
    "shared",
    [
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&feature=share",
        "https://youtube.com/watch?feature=youtu.be&v=dQw4w9WgXcQ",
        "https://m.youtube.com/watch?v=dQw4w9WgXcQ&si=Ab12Cd34&feature=shared",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&ab_channel=RickAstley",
        # A link the simple pattern does not read (a fragment, an escape): parsed, the same.
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&feature=share#comments",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=Ab%2B12",
    ],
)
def test_youtubes_share_parameters_are_one_video(shared: str) -> None:
    """YouTube's `feature=`, `si=` and `ab_channel=` say how a link was shared, never which
    video it plays; another video, or the video in a playlist, stays apart."""
    video = canonical_key("https://www.youtube.com/watch?v=dQw4w9WgXcQ")
    assert canonical_key(shared) == video
    assert canonical_key("https://www.youtube.com/watch?v=other&feature=share") != video
    assert canonical_key("https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PL1") != video


@pytest.mark.parametrize(
    "shared",
    [
        "https://youtu.be/dQw4w9WgXcQ?si=Ab12Cd34",  # the share button's own link
        "https://youtu.be/dQw4w9WgXcQ?feature=shared",
    ],
)
def test_youtubes_short_share_links_drop_their_share_parameters(shared: str) -> None:
    """The share button gives `youtu.be/<id>?si=...`, a new `si` each time: two shares of one
    video are one result."""
    assert canonical_key(shared) == canonical_key("https://youtu.be/dQw4w9WgXcQ")
    assert canonical_key(shared) == canonical_key("https://youtu.be/dQw4w9WgXcQ?si=Zz99Yy88")


@pytest.mark.parametrize(
    "doubled",
    [
        "https://example.com/docs//guide",
        "https://example.com//docs/guide",
        "http://example.com/docs///guide/",
    ],
)
def test_repeated_slashes_in_a_path_are_one(doubled: str) -> None:
    """A site's template may write `/docs//guide`; the server sends `/docs/guide`."""
    assert canonical_key(doubled) == canonical_key("https://example.com/docs/guide")
    assert canonical_key(doubled + "?q=%C3%A9#top") == canonical_key(
        "https://example.com/docs/guide?q=é"
    )


def test_an_amp_cache_link_keeps_the_query_of_the_page_it_copies() -> None:
    """Two AMP copies of two pages (`?id=1`, `?id=2`) are two results, each the page it copies."""
    cache = "https://news-example-com.cdn.ampproject.org/c/s/news.example.com/article"
    first = canonical_key(f"{cache}?id=1")
    assert first == canonical_key("https://news.example.com/article?id=1")
    assert first != canonical_key(f"{cache}?id=2")


@pytest.mark.parametrize(
    "copy",
    [
        "https://www.example.com/story?usqp=mq331AQ",  # how the AMP cache served it
        "https://www.example.com/story?amp=1",
        "https://m.example.com/story",
        "https://www-example-com.cdn.ampproject.org/c/s/www.example.com/story",
    ],
)
def test_an_amp_or_mobile_address_is_a_copy(copy: str) -> None:
    assert is_copy(copy)


@pytest.mark.parametrize(
    "page",
    [
        "https://example.com/story",
        "https://www.example.com/story",
        "https://www.example.com/caf%C3%A9",  # parsed, not read by the simple pattern
        "https://www.Example.com/Docs#top",
    ],
)
def test_a_pages_own_address_is_no_copy(page: str) -> None:
    """`www.` is the site itself, however the rest of the link is written."""
    assert not is_copy(page)


def test_a_hash_route_is_a_page() -> None:
    """Hash-routed sites (docsify, many single-page apps) name a page `#/path`, as `#!/path`
    does: two routes are two pages, and neither is the site's front page."""
    config = canonical_key("https://docsify.js.org/#/configuration")
    assert config != canonical_key("https://docsify.js.org/#/quickstart")
    assert config != canonical_key("https://docsify.js.org/")
    assert config == canonical_key("http://www.docsify.js.org/#/configuration")
    # An anchor on a page is still the page.
    assert canonical_key("https://docsify.js.org/#section") == canonical_key(
        "https://docsify.js.org/"
    )
    # The first route is the front page.
    for front in ("https://docsify.js.org/#/", "https://docsify.js.org/#!/"):
        assert canonical_key(front) == canonical_key("https://docsify.js.org/")


@pytest.mark.parametrize(
    "url",
    [
        "https://arxiv.org/abs/1706.03762",
        "http://arxiv.org/abs/1706.03762v5",
        "https://arxiv.org/abs/1706.03762v1",
        "https://arxiv.org/pdf/1706.03762",
        "https://arxiv.org/pdf/1706.03762v7.pdf",
        "https://arxiv.org/html/1706.03762v7",
        "https://export.arxiv.org/abs/1706.03762",
        "https://www.arxiv.org/abs/1706.03762/",
    ],
)
def test_arxiv_links_to_one_paper_share_a_key(url: str) -> None:
    """Web engines list a paper's abstract page, its PDF, its HTML and a version of either
    (the arXiv engine gives `http://arxiv.org/abs/<id>v<n>`): one paper, one result."""
    assert canonical_key(url) == canonical_key("https://arxiv.org/abs/1706.03762")


def test_an_old_arxiv_identifier_is_one_paper_in_either_letter_case() -> None:
    """`math.AG/0601001` (its subject class in capitals, as arXiv prints it) is the paper
    another engine links as `math.ag/0601001v2`."""
    assert canonical_key("https://arxiv.org/abs/math.AG/0601001") == canonical_key(
        "https://arxiv.org/pdf/math.ag/0601001v2"
    )


def test_different_arxiv_papers_stay_apart() -> None:
    assert canonical_key("https://arxiv.org/abs/1706.03762") != canonical_key(
        "https://arxiv.org/abs/1706.03763"
    )
    assert canonical_key("https://arxiv.org/pdf/hep-th/9901001") != canonical_key(
        "https://arxiv.org/pdf/hep-th/9901002"
    )
    assert canonical_key("https://arxiv.org/abs/1706.03762") != canonical_key(
        "https://arxiv.org/list/cs.CL/recent"
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://doi.org/10.1038/nature14539",
        "http://doi.org/10.1038/nature14539",
        "https://dx.doi.org/10.1038/nature14539",
        "http://dx.doi.org/10.1038/NATURE14539",
        "https://doi.org/10.1038/Nature14539",
    ],
)
def test_doi_links_share_a_key(url: str) -> None:
    """A DOI is case-insensitive, and doi.org and dx.doi.org resolve it alike."""
    assert canonical_key(url) == canonical_key("https://doi.org/10.1038/nature14539")


def test_different_dois_stay_apart() -> None:
    assert canonical_key("https://doi.org/10.1038/nature14539") != canonical_key(
        "https://doi.org/10.1038/nature14540"
    )


def test_an_index_page_is_its_directory() -> None:
    """`/docs/3/index.html` is what a server sends for `/docs/3/`: engines list either."""
    assert canonical_key("https://docs.python.org/3/index.html") == canonical_key(
        "https://docs.python.org/3/"
    )
    assert canonical_key("http://example.com/index.htm") == canonical_key("https://example.com")
    assert canonical_key("https://example.com/a/index.html") != canonical_key(
        "https://example.com/a/index.php"
    )


_ODD_URL = st.tuples(
    st.sampled_from(["http://", "https://", "HTTPS://"]),
    st.sampled_from(["", "www.", "m.", "mobile.", "en.m.", "xn--bcher-kva.", "dx."]),
    st.sampled_from(["example.com", "doi.org", "arxiv.org", "e.de:80", "[::1]:8080"]),
    st.lists(
        st.sampled_from(
            [
                *("a", "Z", "~", "%7e", "%7E", "%2F", "%C3%A9", "é", "(", "%28", "index.html"),
                *("abs", "pdf", "1706.03762v2", "10.1038", "NATURE1", "/", "amp", ":", "@"),
            ]
        ),
        max_size=6,
    ).map("".join),
    st.sampled_from(["", "?b=2&a=1", "?utm_source=x", "?amp=1", "?q=%7E", "?v=a+b"]),
    st.sampled_from(["", "#top", "#!/r", "#/r"]),
)


@given(_ODD_URL)
@settings(max_examples=400, deadline=None)
@example(("http://", "", "example.com", "//index.html", "", ""))  # found by a longer run
@example(("http://", "", "example.com", "/a/index.html/index.html", "", ""))
def test_canonicalising_a_key_changes_nothing(parts: tuple[str, ...]) -> None:
    """A key is its own canonical form: normalising twice is normalising once."""
    key = canonical_key("".join(parts))
    assert canonical_key(key) == key
