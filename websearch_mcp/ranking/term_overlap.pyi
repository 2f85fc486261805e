"""Types of the compiled `term_overlap` module (term_overlap.c)."""

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

def overlap(
    texts: Sequence[AbstractSet[str]], count: int, /
) -> tuple[list[list[tuple[float, int]]], list[list[int]]]: ...
