"""The native chunk table (`chunk_table.c`): the same parts and terms as the term cache read in
Python, bounded memory, clear errors, and no references leaked.

The table is built with the compiled modules (`setup.py`, WEBSEARCH_MCP_COMPILE=1):
`tests/ranking/test_compiled.py` builds them and runs these tests, and every other ranking test,
on that build. In a plain tree they skip."""

from __future__ import annotations

import contextlib
import gc
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
    """A term cache that asks for every chunk (it remembers none): a chunk is its one term.
    Only the table registers compounds in it; `make_room` counts the times it is asked to."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[bytes] = []
        self.parts: dict[str, tuple[str, ...]] = {}
        self.compounds: set[str] = set()
        self.rooms = 0

    def make_room(self) -> None:
        self.rooms += 1

    def __missing__(self, chunk: bytes) -> tuple[str, ...]:
        self.asked.append(chunk)
        return (chunk.decode(),)


# ASCII with what matters to chunking: separators of every kind, the joiners a token keeps
# inside (node.js, c++, it's), capitals, digits, and chunks longer than the table's buffer.
# Chunks of words too: letter words joined by hyphens or underscores, after underscores, before
# dots, with stop words, single letters, capitals, digits, empty words, mixed joiners.
_PIECES = st.sampled_from(
    ["fts5_virtual", "Node.js", "C++", "it's", "boundary-layer", "gpt-4o", "ORA-00942", "the",
     "Studies", "a-b-c", "x" * 64, "y" * 65, "z" * 200, "--", "...", "'", "\t", "\n", "\x0b",
     "\x0c", "\r", "\x00", "\x7f", " ", "Boundary-Layer-Studies", "the-layer", "layer-",
     "-layer", "layer--flow", "web-2-layer", "flow-layer_x", "layer-flow-" + "x" * 60,
     "List_Layer_Studies", "_regex_layer", "__init__", "a_b", "the_of", "layer_", "_",
     "layer__flow", "layer_2", "Postgres.", "layer_flow.", "studies..", "_layer-flow", "_layer.",
     "layer.flow", "layer_flow-studies", "x_" * 40]
)  # fmt: skip
# The words of the pieces, read first or not: a chunk is read from its words once they are known.
_WORDS = "layer flow studies regex list init the of a b x y z"
# Chunks of those words: joined by hyphens or underscores, after underscores, before dots.
_JOINED = st.builds(
    "{}{}{} ".format,
    st.sampled_from(["", "_", "__", " _"]),
    st.builds(
        str.join,
        st.sampled_from(["-", "_", "_", "--"]),
        st.lists(st.sampled_from([*_WORDS.split(), "Layer", "gpu", "2"]), min_size=1, max_size=4),
    ),
    st.sampled_from(["", "", ".", "..", "_"]),
)
_ASCII = st.lists(
    st.one_of(_PIECES, _JOINED, st.text(alphabet=string.printable + "\x00\x7f", max_size=12)),
    max_size=20,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_ASCII, min_size=1, max_size=8),
    st.integers(min_value=1, max_value=40),
    st.booleans(),
    st.booleans(),
)
def test_the_table_reads_what_the_cache_reads(
    texts: list[str], limit: int, from_words: bool, words_first: bool
) -> None:
    """Read twice (the second time from the table), with a table that fills up, reading chunks
    of known words from them or not: the same parts, set of terms and registered compounds as a
    term cache alone reads, and the parts are the cache's own tuples."""
    texts = [_WORDS, *texts] if words_first else texts
    with term_cache() as alone:
        expected = [python_read(text, alone) for text in texts * 2]
        compounds = dict(alone.parts)
    table = ChunkTable(tokens._BYTE_TABLE, limit, from_words=from_words)
    with term_cache() as cache:
        for text, (expected_parts, expected_every) in zip(texts * 2, expected, strict=True):
            parts, every = table.read(text, cache)
            assert parts == expected_parts
            cached = [cache[chunk] for chunk in tokens._chunks(text)]
            assert all(a is b for a, b in zip(parts, cached, strict=True))
            assert every == expected_every
            assert len(table) <= limit
        assert cache.parts == compounds and cache.compounds == set(compounds)


