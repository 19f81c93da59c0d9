"""Hypothesis strategies of hostile values shared by the fuzz tests."""

from __future__ import annotations

import math

from hypothesis import strategies as st

__all__ = ["HOSTILE", "MAX_EXAMPLES", "hostile_reals"]

#: Generated inputs per fuzz test (the README quotes the total per run).
MAX_EXAMPLES = 60

#: Non-finite, signed, zero, huge and tiny real numbers, and huge integers.
hostile_reals = st.one_of(
    st.sampled_from(
        [
            math.nan,
            math.inf,
            -math.inf,
            0.0,
            -0.0,
            -1.0,
            1e308,
            -1e308,
            5e-324,
            10**400,
            -(10**400),
            0,
            -1,
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
)

#: Anything a caller might pass by mistake: hostile numbers and wrong types.
HOSTILE = st.one_of(
    hostile_reals,
    st.sampled_from([None, True, False, "1", "", "nan", b"1", [1.0], (1.0,), {}, object(), 1 + 2j]),
    st.text(max_size=5),
    st.lists(st.floats(allow_nan=True), max_size=3),
)
