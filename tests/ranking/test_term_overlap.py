"""The native pair counts (`term_overlap.c`): the same counts as set intersections, for any
sets of str, clear errors, and no references leaked.

The module is built with the compiled modules (`setup.py`, WEBSEARCH_MCP_COMPILE=1):
`tests/ranking/test_compiled.py` builds them and runs these tests, and every other ranking test,
on that build. In a plain tree they skip."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.native import native_module
from websearch_mcp.ranking import neighbours

shared_counts = native_module("websearch_mcp.ranking.term_overlap").shared_counts


class _Word(str):
    """A str subclass: its hash or equality could run Python code while the table holds
    borrowed references, so it is refused."""

    def __hash__(self) -> int:
        return 7


def intersected(texts: list[set[str]] | list[frozenset[str]]) -> list[int]:
    return [len(a & texts[j]) for i, a in enumerate(texts) for j in range(i + 1, len(texts))]


# Terms as equal strings that are not the same object, so equality is by value.
_TERMS = st.text(alphabet="abcé語", min_size=1, max_size=3).map(lambda t: "".join(list(t)))


@settings(max_examples=1000)
@given(st.lists(st.sets(_TERMS, max_size=40), max_size=25))
def test_counts_are_the_intersections(texts: list[set[str]]) -> None:
    assert shared_counts(texts) == intersected(texts)
    frozen = [frozenset(t) for t in texts]
    assert shared_counts(tuple(frozen)) == intersected(frozen)


def test_more_terms_than_one_word_of_bits() -> None:
    texts = [{f"w{k}" for k in range(i, i + 150)} for i in range(0, 300, 40)]
    assert shared_counts(texts) == intersected(texts)


def test_equal_strings_that_are_different_objects_are_one_term() -> None:
    a = "".join(["neigh", "bour"])
    b = "".join(["neig", "hbour"])
    assert a is not b
    assert shared_counts([{a}, {b}]) == [1]


def test_no_texts_or_one_has_no_pairs() -> None:
    assert shared_counts([]) == []
    assert shared_counts([{"a"}]) == []


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
        shared_counts(texts)  # type: ignore[arg-type]


def test_no_references_are_leaked() -> None:
    term = "".join(["ter", "m"])
    texts = [{term, "x"}, {term}, {"y"}]
    before = sys.getrefcount(term), sys.getrefcount(texts[0])
    for _ in range(1000):
        shared_counts(texts)
    assert (sys.getrefcount(term), sys.getrefcount(texts[0])) == before


def test_nearest_reads_the_counts() -> None:
    texts = [{"a", "b", "c"}, {"a", "b"}, {"c", "d"}, {"e"}]
    assert neighbours.nearest(texts) == [
        [(-2 / 3, 1), (-1 / 4, 2)],
        [(-2 / 3, 0)],
        [(-1 / 4, 0)],
        [],
    ]