def test_chunks_met_again_in_a_text_are_read_and_the_result_is_not_walked_by_the_collector() -> (
    None
):
    """A chunk repeated within a text, and the same text read again, with the table holding
    its chunks: every time the same parts and set (compound parts included) as Python reads.
    Strings and the cache's tuples of them hold no cycle: the collector need not walk them."""
    text = "fts5_virtual tables\nfts5_virtual tables and more tables, fts5_virtual"
    table = ChunkTable(tokens._BYTE_TABLE, 100, from_words=True)
    with term_cache() as cache:
        expected = python_read(text, cache)
        assert {"fts5_virtual", "fts5", "virtual"} <= expected[1]
        for _ in range(3):
            parts, every = table.read(text, cache)
            assert (parts, every) == expected
            assert not gc.is_tracked(parts) and not gc.is_tracked(every)


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
    table, cache = ChunkTable(tokens._BYTE_TABLE, 5, from_words=True), Echo()
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
    # Without `from_words`, every new chunk is the cache's.
    plain, cache = ChunkTable(tokens._BYTE_TABLE, 5), Echo()
    assert plain.read("one two one-two", cache)[0] == [("one",), ("two",), ("one-two",)]
    assert cache.asked == [b"one", b"two", b"one-two"]


def test_a_compound_of_known_words_is_one_term_with_its_words_as_parts() -> None:
    table, cache = ChunkTable(tokens._BYTE_TABLE, 20, from_words=True), Echo()
    cache[b"the"] = cache[b"of"] = ()  # stop words
    table.read("list gpu versions the of", cache)
    cache.asked.clear()
    parts, every = table.read("List_GPU_versions _gpu_list the_of gpu.. of_gpu.", cache)
    assert cache.asked == []
    assert parts == [("list_gpu_versions",), ("gpu_list",), ("the_of",), ("gpu",), ("of_gpu",)]
    # The words' terms are the compounds' parts: none for "the_of", whose words are stop words.
    assert cache.parts == {
        "list_gpu_versions": ("list", "gpu", "versions"),
        "gpu_list": ("gpu", "list"),
        "of_gpu": ("gpu",),
    }
    assert cache.compounds == {"list_gpu_versions", "gpu_list", "of_gpu"}
    assert every == {"list_gpu_versions", "gpu_list", "the_of", "gpu", "of_gpu", "list",
                     "versions"}  # fmt: skip
    assert cache[b"_gpu_list"] == ("gpu_list",) and cache[b"gpu.."] == ("gpu",)
    # Read again from the table, parts and all.
    assert table.read("_gpu_list", cache) == ([("gpu_list",)], {"gpu_list", "gpu", "list"})
    # Mixed joiners, digits, a joiner last or doubled, an unknown word: the cache reads them.
    table.read("gpu_list-of gpu_2 gpu_ gpu__list gpu_cpu gpu.list", cache)
    assert cache.asked == [b"gpu_list-of", b"gpu_2", b"gpu_", b"gpu__list", b"gpu_cpu",
                           b"gpu.list"]  # fmt: skip


class _Registry(Echo):
    """An echo whose compounds are not a set."""

    def __init__(self) -> None:
        super().__init__()
        self.compounds: list[str] = []  # type: ignore[assignment]


def test_a_term_cache_without_a_set_of_compounds_is_a_clear_error() -> None:
    table, cache = ChunkTable(tokens._BYTE_TABLE, 20, from_words=True), _Registry()
    table.read("gpu list", cache)
    with pytest.raises(TypeError, match="compounds must be a set"):
        table.read("gpu_list", cache)


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
    assert table.read("café", {}) is None  # not ASCII: the caller's to read
    with pytest.raises(TypeError, match="term cache that is a dict"):
        table.read("word", ())  # type: ignore[arg-type]
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


def test_a_full_cache_is_asked_to_make_room_before_a_text_is_read() -> None:
    table, cache = ChunkTable(tokens._BYTE_TABLE, 2, from_words=True), Echo()
    table.read("one two", cache)
    assert cache.rooms == 0
    cache[b"one"], cache[b"two"] = ("one",), ("two",)  # as full as the limit
    table.read("one two three", cache)
    assert cache.rooms == 1  # once, before the text: not per chunk
    terms = tokens._TermCache(1)  # the real cache: its new generation clears the table too
    native = terms.native
    assert native is not None
    native.read("alpha", terms)
    assert len(native) == 1 and len(terms) == 1
    native.read("beta", terms)
    assert dict(terms) == {b"beta": ("beta",)} and len(native) == 1
