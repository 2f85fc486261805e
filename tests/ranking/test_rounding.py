"""`rounded` is `round` to the last bit: the shown scores and details do not change."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.rounding import rounded


def same(a: float, b: float) -> bool:
    """Equal floats, the sign of a zero included (NaN equals NaN)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@settings(max_examples=3000)
@given(st.floats(), st.integers(min_value=-2, max_value=9))
def test_any_float_rounds_as_round_does(value: float, places: int) -> None:
    assert same(rounded(value, places), round(value, places))


@settings(max_examples=3000)
@given(st.integers(min_value=-(10**8), max_value=10**8), st.integers(min_value=0, max_value=6))
def test_values_at_and_near_a_half_round_as_round_does(numerator: int, places: int) -> None:
    """Halves of the last place, and the floats either side of them: where scaling alone
    could pick the wrong neighbour."""
    half = (numerator + 0.5) / 10**places
    for value in (half, math.nextafter(half, math.inf), math.nextafter(half, -math.inf)):
        assert same(rounded(value, places), round(value, places))


@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [(0.12345, 4, 0.1235), (0.5, 0, 0.0), (1.5, 0, 2.0), (-0.00001, 4, -0.0), (2.675, 2, 2.67)],
)
def test_known_values(value: float, places: int, expected: float) -> None:
    assert same(rounded(value, places), expected)
    assert same(round(value, places), expected)
