"""The native chunk table (`chunk_table.c`): the same parts and terms as the term cache read in
Python, bounded memory, clear errors, and no references leaked.

The table is built with the compiled modules (`setup.py`, WEBSEARCH_MCP_COMPILE=1):
`tests/ranking/test_compiled.py` builds them and runs these tests, and every other ranking test,
on that build. In a plain tree they skip."""

from __future__ import annotations

import contextlib
import string
import sys
from collections.abc import Iterator
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing.native import native_module
from websearch_mcp.ranking import tokens

ChunkTable = native_module("websearch_mcp.ranking.chunk_table").ChunkTable


def python_read(text: str, cache: tokens._TermCache) -> tuple[list[tokens.Terms], set[str]]:
    """What `tokens.read` does without the table."""
    parts = [cache[chunk] for chunk in tokens._chunks(text)]
    every = set(chain.from_iterable(parts))
    for compound in every & cache.compounds:
        every.update(cache.parts[compound])
    return parts, every


@contextlib.contextmanager
def term_cache() -> Iterator[tokens._TermCache]:
    """A new term cache as `tokens._TERMS`, where new chunks register their compounds."""
    saved, tokens._TERMS = tokens._TERMS, tokens._TermCache()
    try:
        yield tokens._TERMS
    finally:
        tokens._TERMS = saved


class Echo(dict[bytes, tuple[str, ...]]):
    """A term cache that asks for every chunk (it remembers none) and knows no compounds."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[bytes] = []
        self.parts: dict[str, tuple[str, ...]] = {}

    def __missing__(self, chunk: bytes) -> tuple[str, ...]:
        self.asked.append(chunk)
        return (chunk.decode(),)


# ASCII with what matters to chunking: separators of every kind, the joiners a token keeps
# inside (node.js, c++, it's), capitals, digits, and chunks longer than the table's buffer.
# Slugs too: letter words joined by hyphens, with stop words, capitals, digits, empty words.
_PIECES = st.sampled_from(
    ["fts5_virtual", "Node.js", "C++", "it's", "boundary-layer", "gpt-4o", "ORA-00942", "the",
     "Studies", "a-b-c", "x" * 64, "y" * 65, "z" * 200, "--", "...", "'", "\t", "\n", "\x0b",
     "\x0c", "\r", "\x00", "\x7f", " ", "Boundary-Layer-Studies", "the-layer", "layer-",
     "-layer", "layer--flow", "web-2-layer", "flow-layer_x", "layer-flow-" + "x" * 60]
)  # fmt: skip
_ASCII = st.lists(
    st.one_of(_PIECES, st.text(alphabet=string.printable + "\x00\x7f", max_size=12)),
    max_size=20,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_ASCII, min_size=1, max_size=8), st.integers(min_value=1, max_value=40), st.booleans()
)
def test_the_table_reads_what_the_cache_reads(texts: list[str], limit: int, slugs: bool) -> None:
    """Read twice (the second time from the table), with a table that fills up, reading slugs
    from their words or not: the parts are the cache's own tuples, in order, and the set holds
    their terms and compounds' parts."""
    table = ChunkTable(tokens._BYTE_TABLE, limit, slugs=slugs)
    with term_cache() as cache:
        for text in texts * 2:
            parts, every = table.read(text, cache)
            expected_parts, expected_every = python_read(text, cache)
            assert parts == expected_parts
            assert all(a is b for a, b in zip(parts, expected_parts, strict=True))
            assert every == expected_every
            assert len(table) <= limit


def test_compounds_bring_their_parts_from_the_table_too() -> None:
    table = ChunkTable(tokens._BYTE_TABLE, 10)
    with term_cache() as cache:
        for _ in range(2):  # looked up in the cache, then found in the table
            parts, every = table.read("Use fts5_virtual, node.js and c++", cache)
            assert parts == [("use",), ("fts5_virtual",), ("node.js",), (), ("c++",)]
            compounds = {"fts5_virtual", "node.js", "c++"}
            assert every == {"use", *compounds, "fts5", "virtual", "node", "js"}


def test_remembered_chunks_are_not_asked_again_and_the_limit_holds() -> None:
    table, cache = ChunkTable(tokens._BYTE_TABLE, 3), Echo()
    assert table.read("One two, THREE four", cache) == (
        [("one",), ("two",), ("three",), ("four",)], {"one", "two", "three", "four"}
    )  # fmt: skip
    assert cache.asked == [b"one", b"two", b"three", b"four"]
    cache.asked.clear()
    table.read("one two three four one", cache)
    assert cache.asked == [b"four"]  # the limit left it out
    assert len(table) == 3
    table.clear()
    assert len(table) == 0
    table.read("one", cache)
    assert cache.asked == [b"four", b"one"]


