"""The native chunk table (`chunk_table.c`): the same parts and terms as the term cache read in
Python, bounded memory, clear errors, and no references leaked.

The table is built with the compiled modules (`setup.py`, WEBSEARCH_MCP_COMPILE=1):
`tests/ranking/test_compiled.py` builds them and runs these tests, and every other ranking test,
on that build. In a plain tree they skip."""

from __future__ import annotations

import string
import sys
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.ranking import tokens

if tokens.NATIVE_TABLE is None:
    pytest.skip(
        "the native chunk table is built only with the compiled modules "
        "(WEBSEARCH_MCP_COMPILE=1); tests/ranking/test_compiled.py runs these on that build",
        allow_module_level=True,
    )
ChunkTable = tokens.NATIVE_TABLE


def python_read(text: str, cache: tokens._TermCache) -> tuple[list[tokens.Terms], set[str]]:
    """What `tokens.read` does without the table (compounds' parts aside)."""
    parts = [cache[chunk] for chunk in tokens._chunks(text)]
    return parts, set(chain.from_iterable(parts))


# ASCII with what matters to chunking: separators of every kind, the joiners a token keeps
# inside (node.js, c++, it's), capitals, digits, and chunks longer than the table's buffer.
_PIECES = st.sampled_from(
    ["fts5_virtual", "Node.js", "C++", "it's", "boundary-layer", "gpt-4o", "ORA-00942", "the",
     "Studies", "a-b-c", "x" * 64, "y" * 65, "z" * 200, "--", "...", "'", "\t", "\n", "\x0b",
     "\x0c", "\r", "\x00", "\x7f", " "]
)  # fmt: skip
_ASCII = st.lists(
    st.one_of(_PIECES, st.text(alphabet=string.printable + "\x00\x7f", max_size=12)),
    max_size=20,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ASCII, min_size=1, max_size=8), st.integers(min_value=1, max_value=40))
def test_the_table_reads_what_the_cache_reads(texts: list[str], limit: int) -> None:
    """Read twice (the second time from the table), with a table that fills up: the parts are
    the cache's own tuples, in order, and the set is their union, in the same order."""
    cache = tokens._TermCache()
    table = ChunkTable(tokens._BYTE_TABLE, limit)
    for text in texts * 2:
        parts, every = table.read(text, cache)
        expected_parts, expected_every = python_read(text, cache)
        assert parts == expected_parts
        assert all(a is b for a, b in zip(parts, expected_parts, strict=True))
        assert every == expected_every and list(every) == list(expected_every)
        assert len(table) <= limit


def test_remembered_chunks_are_not_asked_again_and_the_limit_holds() -> None:
    asked: list[bytes] = []

    class Counting(dict[bytes, tuple[str, ...]]):
        """Asked for every chunk: it remembers nothing itself."""

        def __missing__(self, chunk: bytes) -> tuple[str, ...]:
            asked.append(chunk)
            return (chunk.decode(),)

    table, cache = ChunkTable(tokens._BYTE_TABLE, 3), Counting()
    assert table.read("One two, THREE four", cache) == (
        [("one",), ("two",), ("three",), ("four",)], {"one", "two", "three", "four"}
    )  # fmt: skip
    assert asked == [b"one", b"two", b"three", b"four"]
    asked.clear()
    table.read("one two three four one", cache)
    assert asked == [b"four"]  # the limit left it out
    assert len(table) == 3
    table.clear()
    assert len(table) == 0
    table.read("one", cache)
    assert asked == [b"four", b"one"]


def test_chunks_beyond_the_buffer_and_many_distinct_chunks_stay_exact() -> None:
    cache = tokens._TermCache()
    table = ChunkTable(tokens._BYTE_TABLE, 64)
    long_word = "Q" * 5000
    text = " ".join([long_word, *(f"w{i}" for i in range(3000)), "X" * 64, "x" * 65])
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
    # After the errors the table still works.
    assert table.read("word", {b"word": ("word",)}) == ([("word",)], {"word"})


def test_no_reference_is_leaked_by_reading_or_clearing() -> None:
    cache = tokens._TermCache()
    table = ChunkTable(tokens._BYTE_TABLE, 100)
    text = "Read the same words again: fts5_virtual tables, boundary-layer studies."
    table.read(text, cache)
    held = [cache[chunk] for chunk in tokens._chunks(text)]
    before = [sys.getrefcount(terms) for terms in held], sys.getrefcount(text)
    for _ in range(1000):
        table.read(text, cache)
    assert ([sys.getrefcount(terms) for terms in held], sys.getrefcount(text)) == before
    table.clear()
    after_clear = [sys.getrefcount(terms) for terms in held]
    assert all(a < b for a, b in zip(after_clear, before[0], strict=True))


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

    class Echo(dict[bytes, tuple[str, ...]]):
        def __missing__(self, chunk: bytes) -> tuple[str, ...]:
            return (chunk.decode(),)

    fold = b" " + bytes(range(1, 256))
    parts, _ = ChunkTable(fold, 50).read(text, Echo())
    assert parts == [(chunk.decode(),) for chunk in text.encode().translate(fold).split()]


def test_a_fold_table_that_keeps_nul_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        ChunkTable(bytes(range(256)), 10)
