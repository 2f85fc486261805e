"""`round(value, places)` without its decimal conversion.

CPython rounds a float to some places by printing it exactly in decimal and reading that back:
a few thousand instructions, where every shown score detail is rounded. Scaling by the power of
ten, taking the nearest integer and dividing back gives the same float. A half (n + 0.5 below
2**52) is itself a float and rounding is monotonic, so the scaled product lies on the same side
of every half as the exact one, or on the half itself, which is left to `round`; the nearest
integer is then the one the exact decimal rounds to, and dividing it by the power of ten gives
the correctly rounded float of that decimal, which is what `round` returns.
"""

from __future__ import annotations

import math
from typing import Final

_MOST_PLACES: Final = 6
_LARGEST: Final = 1e9  # far below 2**52: the scaled value's halves and integers are all floats


def rounded(value: float, places: int) -> float:
    """The float `round(value, places)` returns, bit for bit (the sign of a zero included)."""
    if 0 <= places <= _MOST_PLACES:
        scale = 1.0
        for _power in range(places):  # each power of ten up to 10**22 is a float: exact
            scale *= 10.0
        scaled = value * scale
        if -_LARGEST < scaled < _LARGEST:  # False for infinities and NaN
            whole = scaled // 1.0  # the floor as a float (exact here): no int made
            fraction = scaled - whole
            if fraction != 0.5:
                nearest = whole + 1.0 if fraction > 0.5 else whole
                return math.copysign(nearest / scale, value)
    return round(value, places)