def test_a_slug_of_known_words_is_read_from_them_and_stored_in_the_cache() -> None:
    table, cache = ChunkTable(tokens._BYTE_TABLE, 5, slugs=True), Echo()
    table.read("one two", cache)
    cache.asked.clear()
    assert table.read("One-Two two-one", cache) == (
        [("one", "two"), ("two", "one")], {"one", "two"}
    )  # fmt: skip
    assert cache.asked == []
    assert cache[b"one-two"] == ("one", "two") and cache[b"two-one"] == ("two", "one")
    # A word the table does not hold, or one that is not of letters: the cache reads it.
    table.read("one-three one-2 one--two -one", cache)
    assert cache.asked == [b"one-three", b"one-2", b"one--two", b"-one"]
    assert len(table) == 5  # one, two, one-two, two-one, one-three: full
    cache.asked.clear()
    table.read("two-two", cache)  # no room left: the cache's to read
    assert cache.asked == [b"two-two"]
    # Without `slugs`, every new chunk is the cache's.
    plain, cache = ChunkTable(tokens._BYTE_TABLE, 5), Echo()
    assert plain.read("one two one-two", cache)[0] == [("one",), ("two",), ("one-two",)]
    assert cache.asked == [b"one", b"two", b"one-two"]


def test_chunks_beyond_the_buffer_and_many_distinct_chunks_stay_exact() -> None:
    table = ChunkTable(tokens._BYTE_TABLE, 64)
    long_word = "Q" * 5000
    text = " ".join([long_word, *(f"w{i}" for i in range(3000)), "X" * 64, "x_y" * 30])
    with term_cache() as cache:
        assert table.read(text, cache) == python_read(text, cache)
    assert len(table) == 64


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="limit"):
        ChunkTable(tokens._BYTE_TABLE, 0)
    with pytest.raises(ValueError, match="128 bytes"):
        ChunkTable(b"short", 10)
    table = ChunkTable(tokens._BYTE_TABLE, 10)
    with pytest.raises(RuntimeError, match="once"):
        table.__init__(tokens._BYTE_TABLE, 10)  # type: ignore[misc]
    with pytest.raises(ValueError, match="ASCII"):
        table.read("café", {})
    with pytest.raises(TypeError, match="str"):
        table.read(b"bytes", {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text and a term cache"):
        table.read("text")  # type: ignore[call-arg]
    with pytest.raises(KeyError):
        table.read("unknown", {})
    with pytest.raises(TypeError, match="gave list for a chunk, not a tuple"):
        table.read("word", {b"word": ["word"]})  # type: ignore[dict-item]
    with pytest.raises(AttributeError, match="parts"):
        table.read("word", {b"word": ("word",)})

    class Parts(dict[bytes, tuple[str, ...]]):
        parts: object = None

    with pytest.raises(TypeError, match="parts must be a dict"):
        table.read("word", Parts({b"word": ("word",)}))
    Parts.parts = {"word": ["w"]}
    with pytest.raises(TypeError, match="parts must be tuples"):
        table.read("word", Parts({b"word": ("word",)}))
    # After the errors the table still works, and remembered nothing it could not read.
    assert len(table) == 0
    assert table.read("word", Echo()) == ([("word",)], {"word"})


def test_no_reference_is_leaked_by_reading_or_clearing() -> None:
    table = ChunkTable(tokens._BYTE_TABLE, 100)
    text = "Read the same words again: fts5_virtual tables, boundary-layer studies."
    with term_cache() as cache:
        table.read(text, cache)
        held = [cache[chunk] for chunk in tokens._chunks(text)]
        held.append(cache.parts["fts5_virtual"])

        def counts() -> list[int]:
            # Chunks without compounds have None for their parts.
            return [*map(sys.getrefcount, held), sys.getrefcount(text), sys.getrefcount(None)]

        before = counts()
        for _ in range(1000):
            table.read(text, cache)
        assert counts() == before
        word = cache[b"words"]
        remembered = sys.getrefcount(word)
        table.clear()
        assert sys.getrefcount(word) == remembered - 1


def test_a_new_generation_of_the_term_cache_clears_its_table() -> None:
    cache = tokens._TermCache(4)
    saved, tokens._TERMS = tokens._TERMS, cache
    try:
        tokens.read("fts5_virtual tables a1 b2")
        assert cache.native is not None and len(cache.native) == 4
        tokens.read("c3 d4")  # the first generation was full: this starts the second
        assert len(cache.native) == 2
        assert tokens.read("fts5_virtual")[1] == {"fts5_virtual", "fts5", "virtual"}
    finally:
        tokens._TERMS = saved


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable + "\x00\x1c\x1f\x7f", max_size=80))
def test_whitespace_in_the_fold_table_separates_as_bytes_split_does(text: str) -> None:
    """With a fold table that keeps every byte but NUL, chunks are those of `bytes.split()`:
    the six ASCII whitespace bytes separate, nothing else does."""
    fold = b" " + bytes(range(1, 256))
    parts, _ = ChunkTable(fold, 50).read(text, Echo())
    assert parts == [(chunk.decode(),) for chunk in text.encode().translate(fold).split()]


def test_a_fold_table_that_keeps_nul_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        ChunkTable(bytes(range(256)), 10)
