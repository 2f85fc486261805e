"""Text that UTF-8 can carry: surrogate halves made whole.

A half of a UTF-16 surrogate pair is no character, and neither UTF-8 nor JSON can carry one:
an answer holding one cannot be sent or cached. They come from JSON escapes (an API that cut a
string between the halves of an emoji: `"\\ud83d"`), broken PDF fonts and readers.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """`text` with surrogate halves made whole: a pair becomes its character, a half alone
    U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_data(value: Any) -> Any:
    """Decoded JSON with every string, keys included, `well_formed`."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [well_formed_data(item) for item in value]
    if isinstance(value, dict):
        return {well_formed(key): well_formed_data(item) for key, item in value.items()}
    return value
