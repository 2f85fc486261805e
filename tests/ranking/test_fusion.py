"""Merging by canonical URL and weighted RRF, computed by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.dates import parse_date, period_end
from websearch_mcp.models import Hit
from websearch_mcp.ranking.fusion import merge, normalised_rrf, rrf, rrf_best


def hit(url: str, rank: int, engine: str, **extra: object) -> Hit:
    fields: dict[str, object] = {"title": f"t{rank}", "snippet": "s"} | extra
    return Hit(url=url, rank=rank, engine=engine, **fields)  # type: ignore[arg-type]


def test_rrf_by_hand() -> None:
    assert rrf({"a": 1}, {}, 60) == pytest.approx(1 / 61)
    assert rrf({"a": 1, "b": 3}, {}, 60) == pytest.approx(1 / 61 + 1 / 63)
    assert rrf({"a": 2, "b": 5}, {"a": 2.0, "b": 0.5}, 60) == pytest.approx(2 / 62 + 0.5 / 65)
    assert rrf({"a": 1}, {"a": 0.0}, 60) == 0.0


def test_normalisation_by_best_possible() -> None:
    best = rrf_best(["a", "b", "c"], {}, 60)
    assert best == pytest.approx(3 / 61)
    assert normalised_rrf({"a": 1, "b": 1, "c": 1}, {}, 60, best) == pytest.approx(1.0)
    assert normalised_rrf({"a": 1}, {}, 60, best) == pytest.approx(1 / 3)
    assert normalised_rrf({"b": 4}, {}, 60, best) == pytest.approx((1 / 64) / (3 / 61))
    weights = {"a": 3.0, "b": 1.0}
    best_w = rrf_best(["a", "b"], weights, 60)
    assert normalised_rrf({"a": 1}, weights, 60, best_w) == pytest.approx(0.75)


def test_normalised_rrf_is_zero_without_any_weight() -> None:
    assert normalised_rrf({"a": 1}, {"a": 0.0}, 60, rrf_best(["a"], {"a": 0.0}, 60)) == 0.0


def test_merge_counts_each_engine_once_with_its_best_rank() -> None:
    merged = merge(
        {
            "bing": [hit("https://x.com/a", 1, "bing"), hit("http://www.x.com/a/", 4, "bing")],
            "ddg": [
                hit("https://x.com/b", 1, "ddg"),
                hit("https://x.com/a?utm_source=d", 2, "ddg"),
            ],
        }
    )
    by_key = {m.key: m for m in merged}
    a = by_key["https://x.com/a"]
    assert a.ranks == {"bing": 1, "ddg": 2}
    assert a.engines == ["bing", "ddg"]
    assert len(merged) == 2
    assert by_key["https://x.com/b"].ranks == {"ddg": 1}


def test_merge_keeps_longest_snippet_best_title_earliest_date_and_https_url() -> None:
    merged = merge(
        {
            "e1": [
                hit("http://x.com/p", 2, "e1", title="", snippet="short", published="2024-03-01")
            ],
            "e2": [
                hit(
                    "https://www.x.com/p?utm_source=y",
                    1,
                    "e2",
                    title="Best title",
                    snippet="a much longer snippet",
                    published="2024-05-01T10:00:00Z",
                )
            ],
            "e3": [hit("https://x.com/p", 3, "e3", title="Other", published="2023-12-31")],
        }
    )
    (item,) = merged
    assert item.title == "Best title"  # the best-ranked non-empty title
    assert item.snippet == "a much longer snippet"
    assert item.published == "2023-12-31"
    assert item.url == "https://x.com/p"  # https, then the shortest: no tracking
    assert item.engines == ["e2", "e1", "e3"]


def test_merge_uses_position_when_an_engine_gives_no_rank() -> None:
    (item,) = merge({"e": [hit("https://x.com/a", 1, "e"), hit("https://y.com", 0, "e")]})[1:]
    assert item.ranks == {"e": 2}


def _chosen_as_specified(hits: list[tuple[int, str, Hit]]) -> tuple[object, ...]:
    """What `merge` keeps for one URL, read straight off its docstring: the best-ranked
    title an engine gave (not a blank one, nor the URL standing for none; else that URL), the
    first longest snippet, an https URL before an http one and then the shortest (ties: the
    better rank), the earliest parseable date (else the first date text) of those that do not
    just name the day, month or year of another."""
    ordered = sorted(hits)
    titled = [h for _, _, h in ordered if h.title.strip()]
    title = next((h.title for h in titled if h.title != h.url), titled[0].title if titled else "")
    snippet = max([h.snippet for _, _, h in ordered], key=len)
    url = min(ordered, key=lambda t: (not t[2].url.startswith("https:"), len(t[2].url), t[0]))
    dated = [(d, h.published) for _, _, h in ordered if (d := parse_date(h.published))]
    # A bare date covering a more precise one is its less precise form.
    spans = [(d, period_end(text or "", d)) for d, text in dated]
    uncovered = [
        (d, text)
        for (d, text), (_, end) in zip(dated, spans, strict=True)
        if end is None or not any(d <= e < end and (f is None or f - e < end - d) for e, f in spans)
    ]
    if uncovered:
        published_at, published = min(uncovered, key=lambda t: t[0])
    else:
        published_at = None
        published = next((h.published for _, _, h in ordered if h.published), None)
    return [e for _, e, _ in ordered], title, snippet, url[2].url, published or None, published_at


_VARIANTS = st.sampled_from(
    [
        "https://x.com/p",
        "https://X.com/p",  # as long as the first
        "http://x.com/p",
        "https://www.x.com/p/",
        "http://www.x.com/p?utm_source=a",
    ]
)
_DATES = st.sampled_from(
    [
        *(None, "", " ", "soon", "2024", "2024-03", "2024-03-01", "2024-02-30"),
        *("2023-12-31T23:00:00Z", "2024-03-01T12:00:00Z", "2024-03-01T06:00:00+02:00"),
    ]
)
_ONE_URL = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", "e"]),
    st.tuples(
        st.integers(1, 4),
        _VARIANTS,
        # Texts of one length that differ: which one is kept shows. "url": the engine gave no
        # title, and its URL stands for one (`plain_hits`).
        st.sampled_from(["", " ", "T", "U", "url"]),
        st.sampled_from(["", "ab", "cd", "longer"]),
        _DATES,
    ),
    min_size=1,
)


@settings(max_examples=300)
@given(_ONE_URL)
def test_merge_chooses_one_urls_fields_as_specified(answers: dict[str, tuple]) -> None:
    lists = {
        engine: [
            hit(
                url,
                rank,
                engine,
                title=url if title == "url" else title,
                snippet=snippet,
                published=published,
            )
        ]
        for engine, (rank, url, title, snippet, published) in answers.items()
    }
    (item,) = merge(lists)
    assert list(item.ranks) == sorted(lists)
    engines, title, snippet, url, published, published_at = _chosen_as_specified(
        [(h.rank, e, h) for e, (h,) in lists.items()]
    )
    assert (item.engines, item.title, item.snippet, item.url) == (engines, title, snippet, url)
    assert (item.published, item.published_at) == (published, published_at)


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.sampled_from(["seconds", "milliseconds", "microseconds", "minutes"]),
    st.booleans(),
)
def test_a_naive_date_time_is_read_as_utc(moment: datetime, spec: str, date_only: bool) -> None:
    text = moment.date().isoformat() if date_only else moment.isoformat(timespec=spec)
    expected = datetime.fromisoformat(text).replace(tzinfo=UTC)
    parsed = parse_date(text)
    assert parsed == expected and parsed.tzinfo is UTC and parsed.fold == 0
    assert parsed.isoformat() == expected.isoformat()
    # An offset is kept as given.
    offset = parse_date(text + ("T00:00" if date_only else "") + "+02:00")
    assert offset is not None and offset.utcoffset() == timedelta(hours=2)


def test_a_time_given_for_a_day_another_engine_gives_bare_is_kept() -> None:
    url = "https://news.example/storm"
    for stamped_first in (True, False):
        stamp = Hit("Storm", url, "", 1, "brave", published="2024-06-03T15:00:00Z")
        day = Hit("Storm", url, "", 1, "searxng", published="2024-06-03")
        lists = {"a": [stamp], "b": [day]} if stamped_first else {"a": [day], "b": [stamp]}
        (item,) = merge(lists)
        assert item.published == "2024-06-03T15:00:00Z"
    # An earlier day is earlier whatever the precision, and a later one never wins.
    (item,) = merge({"a": [stamp], "b": [Hit("Storm", url, "", 1, "b", published="2024-06-02")]})
    assert item.published == "2024-06-02"
    (item,) = merge({"a": [stamp], "b": [Hit("Storm", url, "", 1, "b", published="2024-06-04")]})
    assert item.published == "2024-06-03T15:00:00Z"
    # A month or a year holding the date is its less precise form too.
    for coarse in ("2024-06", "2024"):
        (item,) = merge({"a": [Hit("S", url, "", 1, "a", published=coarse)], "b": [day]})
        assert item.published == "2024-06-03"
    last = Hit("S", url, "", 1, "a", published="9999-12-31")  # no day after it to name
    (item,) = merge({"a": [last], "b": [Hit("S", url, "", 1, "b", published="9999-12")]})
    assert item.published == "9999-12"


def test_a_month_never_replaces_the_first_day_of_it() -> None:
    url = "https://example.com/story"
    for first, second in (("2024-06-01", "2024-06"), ("2024-06", "2024-06-01")):
        (item,) = merge(
            {
                "a": [Hit("Storm", url, "", 1, "a", published=first)],
                "b": [Hit("Storm", url, "", 1, "b", published=second)],
            }
        )
        assert item.published == "2024-06-01"


@pytest.mark.parametrize("month", ["2024-06", "2024-12"])
def test_a_month_holds_the_day_another_engine_gives_december_too(month: str) -> None:
    url = "https://example.com/story"
    for first, second in ((month, f"{month}-15T10:00:00Z"), (f"{month}-15T10:00:00Z", month)):
        (item,) = merge(
            {
                "a": [Hit("Storm", url, "", 1, "a", published=first)],
                "b": [Hit("Storm", url, "", 1, "b", published=second)],
            }
        )
        assert item.published == f"{month}-15T10:00:00Z"


@pytest.mark.parametrize(
    ("copy", "page"),
    [
        (
            "https://m.youtube.com/watch?v=dQw4w9WgXcQ",
            "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        ),
        ("https://m.facebook.com/python/posts/1", "https://www.facebook.com/python/posts/1"),
        ("https://en.m.wikipedia.org/wiki/Asyncio", "http://en.wikipedia.org/wiki/Asyncio"),
    ],
)
def test_merge_shows_the_page_not_its_mobile_copy(copy: str, page: str) -> None:
    """Merged with the page it copies, a mobile copy is not the link shown, even ranked
    first, shorter or on https: the page is what an agent reads and cites."""
    (item,) = merge({"a": [hit(copy, 1, "a")], "b": [hit(page, 2, "b")]})
    assert item.engines == ["a", "b"]
    assert item.url == page


def test_merge_shows_the_pages_https_link_in_place_of_its_mobile_copy() -> None:
    """Among the page's own links standing for a mobile copy, https comes first, as it does
    between any two links: the better-ranked http one is not shown."""
    lists = {
        "a": [hit("https://m.example.com/a", 1, "a")],
        "b": [hit("http://example.com/a", 2, "b")],
        "c": [hit("https://www.example.com/a", 3, "c")],
    }
    (item,) = merge(lists)
    assert item.url == "https://www.example.com/a"


def test_a_muted_engine_gives_no_title_or_link_to_a_page_another_returned() -> None:
    """An engine weighted 0 moves nothing of a result another engine returned: not the title
    the other gave none of, nor the page's own link standing for the other's mobile copy."""
    lists = {
        "a": [hit("https://m.example.com/a", 1, "a", title="")],
        "b": [hit("https://example.com/a", 1, "b", title="Muted words")],
    }
    (item,) = merge(lists, muted={"b"})
    assert item.engines == ["a", "b"]
    assert (item.title, item.url) == ("", "https://m.example.com/a")
    (heard,) = merge(lists)
    assert (heard.title, heard.url) == ("Muted words", "https://example.com/a")


@pytest.mark.parametrize(
    ("shown", "other"),
    [
        ("https://xn--bcher-kva.de/katalog", "http://bücher.de/katalog"),
        ("https://example.com./docs", "http://example.com/docs"),
    ],
)
def test_merge_keeps_the_https_link_of_a_host_in_another_spelling(shown: str, other: str) -> None:
    """A host in its wire form (IDNA) or with the root's dot is the page's own address, not a
    mobile or AMP copy of it: the https link stays the one shown, not the http one."""
    (item,) = merge({"a": [hit(shown, 1, "a")], "b": [hit(other, 2, "b")]})
    assert item.url == shown
