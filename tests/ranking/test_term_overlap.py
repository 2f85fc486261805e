"""The native nearest texts and shared-term counts (`term_overlap.c`): the same rows and counts
as `neighbours.overlap` reads with set intersections, for any sets of str and counts, clear
errors, and no references leaked.

The module is built with the compiled modules (`setup.py`, WEBSEARCH_MCP_COMPILE=1):
`tests/ranking/test_compiled.py` builds them and runs these tests, and every other ranking test,
on that build. In a plain tree they skip."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.native import native_module
from websearch_mcp.ranking import neighbours

native_overlap = native_module("websearch_mcp.ranking.term_overlap").overlap


def native_nearest(texts: object, count: object) -> list[list[tuple[float, int]]]:
    return native_overlap(texts, count)[0]  # type: ignore[arg-type]


class _Word(str):
    """A str subclass: its hash or equality could run Python code while the table holds
    borrowed references, so it is refused."""

    def __hash__(self) -> int:
        return 7


def in_python(texts: Sequence[AbstractSet[str]], count: int) -> neighbours.Overlap:
    """`neighbours.overlap` without the native module: set intersections and sorted rows."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(neighbours, "NATIVE_OVERLAP", None)
        return neighbours.overlap(texts, count)


# Terms as equal strings that are not the same object, so equality is by value.
_TERMS = st.text(alphabet="abcé語", min_size=1, max_size=3).map(lambda t: "".join(list(t)))


@settings(max_examples=1000)
@given(st.lists(st.sets(_TERMS, max_size=40), max_size=25), st.integers(0, 30))
def test_rows_are_those_of_set_intersections(texts: list[set[str]], count: int) -> None:
    expected, counts = in_python(texts, count)
    assert native_overlap(texts, count) == (expected, counts)
    assert counts == [
        [len(a & b) if i != j else 0 for j, b in enumerate(texts)] for i, a in enumerate(texts)
    ]
    frozen = tuple(frozenset(t) for t in texts)
    assert native_overlap(frozen, count) == in_python(frozen, count)
    # Equal floats and ints: the very bits of every similarity too.
    for row, want in zip(native_nearest(texts, count), expected, strict=True):
        assert [(s.hex(), i) for s, i in row] == [(s.hex(), i) for s, i in want]


def test_more_terms_than_one_word_of_bits() -> None:
    texts = [{f"w{k}" for k in range(i, i + 150)} for i in range(0, 300, 40)]
    assert native_overlap(texts, 3) == in_python(texts, 3)


def test_ties_keep_the_lower_index_and_rows_stop_at_count() -> None:
    texts = [{"a", "b"}, {"a", "c"}, {"a", "d"}, {"a", "e"}, {"f"}]
    assert native_nearest(texts, 2) == [
        [(-1 / 3, 1), (-1 / 3, 2)],
        [(-1 / 3, 0), (-1 / 3, 2)],
        [(-1 / 3, 0), (-1 / 3, 1)],
        [(-1 / 3, 0), (-1 / 3, 1)],
        [],
    ]
    assert native_nearest(texts, 0) == [[], [], [], [], []]


def test_equal_strings_that_are_different_objects_are_one_term() -> None:
    a = "".join(["neigh", "bour"])
    b = "".join(["neig", "hbour"])
    assert a is not b
    assert native_nearest([{a}, {b}], 5) == [[(-1.0, 1)], [(-1.0, 0)]]


def test_no_texts_or_one_has_no_neighbours() -> None:
    assert native_nearest([], 5) == []
    assert native_nearest([{"a"}], 5) == [[]]


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (5, "wants a sequence of sets of str"),
        ([{"a"}, ["a"]], "wants sets of str, not list"),
        ([{"a"}, {1}], "wants sets of str, not of int"),
        ([{_Word("a"), _Word("b")}], "wants sets of str, not of _Word"),
    ],
)
def test_anything_else_is_a_clear_type_error(texts: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        native_nearest(texts, 5)  # type: ignore[arg-type]


def test_a_bad_count_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="a count of 0 or more"):
        native_nearest([{"a"}, {"a"}], -1)
    with pytest.raises(TypeError):
        native_nearest([{"a"}], "5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="takes 2 arguments"):
        native_overlap([{"a"}])  # type: ignore[call-arg]


def test_no_references_are_leaked() -> None:
    term = "".join(["ter", "m"])
    texts = [{term, "x"}, {term}, {"y"}]
    before = sys.getrefcount(term), sys.getrefcount(texts[0])
    for _ in range(1000):
        native_nearest(texts, 5)
    assert (sys.getrefcount(term), sys.getrefcount(texts[0])) == before


def test_nearest_reads_the_shared_terms() -> None:
    texts = [{"a", "b", "c"}, {"a", "b"}, {"c", "d"}, {"e"}]
    expected = [
        [(-2 / 3, 1), (-1 / 4, 2)],
        [(-2 / 3, 0)],
        [(-1 / 4, 0)],
        [],
    ]
    assert neighbours.overlap(texts)[0] == expected
    assert in_python(texts, 5)[0] == expected
