"""Types of the compiled `term_overlap` module (term_overlap.c)."""

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

def shared_counts(texts: Sequence[AbstractSet[str]], /) -> list[int]: ...
